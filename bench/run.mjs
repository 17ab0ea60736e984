#!/usr/bin/env node
/**
 * `npm run bench`: OpenAI chat completions through Huddle against a bare pass-through proxy and
 * the fake upstream itself, on loopback, bounded in time; before them, the council's overhead
 * (bench/council.mjs, its own process, about 20 s) and code grounding on a generated repository
 * (bench/grounding.mjs, its own process, 30 to 40 s). See docs/performance.md.
 *
 * Sections: `council` (a council of scripted participants: wall time against the critical path,
 * CPU per council), `grounding` (indexing, retrieval, re-indexing and storing a repository of
 * 5,000+ files), `turn` (a single-mode huddle turn: its database writes, commits and CPU, through
 * the counting relay; bench/turn.mjs, its own process, about 40 s) and `gateway` (the chat
 * completions below). --only NAME[,NAME] runs only those,
 * --skip NAME[,NAME] leaves those out.
 *
 * Processes: this one (the load generator: autocannon, and the unloaded probers), the fake
 * upstream (bench/upstream.mjs), the bare proxy (bench/proxy.mjs), and Huddle as its operators
 * run it (as `npm start` does: its node flags and environment, read from package.json): on PostgreSQL, a second instance on the same
 * database (the two-instance target: the load generator deals its connections round-robin over
 * both), and on PGlite when asked (--engines postgres,pglite). Each server is its own process,
 * so no server shares an event loop with the load generator or with another server; the
 * machine's two cores are shared by all of them, as they would be by any gateway and its
 * upstream on one host.
 *
 * What is measured, in this order (see docs/performance.md): idle RSS after start; unloaded
 * latency (concurrency 1) and time to the first streamed byte; the gaps between streamed pieces
 * of a paced upstream; alternating loaded rounds (throughput, CPU per request, RSS); throughput
 * within latency bounds (the connection count stepped); pools drained under load on one and on
 * two instances; a soak at steady load (RSS curve and slope); then, with every Huddle stopped,
 * the money check in SQL. Every #15 target is printed with PASS or MISS.
 *
 * Options (all optional): --duration S (seconds per loaded run, default 4) --rounds N (3)
 * --connections N (50) --warmup S (2) --warmup-requests N (then more warm-up, 2 s at a time, until each
 * target has answered N requests in it, or 30 s more have passed for it; default 3000: a Node
 * process needs a few thousand requests before its hot paths are optimised, and the unloaded probe
 * measures a warm process; 0: time only) --probes N (200 unloaded requests per target and mode)
 * --gap-streams N (paced streams per target for the chunk gaps, 25) --bounds 1,4,16,64
 * (connection counts stepped for the latency bounds) --bound-seconds S (2) --drain-seconds S (4)
 * --soak S (seconds of the soak; default 20, a sample; 600 for #15's ten minutes; 0: none)
 * --keys N (API keys, one member each, spread over the connections; default 1)
 * --payer personal|org (who pays: the member's personal balance, or the org pool; default org)
 * --engines postgres,pglite (default postgres) --redis (rate-limit counters in the local Redis at
 * 127.0.0.1:6379 instead of in memory) --server-node-args="..." (node flags for Huddle, e.g.
 * "--max-old-space-size=128") --json FILE (write the results) --keep (keep logs)
 * --council-runs N (councils one after another, default 5) --council-concurrent N (at once, 3)
 * --grounding-files N (files of the generated repository, default 5000)
 * --paired-rounds N (#16's cost of metrics and traces: groups of short runs back to back, in
 * rotating order, of Huddle with both on, the same process and the second instance asked by
 * their callers not to record their traces (with every trace recorded and traces on only), and
 * two processes of Huddle with both off, 2 s each; default 12; 0: none) --sampled-ratio R (the share of traces recorded at which
 * the cost is also judged, from those runs; default 0.1)
 * --trace-ratio R (the share of traces Huddle records and exports to the benchmark's OTLP sink,
 * default 1: all) --traces off (metrics only: no trace export, to tell the two costs apart) --time-limit S (the watchdog, default 420, plus the soak and 24 s a paired round). BENCH_DATABASE_URL (else
 * TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres) names the PostgreSQL
 * server; loopback only.
 *
 * Exit status: 0 when the measurement ran (targets met or not); 1 when the run itself failed
 * (a process died, a target answered wrongly, errors under load, the time limit was reached).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir, totalmem } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import * as Huddle from "./lib/huddle.mjs"
import * as Load from "./lib/load.mjs"
import * as Postgres from "./lib/postgres.mjs"
import * as Money from "./lib/money.mjs"
import * as Observability from "./lib/observability.mjs"
import * as Proc from "./lib/processes.mjs"
import { median, medianInterval, percentile, slope, withinBounds } from "./lib/series.mjs"
import { answer, usage } from "./lib/answer.mjs"
import * as CouncilReport from "./lib/councilReport.mjs"
import * as GroundingReport from "./lib/groundingReport.mjs"
import * as TurnReport from "./lib/turnReport.mjs"
import { fmt, printTable } from "./lib/table.mjs"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const serverMain = join(root, "packages/server/dist/main.js")
const councilBuilt = join(root, "packages/domain/dist/council/Council.js")
const indexerBuilt = join(root, "packages/adapters/dist/grounding/Indexer.js")

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "50" },
    warmup: { type: "string", default: "2" },
    "warmup-requests": { type: "string", default: "3000" },
    probes: { type: "string", default: "200" },
    keys: { type: "string", default: "1" },
    payer: { type: "string", default: "org" },
    engines: { type: "string", default: "postgres" },
    "gap-streams": { type: "string", default: "25" },
    bounds: { type: "string", default: "1,4,16,64" },
    "bound-seconds": { type: "string", default: "2" },
    "drain-seconds": { type: "string", default: "4" },
    soak: { type: "string", default: "20" },
    json: { type: "string" },
    keep: { type: "boolean", default: false },
    redis: { type: "boolean", default: false },
    "server-node-args": { type: "string", default: "" },
    "time-limit": { type: "string", default: "420" },
    only: { type: "string" },
    skip: { type: "string", default: "" },
    "council-runs": { type: "string", default: "5" },
    "council-concurrent": { type: "string", default: "3" },
    "grounding-files": { type: "string", default: "5000" },
    "trace-ratio": { type: "string", default: "1" },
    "paired-rounds": { type: "string", default: "12" },
    "sampled-ratio": { type: "string", default: "0.1" },
    traces: { type: "string", default: "on" }
  }
})
const duration = Number(args.duration)
const rounds = Number(args.rounds)
const connections = Number(args.connections)
const warmup = Number(args.warmup)
const warmupRequests = Number(args["warmup-requests"])
/** The most extra warm-up a target gets to reach `warmupRequests`. */
const warmupExtraSeconds = 30
const probes = Number(args.probes)
const keys = Number(args.keys)
const gapStreams = Number(args["gap-streams"])
const boundSteps = args.bounds.split(",").map(Number).filter((n) => n > 0)
const boundSeconds = Number(args["bound-seconds"])
const drainSeconds = Number(args["drain-seconds"])
const soakSeconds = Number(args.soak)
const engines = args.engines.split(",").map((e) => e.trim()).filter(Boolean)
if (!["personal", "org"].includes(args.payer)) throw new Error("--payer is personal or org")
if (engines.some((e) => e !== "postgres" && e !== "pglite")) throw new Error("--engines takes postgres and/or pglite")
const allSections = ["council", "grounding", "turn", "gateway"]
const listOf = (value) => value.split(",").map((e) => e.trim()).filter(Boolean)
const sections = new Set(listOf(args.only ?? allSections.join(",")).filter((name) => !listOf(args.skip).includes(name)))
for (const name of [...listOf(args.only ?? ""), ...listOf(args.skip)]) {
  if (!allSections.includes(name)) throw new Error(`--only and --skip take ${allSections.join(", ")}`)
}

/** #15's targets. Latencies in microseconds. */
const targetsOf = {
  nonstreamThroughput: 0.25,
  streamThroughput: 0.5,
  addedP50Us: 1000,
  addedP99Us: 3000,
  addedFirstByteUs: 1000,
  // "≈ 0": the median gap between streamed pieces at most 50 µs longer than through the bare proxy.
  addedGapUs: 50,
  rssBytes: 250 * 1024 * 1024,
  // "Flat": RSS grows by at most 2 MB a minute over the soak (least squares, after its first fifth).
  soakSlopeMbPerMin: 2
}
/** The latency bounds under which throughput is reported (p99, ms), as public gateway benchmarks do. */
const latencyBounds = [10, 50, 100]

const log = (...parts) => console.log(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s]`, ...parts)
const t0 = performance.now()
const work = mkdtempSync(join(tmpdir(), "huddle-bench-"))
const cleanups = []
let failed = false

// Bounded in time whatever happens: past the limit, everything is stopped and the run fails.
const watchdog = setTimeout(() => {
  console.error(`[bench] time limit of ${args["time-limit"]} s reached: stopping`)
  failed = true
  finish().finally(() => process.exit(1))
}, (Number(args["time-limit"]) + Math.max(0, soakSeconds) + 24 * Number(args["paired-rounds"]) + (warmupRequests > 0 ? 4 * warmupExtraSeconds : 0)) * 1000)

let finishing
const finish = () =>
  (finishing ??= (async () => {
    await Proc.stopAll()
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup()
      } catch (error) {
        console.error("[bench] cleanup:", error.message)
      }
    }
    if (!args.keep && !failed) rmSync(work, { recursive: true, force: true })
    else console.log(`[bench] logs kept in ${work}`)
  })())

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    failed = true
    finish().finally(() => process.exit(1))
  })
}

const mb = (bytes) => (bytes === undefined ? "?" : `${(bytes / 1024 / 1024).toFixed(0)} MB`)
const us = (ms) => (Number.isFinite(ms) ? `${Math.round(ms * 1000)} µs` : "–")

/**
 * The council section, in a process of its own (so that its CPU figure is its own, and the
 * domain is not loaded into the load generator's process): its results, or a failure.
 */
const councilSection = async () => {
  if (!existsSync(councilBuilt)) throw new Error(`${councilBuilt} is missing: run \`npx tsc -b\` first (\`npm run bench\` does)`)
  const out = join(work, "council.json")
  const { code, signal } = await Proc.runToEnd("council", [
    join(root, "bench/council.mjs"),
    "--runs", args["council-runs"],
    "--concurrent", args["council-concurrent"],
    "--json", out,
    "--clock-offset", String(performance.now() - t0)
  ])
  if (code !== 0) throw new Error(`bench/council.mjs ended with code ${code}, signal ${signal}: the council section did not measure (see above)`)
  return JSON.parse(readFileSync(out, "utf8"))
}

/** The grounding section, in a process of its own (its CPU and memory figures are its own): its results, or a failure. */
const groundingSection = async () => {
  if (!existsSync(indexerBuilt)) throw new Error(`${indexerBuilt} is missing: run \`npx tsc -b\` first (\`npm run bench\` does)`)
  const out = join(work, "grounding.json")
  const { code, signal } = await Proc.runToEnd("grounding", [
    "--expose-gc",
    join(root, "bench/grounding.mjs"),
    "--files", args["grounding-files"],
    "--json", out,
    "--clock-offset", String(performance.now() - t0)
  ])
  if (code !== 0) throw new Error(`bench/grounding.mjs ended with code ${code}, signal ${signal}: the grounding section did not measure (see above)`)
  return JSON.parse(readFileSync(out, "utf8"))
}

/** The single-mode turn section (#15's writes and CPU per turn), in a process of its own: its results, or a failure. */
const turnSection = async () => {
  const out = join(work, "turn.json")
  const { code, signal } = await Proc.runToEnd("turn", [join(root, "bench/turn.mjs"), "--json", out])
  if (code !== 0) throw new Error(`bench/turn.mjs ended with code ${code}, signal ${signal}: the turn section did not measure, or its money check failed (see above)`)
  return JSON.parse(readFileSync(out, "utf8"))
}

const machineOf = () => ({ loadavgAtEnd: loadavg(), cores: cpus().length, cpu: cpus()[0]?.model, memory: totalmem(), node: process.version })

const main = async () => {
  if (sections.has("gateway") && !existsSync(serverMain)) throw new Error(`${serverMain} is missing: run \`npx tsc -b\` first (\`npm run bench\` does)`)
  const [load1] = loadavg()
  log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${mb(totalmem())}, node ${process.version}; load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`)
  if (load1 > cpus().length * 0.5) log(`note: the machine is already busy (load ${load1.toFixed(2)} on ${cpus().length} cores): absolute figures will be low and noisy; the ratios and CPU per request hold up better`)
  log(`sections: ${allSections.filter((name) => sections.has(name)).join(", ") || "none"}`)

  // 0. The council and grounding, first, one after the other, while nothing else of the benchmark runs.
  const council = sections.has("council") ? await councilSection() : undefined
  const grounding = sections.has("grounding") ? await groundingSection() : undefined
  const turn = sections.has("turn") ? await turnSection() : undefined
  if (!sections.has("gateway")) {
    if (council) CouncilReport.print(council)
    if (grounding) GroundingReport.print(grounding)
    if (turn) TurnReport.print(turn)
    if (args.json) writeFileSync(args.json, JSON.stringify({ machine: machineOf(), council, grounding, turn }, null, 2))
    log(`done in ${fmt((performance.now() - t0) / 1000)} s; load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`)
    return
  }

  log(`plan: ${rounds} rounds × 2 modes × targets, ${duration} s each at ${connections} connections; ${probes} unloaded requests per target and mode; ${gapStreams} paced streams per target; latency bounds at ${boundSteps.join("/")} connections, ${boundSeconds} s each; drains of ${drainSeconds} s; soak ${soakSeconds > 0 ? `${soakSeconds} s` : "none"}`)

  // 1. The fake upstream and the bare proxy.
  const upstreamKey = "sk-bench-upstream"
  const upstream = await Proc.spawnReadyLine("upstream", [join(root, "bench/upstream.mjs")], join(work, "upstream.log"))
  const proxy = await Proc.spawnReadyLine("proxy", [join(root, "bench/proxy.mjs"), upstream.url], join(work, "proxy.log"))
  // Huddle exports its traces here (as to a collector), so that it is measured with them on.
  const sink = await Proc.spawnReadyLine("otlp-sink", [join(root, "bench/otlp-sink.mjs")], join(work, "otlp-sink.log"))
  log(`fake upstream at ${upstream.url} (pid ${upstream.pid}); bare proxy at ${proxy.url} (pid ${proxy.pid}); OTLP trace sink at ${sink.url}`)

  const targets = [
    { name: "upstream", label: "fake upstream, direct", url: upstream.url, keys: [upstreamKey], pids: [upstream.pid], entries: [upstream.entry] },
    { name: "proxy", label: "bare proxy (node:http + undici Pool)", url: proxy.url, keys: [upstreamKey], pids: [proxy.pid], entries: [proxy.entry] }
  ]

  // 2. Huddle, on each engine, in its own process, set up through its API; on PostgreSQL a
  // second instance on the same database (started once the first has migrated it).
  const catalogPath = Huddle.writeCatalog(work)
  // New users start at 0: the personal payer's credits are granted to the bench's members (`setup`).
  const starterCredits = 0
  // As `npm start` runs it (its node flags and environment), then the flags given here (later ones win).
  const launch = Huddle.startCommand(root)
  const nodeArgs = [...launch.nodeArgs, ...args["server-node-args"].split(" ").filter(Boolean)]
  let pgDatabase
  const startHuddle = async (name, { databaseUrl, dataDir, observability = "on", otlpUrl = args.traces === "off" ? undefined : sink.url, traceRatio = Number(args["trace-ratio"]) }) => {
    const port = await Proc.freePort()
    const url = `http://127.0.0.1:${port}`
    const env = launch.withDefaults(Huddle.serverEnv({ port, databaseUrl, dataDir, catalogPath, upstreamBaseUrl: upstream.baseUrl, upstreamKey, starterCredits, redisUrl: args.redis ? "redis://127.0.0.1:6379" : undefined, otlpUrl, traceRatio, observability }))
    const server = await Proc.spawnServer(name, [...nodeArgs, serverMain], env, join(work, `${name}.log`), `${url}/readyz`)
    // Idle: a moment after the first 200 from /readyz, before any other request.
    await new Promise((r) => setTimeout(r, 1000))
    return { url, server, idleRss: Proc.memoryOf(server.pid)?.rss }
  }
  const huddles = await Promise.all(
    engines.map(async (engine) => {
      let databaseUrl
      let dataDir
      if (engine === "postgres") {
        pgDatabase = await Postgres.create()
        cleanups.push(() => pgDatabase.drop())
        databaseUrl = pgDatabase.url
      } else {
        dataDir = join(work, "pglite-data")
      }
      const { url, server, idleRss } = await startHuddle(`huddle-${engine}`, { databaseUrl, dataDir })
      const accounts = await Huddle.setup(url, { keys, orgCredits: 1_000_000_000_000, personalCredits: args.payer === "personal" ? 1_000_000_000_000 : 0 })
      log(`huddle on ${engine === "postgres" ? `PostgreSQL ${pgDatabase.version} (${pgDatabase.name})` : "PGlite"} at ${url} (pid ${server.pid}), ready in ${fmt(server.startupMs / 1000)} s, idle RSS ${mb(idleRss)}; ${keys} API key(s), payer: ${args.payer}, rate-limit counters: ${args.redis ? "Redis" : "memory"}`)
      return { name: `huddle-${engine}`, label: `Huddle on ${engine === "postgres" ? "PostgreSQL" : "PGlite"}`, engine, url, keys: accounts.apiKeys, pids: [server.pid], entries: [server.entry], accounts, server, idleRss }
    })
  )
  const pgHuddle = huddles.find((h) => h.engine === "postgres")
  let second
  let pair
  if (pgHuddle) {
    second = await startHuddle("huddle-postgres-2", { databaseUrl: pgDatabase.url })
    log(`second huddle on the same PostgreSQL database at ${second.url} (pid ${second.server.pid}), ready in ${fmt(second.server.startupMs / 1000)} s, idle RSS ${mb(second.idleRss)}`)
    // The same org, keys and pool as the first: two instances paying from one account.
    pair = { name: "huddle-postgres-x2", label: "Huddle on PostgreSQL, 2 instances", engine: "postgres", url: pgHuddle.url, urls: [pgHuddle.url, second.url], keys: pgHuddle.keys, pids: [pgHuddle.server.pid, second.server.pid], entries: [pgHuddle.server.entry, second.server.entry] }
  }
  // #16: the same Huddle with metrics and trace export off, on a database of its own (its
  // charges stay out of the ledger that the metrics of the two instances above are checked against).
  let bare
  let bare2
  if (pgHuddle) {
    const bareDatabase = await Postgres.create()
    cleanups.push(() => bareDatabase.drop())
    const started = await startHuddle("huddle-postgres-bare", { databaseUrl: bareDatabase.url, observability: "off" })
    const accounts = await Huddle.setup(started.url, { keys, orgCredits: 1_000_000_000_000, personalCredits: args.payer === "personal" ? 1_000_000_000_000 : 0 })
    bare = { name: "huddle-postgres-bare", label: "Huddle on PostgreSQL, metrics and traces off", engine: "postgres", url: started.url, keys: accounts.apiKeys, pids: [started.server.pid], entries: [started.server.entry], accounts, server: started.server, idleRss: started.idleRss }
    log(`huddle with metrics and trace export off at ${bare.url} (pid ${bare.server.pid}), on a database of its own, idle RSS ${mb(bare.idleRss)}`)
    // A second process of each configuration for #16's paired groups (7b): two identical
    // processes differ by 10–20 % here, so each side's figure is the mean of two.
    if (Number(args["paired-rounds"]) > 0) {
      const again = await startHuddle("huddle-postgres-bare-2", { databaseUrl: bareDatabase.url, observability: "off" })
      bare2 = { name: "huddle-postgres-bare-2", url: again.url, keys: accounts.apiKeys, pids: [again.server.pid], entries: [again.server.entry] }
      log(`second huddle with metrics and trace export off at ${bare2.url} (pid ${again.server.pid}), on the same database`)
    }
  }
  targets.push(...huddles)
  if (pair) targets.push(pair)
  if (bare) targets.push(bare)

  // 3. Every target answers both modes correctly before anything is timed (each instance of the pair).
  const succeeded = new Map(targets.map((t) => [t.name, 0]))
  for (const target of targets) {
    for (const url of target.urls ?? [target.url]) {
      const { info, problems } = await Load.validate({ ...target, url }, { answer, usage })
      if (problems.length > 0) {
        if (problems.some((p) => p.includes("status 404")) && target.name.startsWith("huddle")) {
          problems.unshift("Huddle has no POST /v1/chat/completions in this build (packages/server/dist)")
        }
        throw new Error(`${target.label} (${url}) answered wrongly:\n  ${problems.join("\n  ")}`)
      }
      succeeded.set(target.name, succeeded.get(target.name) + 2)
      log(`checked ${target.name}${target.urls ? ` at ${url}` : ""}: non-streaming and streaming answers are OpenAI-shaped (${info.events} SSE events, ${info.contentChunks} content chunks, ${info.bytes} bytes)`)
    }
  }

  // Memory of the Huddle processes, sampled throughout: the peak of each, and of each under each load.
  const huddleProcesses = [...huddles.map((h) => ({ name: h.name, pid: h.server.pid })), ...(second ? [{ name: "huddle-postgres-2", pid: second.server.pid }] : []), ...(bare ? [{ name: bare.name, pid: bare.server.pid }] : [])]
  const memory = new Map(huddleProcesses.map((h) => [h.name, { peakRss: 0, underLoad: {}, samples: 0 }]))
  let loading
  const sampler = setInterval(() => {
    for (const h of huddleProcesses) {
      const m = Proc.memoryOf(h.pid)
      if (m?.rss === undefined) continue
      const entry = memory.get(h.name)
      entry.samples++
      entry.peakRss = Math.max(entry.peakRss, m.rss)
      entry.hwm = m.hwm
      if (loading) entry.underLoad[loading] = Math.max(entry.underLoad[loading] ?? 0, m.rss)
    }
  }, 200)
  cleanups.push(() => clearInterval(sampler))

  const modes = ["nonstream", "stream"]
  // CPU time of every server process over each run; a target's is the sum over its processes.
  const processes = [...new Set(targets.flatMap((t) => t.pids))]
  const load = async (target, mode, seconds, conns = connections) => {
    loading = `${target.name}/${mode}`
    try {
      const before = new Map(processes.map((pid) => [pid, Proc.cpuMsOf(pid)]))
      const startedAt = new Date()
      const result = await Load.run(target, mode, { connections: conns, seconds })
      result.startedAt = startedAt.toISOString()
      result.endedAt = new Date().toISOString()
      result.connections = conns
      const spent = (t) => t.pids.reduce((a, pid) => a + (Proc.cpuMsOf(pid) - before.get(pid)), 0)
      // A server that died mid-run makes the figures meaningless: say who and how.
      for (const t of [...targets, ...(bare2 ? [bare2] : [])]) {
        for (const entry of t.entries) {
          if (entry.exited) {
            throw new Error(`${entry.name} (pid ${entry.child.pid}) exited during the run (code ${entry.code}, signal ${entry.signal}); the benchmark did not stop it${entry.signal ? " (a signal from outside: another process on this machine)" : ""}\n${Proc.tail(entry.logPath, 5)}`)
          }
        }
      }
      result.cpuMsPerRequest = Object.fromEntries(targets.map((t) => [t.name, spent(t) / Math.max(1, result.ok)]))
      succeeded.set(target.name, (succeeded.get(target.name) ?? 0) + result.ok)
      return result
    } finally {
      loading = undefined
    }
  }

  // 4. Warm-up: every target, both modes (JIT, connection pools, caches), not recorded.
  // The second process with both off is loaded only in 7b, but warmed as the others are.
  const warming = [...targets, ...(bare2 ? [bare2] : [])]
  const warmed = new Map(warming.map((t) => [t.name, 0]))
  for (const mode of modes) {
    for (const target of warming) warmed.set(target.name, warmed.get(target.name) + (await load(target, mode, warmup)).ok)
  }
  // Then by requests: a process that answered a few hundred is not yet warm (docs/performance.md).
  for (const target of warming) {
    for (let extra = 0; warmed.get(target.name) < warmupRequests && extra < warmupExtraSeconds; extra += 2 * modes.length) {
      for (const mode of modes) warmed.set(target.name, warmed.get(target.name) + (await load(target, mode, 2)).ok)
    }
  }
  log(`warmed up (${warming.map((t) => `${t.name} ${warmed.get(t.name)}`).join(", ")} requests)`)

  // 5. Unloaded probe: one request at a time, targets interleaved so that they share the noise
  // (the pair is two of the same process, and is left out).
  const single = targets.filter((t) => !t.urls)
  const prober = Load.prober(single)
  const probed = new Map()
  // CPU per request one at a time (what the unloaded latency is made of): each target's CPU over
  // its mode's probes (clock ticks of 10 ms, so ±10 ms over the whole series).
  const probeCpu = new Map()
  for (const mode of modes) {
    for (const target of single) probed.set(`${target.name}/${mode}`, [])
    const before = new Map(single.map((target) => [target.name, target.pids.reduce((a, pid) => a + Proc.cpuMsOf(pid), 0)]))
    for (let i = 0; i < probes; i++) {
      for (const target of single) {
        probed.get(`${target.name}/${mode}`).push(await prober.once(target, mode))
        succeeded.set(target.name, succeeded.get(target.name) + 1)
      }
    }
    for (const target of single) {
      probeCpu.set(`${target.name}/${mode}`, (target.pids.reduce((a, pid) => a + Proc.cpuMsOf(pid), 0) - before.get(target.name)) / probes)
    }
  }
  await prober.close()
  const probe = {}
  for (const [key, samples] of probed) {
    const sorted = (f) => samples.map(f).filter((x) => x !== undefined).sort((a, b) => a - b)
    const total = sorted((s) => s.total)
    const first = sorted((s) => s.firstByte)
    const token = sorted((s) => s.firstToken)
    probe[key] = {
      cpuMs: probeCpu.get(key),
      p50: percentile(total, 50),
      p90: percentile(total, 90),
      p99: percentile(total, 99),
      firstByteP50: percentile(first, 50),
      firstByteP99: percentile(first, 99),
      firstTokenP50: percentile(token, 50)
    }
  }
  log("unloaded probe done")

  // 6. Gaps between streamed pieces: the upstream paces its pieces (2 ms apart); one stream at a
  // time, targets interleaved; every gap between two content events a client received.
  const gapProber = Load.gapProber(single)
  const gapsOf = new Map(single.map((t) => [t.name, []]))
  for (let i = 0; i < gapStreams; i++) {
    for (const target of single) {
      gapsOf.get(target.name).push(...(await gapProber.once(target)))
      succeeded.set(target.name, succeeded.get(target.name) + 1)
    }
  }
  await gapProber.close()
  const gaps = Object.fromEntries([...gapsOf].map(([name, list]) => {
    const sorted = [...list].sort((a, b) => a - b)
    return [name, { count: sorted.length, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), zero: sorted.filter((g) => g < 0.05).length }]
  }))
  log("chunk gap probe done")

  // 7. Loaded rounds, alternating targets and modes; the order rotates every round.
  const runs = []
  for (let round = 0; round < rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length])
    for (const mode of round % 2 === 0 ? modes : [...modes].reverse()) {
      for (const target of order) {
        const result = await load(target, mode, duration)
        runs.push({ round, ...result })
        const bad = result.non2xx + result.errors + result.timeouts
        const rss = target.name.startsWith("huddle") ? target.pids.map((pid) => mb(Proc.memoryOf(pid)?.rss)).join(" + ") : undefined
        log(`round ${round + 1} ${mode.padEnd(9)} ${target.name.padEnd(18)} ${fmt(result.rps, 0).padStart(6)} req/s  p50 ${fmt(result.p50, 2)} ms  p99 ${fmt(result.p99, 2)} ms  CPU ${fmt(result.cpuMsPerRequest[target.name], 3)} ms/req${rss === undefined ? "" : `  RSS ${rss}`}${bad > 0 ? `  (${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts: ${JSON.stringify(result.statusCodes)})` : ""}`)
      }
    }
  }

  // 7b. #16's cost, paired: Huddle with metrics and traces on against the same with both off, in
  // groups of back-to-back runs whose order rotates and turns round (so that a drift of the
  // machine weighs on all alike over the groups); each cost is the median of the groups' ratios,
  // which one disturbed run cannot move as it moves a sum. Two runs of each group send a server
  // with traces on a caller's `traceparent` that says not sampled: its traces are not recorded,
  // so what a recorded trace costs is measured within one process, free of what sets two
  // processes apart. Two identical processes differ by 10–20 % on this machine
  // (docs/performance.md), so where two processes are compared each side is the mean of two:
  // the first and second instances with traces on (unrecorded), the two with both off. How far
  // the two of each configuration differ is reported as the floor of that comparison.
  const paired = { nonstream: [], stream: [] }
  const notSampled = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00" }
  const unrecorded = pgHuddle && second && args.traces !== "off" && Number(args["trace-ratio"]) === 1
    ? [
      { ...pgHuddle, name: `${pgHuddle.name}-unrecorded`, headers: notSampled },
      { ...pgHuddle, name: "huddle-postgres-2-unrecorded", url: second.url, pids: [second.server.pid], entries: [second.server.entry], headers: notSampled }
    ]
    : []
  if (bare && pgHuddle) {
    const offs = [bare, ...(bare2 ? [bare2] : [])]
    const group = [pgHuddle, ...unrecorded, ...offs]
    const mean = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length
    for (let pair = 0; pair < Number(args["paired-rounds"]); pair++) {
      for (const mode of modes) {
        const turned = [...group.slice(pair % group.length), ...group.slice(0, pair % group.length)]
        const order = pair % 2 === 0 ? turned : turned.reverse()
        // Each run's CPU is its own process's, per answered request.
        const cpu = {}
        for (const target of order) {
          const pid = target.pids[0]
          const before = Proc.cpuMsOf(pid)
          // Short runs, many groups: one run of a process reads up to a fifth off the next of the
          // same on this machine, so a cost is trusted from the median of many groups, not from long runs.
          const result = await load(target, mode, Math.min(duration, 2))
          cpu[target.name] = (Proc.cpuMsOf(pid) - before) / Math.max(1, result.ok)
        }
        const on = cpu[pgHuddle.name]
        const off = offs.map((t) => cpu[t.name])
        const unrec = unrecorded.map((t) => cpu[t.name])
        paired[mode].push({ on, off: mean(off), offs: off, ...(unrec.length > 0 ? { unrecorded: mean(unrec), unrecordedHere: unrec[0], unrecs: unrec } : {}) })
        const vsOff = (x) => `${fmt(x, 3)} (${fmt((x / mean(off) - 1) * 100, 1)} %)`
        log(`pair ${pair + 1} ${mode.padEnd(9)} on ${vsOff(on)}${unrec.length > 0 ? ` / on, traces not recorded ${unrec.map(vsOff).join(", ")}` : ""} / off ${off.map((x) => fmt(x, 3)).join(", ")} ms/req`)
      }
    }
  }

  // 8. Throughput within latency bounds: the connection count stepped, the bare proxy and Huddle
  // alternating at each step.
  const judged = pgHuddle ?? huddles[0]
  const boundTargets = [targets.find((t) => t.name === "proxy"), judged].filter(Boolean)
  const steps = []
  for (const conns of boundSteps) {
    for (const mode of modes) {
      for (const target of conns % 2 === 0 ? boundTargets : [...boundTargets].reverse()) {
        const result = await load(target, mode, boundSeconds, conns)
        steps.push({ target: target.name, mode, connections: conns, rps: result.rps, p50: result.p50, p99: result.p99, bad: result.non2xx + result.errors + result.timeouts })
      }
    }
    log(`latency bounds: ${conns} connections: ${steps.filter((s) => s.connections === conns).map((s) => `${s.target} ${s.mode} ${fmt(s.rps, 0)} req/s p99 ${fmt(s.p99, 1)} ms`).join("; ")}`)
  }
  const bounded = {}
  for (const target of boundTargets) for (const mode of modes) bounded[`${target.name}/${mode}`] = withinBounds(steps.filter((s) => s.target === target.name && s.mode === mode), latencyBounds)

  // 9. Pools drained under load, on one instance and on two sharing the database: each a new org
  // granted about half the run's worth of credits at the rate measured above.
  const drains = []
  if (pgHuddle) {
    for (const [label, target] of [["one instance", pgHuddle], ["two instances", pair]]) {
      const rps = runs.filter((r) => r.target === target.name && r.mode === "nonstream").reduce((a, r) => a + r.rps, 0) / Math.max(1, rounds)
      const credits = Math.min(50_000, Math.max(100, Math.round((rps * drainSeconds) / 2) * Huddle.costPerAnswer))
      loading = `${target.name}/drain`
      const drained = await Money.drain({ label, urls: target.urls ?? [target.url], setupUrl: pgHuddle.url, credits, seconds: drainSeconds, connections })
      loading = undefined
      drains.push(drained)
      log(`drain on ${label}: a pool of ${credits} credits, ${drained.answered} answered, ${drained.refused} refused (402), ${drained.failed} failed${drained.failed > 0 ? ` ${JSON.stringify(drained.codes)}` : ""}`)
    }
  }

  // 10. The soak: the judged Huddle at steady load (its connections streaming), RSS every second.
  let soak
  if (soakSeconds > 0 && judged) {
    const every = soakSeconds >= 120 ? 30 : 5
    const pid = judged.pids[0]
    const samples = []
    const soakStart = performance.now()
    let printed = 0
    const soakSampler = setInterval(() => {
      const rss = Proc.memoryOf(pid)?.rss
      const t = (performance.now() - soakStart) / 1000
      if (rss !== undefined) samples.push({ t, rss })
      if (t >= printed + every) {
        printed += every
        log(`soak ${fmt(t, 0).padStart(4)} s: RSS ${mb(rss)}`)
      }
    }, 1000)
    cleanups.push(() => clearInterval(soakSampler))
    const result = await load(judged, "stream", soakSeconds)
    clearInterval(soakSampler)
    // Growth after the first fifth (the heap settling into its working size), in MB per minute.
    const settled = samples.filter((s) => s.t >= soakSeconds / 5)
    soak = {
      seconds: soakSeconds,
      mode: "stream",
      connections,
      rps: result.rps,
      errors: result.non2xx + result.errors + result.timeouts,
      curve: samples.filter((s, i) => i === 0 || Math.floor(s.t / every) !== Math.floor(samples[i - 1].t / every)).map((s) => ({ t: Math.round(s.t), rssMb: Math.round(s.rss / 1048576) })),
      slopeMbPerMin: slope(settled.map((s) => ({ x: s.t / 60, y: s.rss / 1048576 }))),
      firstMb: samples[0]?.rss / 1048576,
      lastMb: samples.at(-1)?.rss / 1048576,
      peakMb: Math.max(...samples.map((s) => s.rss)) / 1048576
    }
    log(`soak done: ${fmt(result.rps, 0)} req/s; RSS ${fmt(soak.firstMb, 0)} → ${fmt(soak.lastMb, 0)} MB (peak ${fmt(soak.peakMb, 0)}), slope ${fmt(soak.slopeMbPerMin, 2)} MB/min`)
  }
  clearInterval(sampler)
  for (const h of huddleProcesses) {
    const m = Proc.memoryOf(h.pid)
    if (m?.hwm !== undefined) memory.get(h.name).hwm = m.hwm
  }

  // 11. The money, on PostgreSQL. Requests cut at the end of the last run are settled or released
  // as Huddle notices the disconnect: up to 10 s; then every Huddle is stopped (SIGTERM), so that
  // what an instance keeps for itself is given back, and the database is read.
  let money
  if (pgHuddle) {
    let heldWhileUp
    for (let waited = 0; ; waited += 250) {
      heldWhileUp = await Money.held(pgDatabase.url)
      if (heldWhileUp.count === 0 || waited >= 10_000) break
      await new Promise((r) => setTimeout(r, 250))
    }
    // #16: what the two instances' /metrics counted, and what the trace sink received (after one export interval).
    const metrics = Observability.sum(await Promise.all([pgHuddle.url, second.url].map((url) => Observability.scraped(url, Huddle.operatorToken))))
    await new Promise((r) => setTimeout(r, 5500))
    const traces = await Observability.sinkCounts(sink.url)
    const stopped = await Promise.all([pgHuddle.server.entry, second.server.entry].map((entry) => Proc.stop(entry, 10_000)))
    const ledgerCharged = await Observability.ledgerCharged(pgDatabase.url)
    const integrity = await Money.integrity(pgDatabase.url)
    const drained = await Promise.all(drains.map((d) => Money.drainedOutcome(pgDatabase.url, d)))
    const counts = await Money.reservations(pgDatabase.url)
    // The two instances' answers under every name they were loaded as (their unrecorded runs of 7b too).
    const answered = [pgHuddle.name, ...unrecorded.map((t) => t.name), pair.name].reduce((a, name) => a + (succeeded.get(name) ?? 0), 0) + drains.reduce((a, d) => a + d.answered, 0)
    money = { heldWhileUp, stopped, integrity, drained, reservations: counts, answered, metrics, traces, ledgerCharged }
  }

  // 12. Aggregate and report.
  const summary = {}
  for (const target of targets) {
    for (const mode of modes) {
      const mine = runs.filter((r) => r.target === target.name && r.mode === mode)
      const ok = mine.reduce((a, r) => a + r.ok, 0)
      const seconds = mine.reduce((a, r) => a + r.seconds, 0)
      summary[`${target.name}/${mode}`] = {
        rps: ok / seconds,
        rpsMin: Math.min(...mine.map((r) => r.rps)),
        rpsMax: Math.max(...mine.map((r) => r.rps)),
        p50: median(mine.map((r) => r.p50)),
        p99: median(mine.map((r) => r.p99)),
        // CPU ms per request of the target's own processes, and of the fake upstream behind it.
        cpuMs: mine.reduce((a, r) => a + r.cpuMsPerRequest[target.name] * r.ok, 0) / Math.max(1, ok),
        upstreamCpuMs: mine.reduce((a, r) => a + r.cpuMsPerRequest.upstream * r.ok, 0) / Math.max(1, ok),
        bad: mine.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0),
        total: mine.reduce((a, r) => a + r.ok + r.non2xx + r.errors + r.timeouts, 0)
      }
    }
  }
  const ratio = (name, mode) => summary[`${name}/${mode}`].rps / summary[`proxy/${mode}`].rps
  const added = (name, mode, field) => probe[`${name}/${mode}`][field] - probe[`proxy/${mode}`][field]

  console.log("")
  console.log(`Chat completions, ${connections} connections, ${rounds} rounds of ${duration} s per target and mode (req/s: all rounds; p50/p99: median of the rounds;`)
  console.log("CPU ms/req: user+system CPU of the target's own processes per answered request (the load generator's not counted); upstream CPU: the fake upstream's)")
  const rows = [["target", "mode", "req/s", "(min–max)", "p50 ms", "p99 ms", "÷ proxy", "CPU ms/req", "upstream CPU", "errors"]]
  for (const mode of modes) {
    for (const target of targets) {
      const s = summary[`${target.name}/${mode}`]
      rows.push([target.label, mode === "stream" ? "streaming" : "non-streaming", fmt(s.rps, 0), `${fmt(s.rpsMin, 0)}–${fmt(s.rpsMax, 0)}`, fmt(s.p50, 2), fmt(s.p99, 2), fmt(ratio(target.name, mode), 3), fmt(s.cpuMs, 3), fmt(s.upstreamCpuMs, 3), String(s.bad)])
    }
  }
  printTable(rows)

  console.log("")
  console.log(`Unloaded: one request at a time, ${probes} per target and mode; added = the target's percentile minus the bare proxy's; first byte = first byte of the streamed body`)
  const probeRows = [["target", "non-streaming p50", "p99", "added p50", "added p99", "stream first byte p50", "added", "stream total p50", "first token p50", "CPU ms/req (non-streaming / streaming)"]]
  for (const target of single) {
    const n = probe[`${target.name}/nonstream`]
    const s = probe[`${target.name}/stream`]
    probeRows.push([target.label, us(n.p50), us(n.p99), us(added(target.name, "nonstream", "p50")), us(added(target.name, "nonstream", "p99")), us(s.firstByteP50), us(added(target.name, "stream", "firstByteP50")), us(s.p50), us(s.firstTokenP50), `${fmt(n.cpuMs, 2)} / ${fmt(s.cpuMs, 2)}`])
  }
  printTable(probeRows)

  console.log("")
  console.log(`Gaps between streamed pieces: the upstream sends its ${usage.completion_tokens} pieces 2 ms apart; ${gapStreams} streams per target, one at a time; added = the target's median minus the bare proxy's`)
  const gapRows = [["target", "gaps", "p50", "p90", "p99", "added p50", "added p99", "arrived together"]]
  for (const target of single) {
    const g = gaps[target.name]
    gapRows.push([target.label, String(g.count), us(g.p50), us(g.p90), us(g.p99), us(g.p50 - gaps.proxy.p50), us(g.p99 - gaps.proxy.p99), String(g.zero)])
  }
  printTable(gapRows)

  console.log("")
  console.log(`Throughput within latency bounds: the most req/s of any step (${boundSteps.join(", ")} connections, ${boundSeconds} s each) whose p99 stayed within the bound`)
  const boundRows = [["target", "mode", ...latencyBounds.map((b) => `p99 ≤ ${b} ms`), ...boundSteps.map((c) => `${c} conn: req/s (p99 ms)`)]]
  for (const target of boundTargets) {
    for (const mode of modes) {
      const b = bounded[`${target.name}/${mode}`]
      boundRows.push([
        target.label,
        mode === "stream" ? "streaming" : "non-streaming",
        ...latencyBounds.map((bound) => (b[bound] ? `${fmt(b[bound].rps, 0)} (${b[bound].connections} conn)` : "none")),
        ...boundSteps.map((c) => {
          const s = steps.find((x) => x.target === target.name && x.mode === mode && x.connections === c)
          return s ? `${fmt(s.rps, 0)} (${fmt(s.p99, 1)})` : "–"
        })
      ])
    }
  }
  printTable(boundRows)

  console.log("")
  console.log("Huddle memory (RSS, /proc/<pid>/status, sampled every 200 ms)")
  for (const h of huddleProcesses) {
    const m = memory.get(h.name)
    const idle = h.name === "huddle-postgres-2" ? second.idleRss : huddles.find((x) => x.name === h.name)?.idleRss
    // Only the loads on this process (another target's load shows what the process kept, not what it used).
    const mine = (key) => key.startsWith(`${h.name}/`) || (pair && pair.pids.includes(h.pid) && key.startsWith(`${pair.name}/`))
    const loads = Object.entries(m.underLoad).filter(([key]) => mine(key)).map(([key, rss]) => `${key} ${mb(rss)}`).join(", ")
    console.log(`  ${h.name}: idle after start ${mb(idle)}; peak ${mb(m.peakRss)}, VmHWM ${mb(m.hwm)}; peak under each load: ${loads}`)
  }
  if (soak) {
    console.log(`  Soak of ${soak.seconds} s (${judged.name}, ${soak.connections} streaming connections, ${fmt(soak.rps, 0)} req/s): RSS every ${soak.seconds >= 120 ? 30 : 5} s (MB): ${soak.curve.map((p) => `${p.t}s ${p.rssMb}`).join(", ")}; slope after the first fifth ${fmt(soak.slopeMbPerMin, 2)} MB/min`)
  }

  if (money) {
    const i = money.integrity
    console.log("")
    console.log(`Money on PostgreSQL, read with SQL after every Huddle stopped (exit codes ${money.stopped.map((s) => s.code ?? s.signal).join(", ")})`)
    console.log(`  reservations: ${money.reservations.settled ?? 0} settled, ${money.reservations.released ?? 0} released, ${money.reservations.held ?? 0} held (${money.heldWhileUp.count} held 10 s after the load, instances up), for ${money.answered} answered requests`)
    console.log(`  accounts: ${i.accounts}; balance ≠ sum of its ledger: ${i.mismatched.length}; negative: ${i.negative}; held: ${i.held} (${i.heldCredits} credits)${i.leased === undefined ? "" : `; leased: ${i.leased} credits`}${i.openLeases === undefined ? "" : `; open leases: ${i.openLeases}`}`)
    printTable([
      ["pool drained under load", "granted", "answered", "refused (402)", "owed for answers", "charged (ledger)", "left", "overspend", "unpaid answers"],
      ...money.drained.map((d) => [d.label, String(d.granted), String(d.answered), String(d.refused), String(d.owed), String(d.charged), String(d.balance), String(d.overspend), String(d.unpaid)])
    ])
    for (const d of money.drained) if (!d.exhausted) console.log(`  note: the pool on ${d.label} was not exhausted (no 402): overspend was not put to the test`)
  }

  // 12b. #16: metrics and traces, their counts and their cost.
  const observed = []
  if (money && bare) {
    const m = money.metrics
    const t = money.traces
    const clientAnswered = money.answered
    // The paired runs' median when there are any (7b), else the loaded rounds' totals. Each
    // figure is a group's: `on` (every trace recorded) and `unrecorded` (the two instances with
    // traces on, their callers' traces not recorded) against `off` (the two with both off);
    // `recorded`, every trace against none within the first instance; `sampled`, the share `r` of
    // traces recorded, (unrecorded + r × (on − the first instance's unrecorded)) against off, as
    // a sampler that records r of the traces would cost; `sameOff` and `sameOn`, the second
    // process of a configuration against the first (what two identical processes differ by).
    const r = Number(args["sampled-ratio"])
    const of = {
      on: (p) => p.on / p.off - 1,
      unrecorded: (p) => p.unrecorded / p.off - 1,
      recorded: (p) => p.on / p.unrecordedHere - 1,
      sampled: (p) => (p.unrecorded + r * (p.on - p.unrecordedHere)) / p.off - 1,
      sameOff: (p) => p.offs[1] / p.offs[0] - 1,
      sameOn: (p) => p.unrecs[1] / p.unrecs[0] - 1
    }
    const measured = {
      on: () => true,
      sameOff: (p) => p.offs.length > 1,
      sameOn: (p) => (p.unrecs?.length ?? 0) > 1
    }
    const ratios = (key, mode) => paired[mode].filter(measured[key] ?? ((p) => p.unrecorded !== undefined)).map(of[key]).sort((x, y) => x - y)
    const cost = (key, mode) => ratios(key, mode).length > 0 ? median(ratios(key, mode)) : summary[`${pgHuddle.name}/${mode}`].cpuMs / summary[`${bare.name}/${mode}`].cpuMs - 1
    const costText = (key, mode) => {
      const rounds = key === "on" ? `; rounds ${fmt(summary[`${pgHuddle.name}/${mode}`].cpuMs, 3)} vs ${fmt(summary[`${bare.name}/${mode}`].cpuMs, 3)} ms` : ""
      const all = ratios(key, mode)
      const [low, high] = medianInterval(all)
      return all.length === 0
        ? `${rounds.slice(2)} (${fmt(cost(key, mode) * 100, 1)} %)`
        : `median of ${all.length} groups ${fmt(cost(key, mode) * 100, 1)} % (90 % interval ${fmt(low * 100, 1)} to ${fmt(high * 100, 1)}; groups ${fmt(all[0] * 100, 1)} to ${fmt(all.at(-1) * 100, 1)})${rounds}`
    }
    const costs = (key, what, judged = true) =>
      ["nonstream", "stream"].map((mode) => ({
        what: `CPU per completion, ${what}, ${mode === "stream" ? "streaming" : "non-streaming"}`,
        measured: costText(key, mode),
        wanted: judged ? "≤ +10 %" : "(reported)",
        pass: judged ? cost(key, mode) <= 0.1 : undefined
      }))
    const withUnrecorded = paired.nonstream.some((p) => p.unrecorded !== undefined)
    const spansOf = (name) => t.names?.[name] ?? 0
    const wanted = ["POST /v1/chat/completions", `chat ${Huddle.model}`, "Authentication.authenticate", "RequestScopes.resolve", "Credits.reserve", "Credits.settle"]
    const ratioNote = args.traces === "off" ? " (metrics only, no trace export)" : Number(args["trace-ratio"]) < 1 ? `, ${args["trace-ratio"]} of traces recorded` : ", every trace recorded"
    console.log("")
    console.log("Observability (#16): the two PostgreSQL instances' /metrics, scraped after the load, against the benchmark's counts and the ledger (read after they stopped)")
    printTable([
      ["", "metrics", "benchmark / ledger"],
      ["chat completions answered 200", String(m.answered), `${clientAnswered} answered as clients saw them (a request the load generator cut at a run's end is answered on the server but not counted by the client: ${m.answered - clientAnswered})`],
      ["refused 402 / client gone (499)", `${m.refused} / ${m.cut}`, ""],
      ["credits charged", String(m.credits), `${money.ledgerCharged} in the ledger`],
      ["reservations settled", String(m.settled), `${money.reservations.settled ?? 0} in the database`],
      ["reservations held at the end", String(m.held), `${money.heldWhileUp.count} in the database`]
    ])
    console.log(`  traces: ${t.spans} spans in ${t.exports} exports to the sink; ${wanted.map((name) => `${name} ×${spansOf(name)}`).join(", ")}`)
    observed.push(
      { what: "metrics: credits charged = ledger", measured: `${m.credits} / ${money.ledgerCharged}`, wanted: "equal", pass: m.credits === money.ledgerCharged },
      { what: "metrics: 200s ≥ answers clients saw, settled = database", measured: `${m.answered} ≥ ${clientAnswered}; ${m.settled} / ${money.reservations.settled ?? 0}`, wanted: "both", pass: m.answered >= clientAnswered && m.settled === (money.reservations.settled ?? 0) },
      ...(args.traces === "off" ? [] : [{ what: "traces: a completion's spans reached the collector", measured: `${t.spans} spans`, wanted: "all named", pass: wanted.every((name) => spansOf(name) > 0) }]),
      ...costs("on", `metrics + traces on${ratioNote} vs off`),
      ...(withUnrecorded
        ? [
          ...costs("recorded", "a recorded trace against an unrecorded one, within one process", false),
          ...costs("unrecorded", "metrics + traces on, no trace recorded vs off", false),
          ...costs("sampled", `metrics + traces on, ${r} of traces recorded vs off (from the two above)`)
        ]
        : []),
      ...(paired.nonstream.some(measured.sameOff) ? costs("sameOff", "a second process with both off against the first (the floor of a two-process comparison)", false) : []),
      ...(paired.nonstream.some(measured.sameOn) ? costs("sameOn", "a second process with traces on, none recorded, against the first", false) : [])
    )
    console.log("")
    console.log("Targets of #16")
    printTable([["target", "measured", "wanted", "verdict"], ...observed.map((v) => [v.what, v.measured, v.wanted, v.pass === undefined ? "" : v.pass ? "PASS" : "MISS"])])
  }

  // 13. Targets, judged on Huddle with PostgreSQL (PGlite is for reference).
  const verdicts = []
  if (judged) {
    const check = (what, measured, wanted, pass, note = "") => verdicts.push({ what, measured, wanted, pass, note })
    const nr = ratio(judged.name, "nonstream")
    const sr = ratio(judged.name, "stream")
    // The measured reason beside each figure: a process answers 1000 ÷ (its CPU per request)
    // req/s for each core it keeps busy, whatever else it waits for; so its share of the proxy's
    // rate is about that per core. One request at a time, the added latency is its work then.
    const perCore = (name, mode) => 1000 / summary[`${name}/${mode}`].cpuMs / summary[`proxy/${mode}`].rps
    const throughputNote = (mode, wanted) => {
      const cpu = summary[`${judged.name}/${mode}`].cpuMs
      const need = 1000 / (wanted * summary[`proxy/${mode}`].rps)
      return `${pair ? `2 instances: ${fmt(ratio(pair.name, mode), 3)}; ` : ""}CPU-bound: ${fmt(cpu, 3)} ms of CPU a completion is ${
        fmt(perCore(judged.name, mode), 3)
      } of the proxy's rate per core; ${wanted} needs ≤ ${fmt(need, 3)} ms a completion`
    }
    const probeCpuNote = (mode) => {
      const cpu = probe[`${judged.name}/${mode}`].cpuMs
      return `CPU a completion one at a time ${fmt(cpu, 2)} ms (${fmt(summary[`${judged.name}/${mode}`].cpuMs, 2)} under load; the proxy ${fmt(probe[`proxy/${mode}`].cpuMs, 2)})`
    }
    // verdict: true (PASS), false (MISS), or a word when the measurement cannot judge.
    check("throughput, non-streaming ÷ bare proxy", fmt(nr, 3), `≥ ${targetsOf.nonstreamThroughput}`, nr >= targetsOf.nonstreamThroughput, throughputNote("nonstream", targetsOf.nonstreamThroughput))
    check("throughput, streaming ÷ bare proxy", fmt(sr, 3), `≥ ${targetsOf.streamThroughput}`, sr >= targetsOf.streamThroughput, throughputNote("stream", targetsOf.streamThroughput))
    const ap50 = added(judged.name, "nonstream", "p50") * 1000
    const ap99 = added(judged.name, "nonstream", "p99") * 1000
    const afb = added(judged.name, "stream", "firstByteP50") * 1000
    const agap = (gaps[judged.name].p50 - gaps.proxy.p50) * 1000
    const judgedProbe = probe[`${judged.name}/nonstream`]
    check("unloaded added latency p50 (concurrency 1)", `${Math.round(ap50)} µs`, `≤ ${targetsOf.addedP50Us} µs`, ap50 <= targetsOf.addedP50Us, probeCpuNote("nonstream"))
    check("unloaded added latency p99 (concurrency 1)", `${Math.round(ap99)} µs`, `≤ ${targetsOf.addedP99Us} µs`, ap99 <= targetsOf.addedP99Us, `p99 − p50: Huddle ${us(judgedProbe.p99 - judgedProbe.p50)}, the proxy ${us(probe["proxy/nonstream"].p99 - probe["proxy/nonstream"].p50)}`)
    check("added time to first streamed byte (p50)", `${Math.round(afb)} µs`, `≤ ${targetsOf.addedFirstByteUs} µs`, afb <= targetsOf.addedFirstByteUs, probeCpuNote("stream"))
    check("added gap between streamed chunks (p50)", `${Math.round(agap)} µs`, `≤ ${targetsOf.addedGapUs} µs (≈ 0)`, agap <= targetsOf.addedGapUs, `p99 added ${us(gaps[judged.name].p99 - gaps.proxy.p99)}`)
    const streamRss = memory.get(judged.name).underLoad[`${judged.name}/stream`]
    check(`RSS under ${connections} concurrent streams`, mb(streamRss), "≤ 250 MB", streamRss <= targetsOf.rssBytes, `idle after start ${mb(judged.idleRss)}; peak of the run ${mb(memory.get(judged.name).peakRss)}`)
    if (soak) {
      // A short sample shows the curve but is mostly the heap growing into its working size: not judged.
      const judgeable = soak.seconds >= 120
      check("RSS flat over the soak (slope)", `${fmt(soak.slopeMbPerMin, 2)} MB/min`, `≤ ${targetsOf.soakSlopeMbPerMin} MB/min`, judgeable ? soak.slopeMbPerMin <= targetsOf.soakSlopeMbPerMin : "SAMPLE", judgeable ? `${soak.seconds} s at steady load` : `a ${soak.seconds} s sample, not judged: --soak 600 for #15's 10 minutes`)
    }
    if (money) {
      const i = money.integrity
      const common = i.mismatched.length === 0 && i.negative === 0 && i.held === 0 && (i.leased ?? 0) === 0 && (i.openLeases ?? 0) === 0
      for (const d of money.drained) {
        const ok = common && d.overspend === 0 && d.unpaid === 0 && d.failed === 0
        check(`money on ${d.label}`, `overspend ${d.overspend}, negative ${i.negative}, held ${i.held}, ledger ≠ balance ${i.mismatched.length}`, "all 0", ok, `${d.answered} answers for ${d.granted} credits${d.exhausted ? "" : " (pool not exhausted)"}${(i.openLeases ?? 0) + (i.leased ?? 0) > 0 ? `; leases left: ${i.openLeases} open, ${i.leased} credits` : ""}`)
      }
    }
    if (turn) {
      const [first, next] = ["start", "next"].map((kind) => turn.rows.find((r) => r.kind === kind && !r.stream))
      check(
        "single-mode huddle turn: database writes (commits), first / next turn",
        `${fmt(first.writes, 1)} (${fmt(first.commits, 1)}) / ${fmt(next.writes, 1)} (${fmt(next.commits, 1)})`,
        "report; cut what is not needed (8 at #15's opening)",
        "REPORT",
        `CPU per turn ${fmt(turn.loaded.cpuMsPerTurn, 2)} ms under load (${turn.loaded.connections} connections); money ${TurnReport.failedMoney(turn.money) ? "FAILED" : "exact"}`
      )
    }
    console.log("")
    console.log(`Targets of #15 (${judged.label}; the upstream's own ratio: non-streaming ${fmt(ratio("upstream", "nonstream"), 2)}, streaming ${fmt(ratio("upstream", "stream"), 2)})`)
    printTable([["target", "measured", "wanted", "verdict", "note"], ...verdicts.map((v) => [v.what, v.measured, v.wanted, typeof v.pass === "string" ? v.pass : v.pass ? "PASS" : "MISS", v.note])])
    const cpu = (name, mode) => fmt(summary[`${name}/${mode}`].cpuMs, 3)
    console.log(`  CPU per request (ms, non-streaming / streaming): ${judged.label} ${cpu(judged.name, "nonstream")} / ${cpu(judged.name, "stream")}${pair ? `; 2 instances ${cpu(pair.name, "nonstream")} / ${cpu(pair.name, "stream")}` : ""}; bare proxy ${cpu("proxy", "nonstream")} / ${cpu("proxy", "stream")}`)
    const jb = bounded[`${judged.name}/nonstream`]
    const pb = bounded["proxy/nonstream"]
    console.log(`  Throughput within p99 bounds, non-streaming (req/s, Huddle / bare proxy): ${latencyBounds.map((b) => `≤ ${b} ms ${fmt(jb[b]?.rps ?? 0, 0)} / ${fmt(pb[b]?.rps ?? 0, 0)}`).join("; ")}`)
  }

  if (council) CouncilReport.print(council)
  if (grounding) GroundingReport.print(grounding)
  if (turn) TurnReport.print(turn)

  const totalBad = Object.values(summary).reduce((a, s) => a + s.bad, 0)
  const totalAll = Object.values(summary).reduce((a, s) => a + s.total, 0)
  const results = {
    machine: { ...machineOf(), postgres: pgDatabase?.version },
    options: { duration, rounds, connections, warmup, warmupRequests, probes, gapStreams, boundSteps, boundSeconds, drainSeconds, soakSeconds, keys, payer: args.payer, engines, redis: args.redis, serverNodeArgs: args["server-node-args"] },
    summary, probe, gaps, steps, bounded, memory: Object.fromEntries(memory), idleRss: Object.fromEntries(huddles.map((h) => [h.name, h.idleRss])), soak, money, verdicts, observed, runs, council, grounding, turn
  }
  if (args.json) writeFileSync(args.json, JSON.stringify(results, null, 2))
  log(`done in ${fmt((performance.now() - t0) / 1000)} s; load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`)
  if (totalBad > totalAll * 0.001) {
    failed = true
    throw new Error(`${totalBad} of ${totalAll} requests under load failed (non-2xx, errors or timeouts): the figures are not a measurement`)
  }
  if (money && money.drained.some((d) => d.failed > 0)) {
    failed = true
    throw new Error(`a drain had failures other than 402: ${JSON.stringify(money.drained.map((d) => d.codes))}`)
  }
}

main()
  .catch((error) => {
    failed = true
    console.error(`[bench] failed: ${error.stack ?? error}`)
  })
  .finally(async () => {
    clearTimeout(watchdog)
    await finish()
    process.exit(failed ? 1 : 0)
  })
