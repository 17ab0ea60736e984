#!/usr/bin/env node
/**
 * How a server's start settings trade memory for CPU (decision 0025): Huddles started differently
 * (node flags, environment), each on a database of its own, with metrics and every trace on, under
 * the same load in alternating rounds (50 connections, both modes). Prints per round and in the
 * end each one's idle RSS, peak RSS under load, CPU per request, and the median of its per-round
 * CPU ratios against the first. Not part of `npm run bench`.
 *
 *   node bench/launch-settings.mjs '[{"name":"plain"},{"name":"shipped","env":{"MALLOC_ARENA_MAX":"2"},"args":["--max-semi-space-size=32","--heap-growing-percent=100"]}]' [rounds, default 4] [seconds, default 6]
 *
 * The settings are given whole: unlike `npm run bench`, nothing of `npm start` is added. A variant
 * may name another build of the server (`"main": "<worktree>/packages/server/dist/main.js"`) to
 * compare two commits.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as Huddle from "./lib/huddle.mjs"
import * as Load from "./lib/load.mjs"
import * as Postgres from "./lib/postgres.mjs"
import * as Proc from "./lib/processes.mjs"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
if (process.argv[2] === undefined) throw new Error("usage: node bench/launch-settings.mjs '<JSON list of {name, args?, env?}>' [rounds] [seconds]")
const variants = JSON.parse(process.argv[2])
const rounds = Number(process.argv[3] ?? 4)
const seconds = Number(process.argv[4] ?? 6)
const work = mkdtempSync(join(tmpdir(), "huddle-launch-settings-"))
const upstreamKey = "sk-bench-upstream"
const upstream = await Proc.spawnReadyLine("upstream", [join(root, "bench/upstream.mjs")], join(work, "upstream.log"))
const sink = await Proc.spawnReadyLine("otlp-sink", [join(root, "bench/otlp-sink.mjs")], join(work, "otlp-sink.log"))
const catalogPath = Huddle.writeCatalog(work)
const dbs = []
const targets = []
try {
  for (const v of variants) {
    const db = await Postgres.create(); dbs.push(db)
    const port = await Proc.freePort()
    const url = `http://127.0.0.1:${port}`
    const env = { ...Huddle.serverEnv({ port, databaseUrl: db.url, catalogPath, upstreamBaseUrl: upstream.baseUrl, upstreamKey, starterCredits: 0, otlpUrl: sink.url }), ...(v.env ?? {}) }
    // `main`: another build of the server (a worktree of another commit), for an A/B of two commits.
    const server = await Proc.spawnServer(v.name, [...(v.args ?? []), v.main ?? join(root, "packages/server/dist/main.js")], env, join(work, `${v.name}.log`), `${url}/readyz`)
    await new Promise((r) => setTimeout(r, 1000))
    const idle = Proc.memoryOf(server.pid).rss
    const accounts = await Huddle.setup(url, { keys: 1, orgCredits: 1_000_000_000_000, personalCredits: 0 })
    targets.push({ name: v.name, url, keys: accounts.apiKeys, pid: server.pid, idle, cpu: { nonstream: 0, stream: 0 }, ok: { nonstream: 0, stream: 0 }, peak: { nonstream: 0, stream: 0 }, ratios: { nonstream: [], stream: [] } })
  }
  for (const t of targets) for (const mode of ["nonstream", "stream"]) await Load.run(t, mode, { connections: 50, seconds: 2 })
  for (let r = 0; r < rounds; r++) {
    for (const mode of ["nonstream", "stream"]) {
      const order = r % 2 === 0 ? targets : [...targets].reverse()
      const per = {}
      for (const t of order) {
        const c0 = Proc.cpuMsOf(t.pid)
        let peak = 0
        const timer = setInterval(() => { peak = Math.max(peak, Proc.memoryOf(t.pid)?.rss ?? 0) }, 200)
        const res = await Load.run(t, mode, { connections: 50, seconds })
        clearInterval(timer)
        const cpu = Proc.cpuMsOf(t.pid) - c0
        t.cpu[mode] += cpu; t.ok[mode] += res.ok; t.peak[mode] = Math.max(t.peak[mode], peak)
        per[t.name] = cpu / res.ok
        console.log(`round ${r + 1} ${mode.padEnd(9)} ${t.name.padEnd(12)} ${res.rps.toFixed(0)} req/s cpu ${(cpu / res.ok).toFixed(3)} ms/req rss peak ${(peak / 1048576).toFixed(0)} MB non2xx ${res.non2xx}`)
      }
      for (const t of targets.slice(1)) t.ratios[mode].push(per[t.name] / per[targets[0].name])
    }
  }
  for (const t of targets) {
    const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : NaN }
    console.log(`${t.name}: idle ${(t.idle / 1048576).toFixed(0)} MB; cpu ms/req nonstream ${(t.cpu.nonstream / t.ok.nonstream).toFixed(3)} stream ${(t.cpu.stream / t.ok.stream).toFixed(3)}; rss peak nonstream ${(t.peak.nonstream / 1048576).toFixed(0)} stream ${(t.peak.stream / 1048576).toFixed(0)} MB; median ratio vs ${targets[0].name}: ${t.ratios.nonstream.length ? `${med(t.ratios.nonstream).toFixed(3)} / ${med(t.ratios.stream).toFixed(3)}` : "-"}`)
  }
} finally {
  await Proc.stopAll()
  for (const db of dbs) await db.drop().catch(() => {})
}
