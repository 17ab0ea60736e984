#!/usr/bin/env node
/**
 * Where Huddle's time goes on `POST /v1/chat/completions` (not part of `npm run bench`; run it
 * by hand: `node bench/profile.mjs`, after `npx tsc -b`; about 3 minutes). Three parts, on
 * PostgreSQL (the same server as `npm run bench`, a database of its own):
 *
 * 1. A database census: Huddle talks to PostgreSQL through bench/pgcount.mjs, a counting relay,
 *    while it answers requests one at a time; per request: round trips, the SQL statements, and
 *    the time spent waiting for the database, against the request's whole latency.
 * 2. CPU per request of lighter endpoints (/healthz, /v1/models) against the completion, under
 *    load, from /proc/<pid>/stat: what the HTTP stack, authentication and the org context cost;
 *    and of the completion with the upstream's answer in 1 and in 80 chunks, in alternating
 *    rounds: what one streamed chunk costs.
 * 3. A CPU profile under load: Huddle runs with `node --cpu-prof` (straight to PostgreSQL) while
 *    autocannon drives it at 50 connections, once per mode; the samples taken under load are
 *    summarised by kind of code, by the part of Huddle they were for, and by function.
 *
 * Options: --duration S (load per mode, default 8) --requests N (census, default 200)
 * --connections N (50) --keys N (1) --payer personal|org (org) --log-level LEVEL (Huddle's
 * LOG_LEVEL, default Info) --traces on|off (on: metrics recorded and every trace exported to the
 * bench's OTLP sink, as `npm run bench` runs Huddle; unrecorded: the same, with a caller's
 * `traceparent` on every request that says not sampled; default off) --only cpu (part 3 alone) --out DIR (where the report, profile.md, and the .cpuprofile files
 * stay; default a new temporary directory, printed at the end)
 */
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Pool } from "undici"
import * as CpuProfile from "./lib/cpuprofile.mjs"
import * as Huddle from "./lib/huddle.mjs"
import * as Load from "./lib/load.mjs"
import * as Postgres from "./lib/postgres.mjs"
import * as Proc from "./lib/processes.mjs"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const serverMain = join(root, "packages/server/dist/main.js")
const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "8" },
    requests: { type: "string", default: "200" },
    connections: { type: "string", default: "50" },
    keys: { type: "string", default: "1" },
    payer: { type: "string", default: "org" },
    out: { type: "string" },
    "log-level": { type: "string", default: "Info" },
    traces: { type: "string", default: "off" },
    only: { type: "string" }
  }
})
if (!["on", "off", "unrecorded"].includes(args.traces)) throw new Error(`--traces must be on, unrecorded or off, not ${args.traces}`)
if (args.only !== undefined && args.only !== "cpu") throw new Error(`--only takes cpu, not ${args.only}`)
const out = args.out ?? mkdtempSync(join(tmpdir(), "huddle-profile-"))
mkdirSync(out, { recursive: true })
const report = []
const say = (line = "") => {
  console.log(line)
  report.push(line)
}

const watchdog = setTimeout(() => {
  console.error("[profile] time limit reached")
  Proc.stopAll().finally(() => process.exit(1))
}, 480_000)

let database
const main = async () => {
  const upstreamKey = "sk-bench-upstream"
  const upstream = await Proc.spawnReadyLine("upstream", [join(root, "bench/upstream.mjs")], join(out, "upstream.log"))
  database = await Postgres.create()
  const admin = new URL(Postgres.adminUrl())
  const counter = await Proc.spawnReadyLine("pgcount", [join(root, "bench/pgcount.mjs"), `${admin.hostname}:${admin.port || 5432}`], join(out, "pgcount.log"))
  const catalogPath = Huddle.writeCatalog(out)
  // New users start at 0: the personal payer's credits are granted to the bench's members (`setup`).
  const starterCredits = 0
  // With --traces on, Huddle exports every trace to the bench's sink (standing for a collector).
  const sink = args.traces !== "off" ? await Proc.spawnReadyLine("otlp-sink", [join(root, "bench/otlp-sink.mjs")], join(out, "otlp-sink.log")) : undefined
  const envFor = (port, databaseUrl) => ({
    ...Huddle.serverEnv({ port, databaseUrl, catalogPath, upstreamBaseUrl: upstream.baseUrl, upstreamKey, starterCredits, otlpUrl: sink?.url, observability: sink ? "on" : "off" }),
    LOG_LEVEL: args["log-level"]
  })

  // 1. The census, through the counting relay.
  const counted = new URL(database.url)
  counted.port = String(counter.port)
  let port = await Proc.freePort()
  let url = `http://127.0.0.1:${port}`
  const a = await Proc.spawnServer("huddle-census", [serverMain], envFor(port, counted.toString()), join(out, "huddle-census.log"), `${url}/readyz`)
  const accounts = await Huddle.setup(url, { keys: Number(args.keys), orgCredits: 1_000_000_000_000, personalCredits: args.payer === "personal" ? 1_000_000_000_000 : 0 })
  const target = { name: "huddle", url, keys: accounts.apiKeys }
  const prober = Load.prober([target])
  const n = Number(args.requests)
  say(`# Huddle /v1/chat/completions on PostgreSQL ${database.version}: where the time goes`)
  say(`(${new Date().toISOString()}, node ${process.version}, keys ${args.keys}, payer ${args.payer}, LOG_LEVEL ${args["log-level"]}, metrics and traces ${args.traces})`)
  if (args.only !== "cpu") {
    for (const mode of ["nonstream", "stream"]) {
      for (let i = 0; i < 30; i++) await prober.once(target, mode)
      await fetch(`${counter.control}/reset`, { method: "POST" })
      const latencies = []
      const cpuBefore = Proc.cpuMsOf(a.pid)
      for (let i = 0; i < n; i++) latencies.push((await prober.once(target, mode)).total)
      const cpuMs = Proc.cpuMsOf(a.pid) - cpuBefore
      const stats = await (await fetch(`${counter.control}/stats`)).json()
      latencies.sort((x, y) => x - y)
      const mean = latencies.reduce((s, x) => s + x, 0) / n
      say("")
      say(`## Database census, ${mode === "stream" ? "streaming" : "non-streaming"}: ${n} requests one at a time (through the counting relay)`)
      say(`- latency: p50 ${Load.percentile(latencies, 50).toFixed(2)} ms, mean ${mean.toFixed(2)} ms; Huddle's CPU per request ${(cpuMs / n).toFixed(2)} ms`)
      say(`- round trips to PostgreSQL per request: ${(stats.roundTrips / n).toFixed(2)}; explicit transactions per request: ${(stats.transactions / n).toFixed(2)}`)
      say(`- waiting for PostgreSQL per request: ${(stats.dbMs / n).toFixed(2)} ms (${((100 * stats.dbMs) / n / mean).toFixed(0)}% of the mean latency; the relay adds its own hop to each)`)
      say("- statements per request (count, then the mean time from sending it to PostgreSQL's ReadyForQuery):")
      for (const [sql, count] of Object.entries(stats.statements).sort((x, y) => y[1] - x[1])) {
        say(`  - ${(count / n).toFixed(2)} × ${((stats.statementMs[sql] ?? 0) / count).toFixed(2)} ms \`${sql}\``)
      }
    }
    {
      // The same for GET /v1/models: authentication, org context and policy only.
      const pool = new Pool(url, { connections: 1 })
      const get = async () => {
        const t0 = process.hrtime.bigint()
        const res = await pool.request({ method: "GET", path: "/v1/models", headers: { authorization: `Bearer ${accounts.apiKeys[0]}` } })
        await res.body.arrayBuffer()
        return Number(process.hrtime.bigint() - t0) / 1e6
      }
      for (let i = 0; i < 30; i++) await get()
      await fetch(`${counter.control}/reset`, { method: "POST" })
      const cpuBefore = Proc.cpuMsOf(a.pid)
      const latencies = []
      for (let i = 0; i < n; i++) latencies.push(await get())
      const cpuMs = Proc.cpuMsOf(a.pid) - cpuBefore
      const stats = await (await fetch(`${counter.control}/stats`)).json()
      latencies.sort((x, y) => x - y)
      say("")
      say(`## Database census, GET /v1/models (authentication, org context, policy; no credits, no upstream): ${n} requests one at a time`)
      say(`- latency: p50 ${Load.percentile(latencies, 50).toFixed(2)} ms; Huddle's CPU per request ${(cpuMs / n).toFixed(2)} ms; round trips per request ${(stats.roundTrips / n).toFixed(2)}; waiting for PostgreSQL ${(stats.dbMs / n).toFixed(2)} ms`)
      for (const [sql, count] of Object.entries(stats.statements).sort((x, y) => y[1] - x[1])) say(`  - ${(count / n).toFixed(2)} × \`${sql.slice(0, 100)}\``)
      await pool.close()
    }
  }
  await prober.close()
  await Proc.stop(a.entry)

  // 2. Lighter endpoints on a server straight to PostgreSQL, to split the cost: the HTTP stack
  //    alone (/healthz), plus authentication and the org context (/v1/models), then the whole
  //    completion (both modes).
  if (args.only !== "cpu") {
    port = await Proc.freePort()
    url = `http://127.0.0.1:${port}`
    const c = await Proc.spawnServer("huddle-layers", [serverMain], envFor(port, database.url), join(out, "huddle-layers.log"), `${url}/readyz`)
    const key = accounts.apiKeys[0]
    say("")
    say(`## CPU per request by endpoint, ${args.connections} connections, 3 s each after 3 s of warm-up (user + system CPU of the Huddle process / answered requests)`)
    const layers = [
      ["GET", "/healthz", undefined, "HTTP stack, request edge and access log only"],
      ["GET", "/v1/models", undefined, "+ API key authentication, org context, policy (no credits, no upstream)"],
      ["POST", Load.path, Load.bodies.nonstream, "+ memories, credit reserve and settle, the upstream call (non-streaming answer)"],
      ["POST", Load.path, Load.bodies.stream, "the same, streamed to the client"]
    ]
    for (const [method, path, body, what] of layers) {
      const options = { url: `${url}${path}`, method, body, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, connections: Number(args.connections) }
      await Load.plain({ ...options, duration: 3 })
      const before = Proc.cpuMsOf(c.pid)
      const result = await Load.plain({ ...options, duration: 3 })
      const cpu = Proc.cpuMsOf(c.pid) - before
      say(`- ${method} ${path}${body?.includes('"stream":true') ? " (stream)" : ""}: ${(result["2xx"] / result.duration).toFixed(0)} req/s, ${(cpu / Math.max(1, result["2xx"])).toFixed(2)} ms CPU per request (${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts): ${what}`)
    }
    await Proc.stop(c.entry)
  }

  // 2b. The price of one streamed chunk: the same completion with the upstream's answer in 1
  //     and in 80 pieces, on two Huddles (each with its own upstream) measured in alternating
  //     rounds, so that both see the same machine.
  if (args.only !== "cpu") {
    say("")
    say(`## CPU per request by the number of chunks the upstream streams (same answer, same usage; ${args.connections} connections; 3 alternating rounds of 3 s per mode after 3 s of warm-up)`)
    const variants = []
    for (const pieces of [1, 80]) {
      const up = await Proc.spawnReadyLine(`upstream-${pieces}`, [join(root, "bench/upstream.mjs")], join(out, `upstream-${pieces}.log`), 20_000, { BENCH_UPSTREAM_CHUNKS: String(pieces) })
      port = await Proc.freePort()
      url = `http://127.0.0.1:${port}`
      const env = { ...envFor(port, database.url), OPENAI_BASE_URL: up.baseUrl }
      const h = await Proc.spawnServer(`huddle-chunks-${pieces}`, [serverMain], env, join(out, `huddle-chunks-${pieces}.log`), `${url}/readyz`)
      variants.push({ pieces, up, h, target: { name: "huddle", url, keys: accounts.apiKeys }, cpu: { nonstream: 0, stream: 0 }, ok: { nonstream: 0, stream: 0 } })
    }
    const conns = Number(args.connections)
    for (const mode of ["nonstream", "stream"]) for (const v of variants) await Load.run(v.target, mode, { connections: conns, seconds: 3 })
    for (let round = 0; round < 3; round++) {
      for (const mode of ["nonstream", "stream"]) {
        for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
          const before = Proc.cpuMsOf(v.h.pid)
          const result = await Load.run(v.target, mode, { connections: conns, seconds: 3 })
          v.cpu[mode] += Proc.cpuMsOf(v.h.pid) - before
          v.ok[mode] += result.ok
        }
      }
    }
    const per = {}
    for (const v of variants) {
      per[v.pieces] = { nonstream: v.cpu.nonstream / v.ok.nonstream, stream: v.cpu.stream / v.ok.stream }
      say(`- ${v.pieces} chunk(s): ${per[v.pieces].nonstream.toFixed(2)} ms CPU per non-streaming request (${(v.ok.nonstream / 9).toFixed(0)} req/s), ${per[v.pieces].stream.toFixed(2)} ms per streaming request (${(v.ok.stream / 9).toFixed(0)} req/s)`)
      await Proc.stop(v.h.entry)
      await Proc.stop(v.up.entry)
    }
    const chunk = (mode) => (per[80][mode] - per[1][mode]) / 79
    say(`- so one more upstream chunk costs about ${chunk("nonstream").toFixed(3)} ms of CPU (non-streaming) and ${chunk("stream").toFixed(3)} ms (streaming): the benchmark's 20 chunks about ${(20 * chunk("nonstream")).toFixed(1)} and ${(20 * chunk("stream")).toFixed(1)} ms`)
  }

  // 3. CPU profiles under load, one fresh process per mode, straight to PostgreSQL.
  for (const mode of ["nonstream", "stream"]) {
    port = await Proc.freePort()
    url = `http://127.0.0.1:${port}`
    const dir = join(out, `cpu-${mode}`)
    mkdirSync(dir, { recursive: true })
    const spawned = performance.now()
    const b = await Proc.spawnServer(`huddle-cpu-${mode}`, ["--cpu-prof", `--cpu-prof-dir=${dir}`, serverMain], envFor(port, database.url), join(out, `huddle-cpu-${mode}.log`), `${url}/readyz`)
    // --traces unrecorded: the same server as with `on`, its callers' traceparent saying not sampled.
    const loaded = { name: "huddle", url, keys: accounts.apiKeys, headers: args.traces === "unrecorded" ? { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00" } : undefined }
    await Load.run(loaded, mode, { connections: Number(args.connections), seconds: 3 })
    const cpuBefore = Proc.cpuMsOf(b.pid)
    const from = performance.now()
    const result = await Load.run(loaded, mode, { connections: Number(args.connections), seconds: Number(args.duration) })
    const to = performance.now()
    const cpuMs = Proc.cpuMsOf(b.pid) - cpuBefore
    const rss = Proc.memoryOf(b.pid)
    await Proc.stop(b.entry, 20_000)
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"))
    if (!file) throw new Error(`no CPU profile was written in ${dir}`)
    // The profile starts a few milliseconds after the spawn; trim 300 ms at both ends.
    const summary = CpuProfile.analyze(join(dir, file), { fromUs: (from - spawned + 300) * 1000, toUs: (to - spawned - 300) * 1000 })
    say("")
    say(`## CPU under load, ${mode === "stream" ? "streaming" : "non-streaming"}: ${args.connections} connections for ${args.duration} s (${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, ${result.non2xx + result.errors} failed; VmHWM ${(rss.hwm / 1048576).toFixed(0)} MB)`)
    say(`- CPU per request (user + system, /proc/<pid>/stat): ${(cpuMs / result.ok).toFixed(2)} ms; the process used ${(cpuMs / (to - from)).toFixed(2)} cores on average (the profiler's own cost included)`)
    say("```")
    say(CpuProfile.format(summary))
    say("```")
    say(`(profile: ${join(dir, file)})`)
  }
  writeFileSync(join(out, "profile.md"), `${report.join("\n")}\n`)
  console.log(`\n[profile] report and profiles in ${out}`)
}

let failed = false
main()
  .catch((error) => {
    failed = true
    console.error(`[profile] failed: ${error.stack ?? error}`)
  })
  .finally(async () => {
    clearTimeout(watchdog)
    await Proc.stopAll()
    await database?.drop().catch(() => {})
    process.exit(failed ? 1 : 0)
  })
