#!/usr/bin/env node
/**
 * What a recorded trace costs, within one process (not part of `npm run bench`; run it by hand
 * after `npx tsc -b`, a minute or two). Each Huddle (a variant) runs on PostgreSQL with metrics
 * on and every trace exported to the bench's OTLP sink, and is loaded in alternating runs with a
 * caller's `traceparent` that says not sampled (nothing recorded) and without one (every span
 * recorded). Within one process the two differ only by the recording, free of what makes two
 * processes of the same build differ on a shared machine. Prints each run's CPU per completion
 * and, per variant and mode, the median of the pairs' ratios (recorded ÷ unrecorded) and the
 * spans the sink received per recorded completion.
 *
 *   node bench/trace-cost.mjs [--variants '<JSON list of {name, main?, env?, args?}>'] [--pairs N, default 12] [--seconds S, default 2] [--warmup S, default 8] [--mode nonstream|stream|both]
 *
 * `--rate R` offers R requests a second (over 50 connections) to both sides of a pair, rather than
 * as many as each answers: the same load for both, where a saturated process's CPU per request
 * also moves with how many requests share each turn of its event loop.
 *
 * Variants: `main` names another build of the server (a worktree's `packages/server/dist/main.js`)
 * to compare two commits; `env` and `args` are added to `npm start`'s.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import * as Huddle from "./lib/huddle.mjs"
import * as Load from "./lib/load.mjs"
import * as Observability from "./lib/observability.mjs"
import * as Postgres from "./lib/postgres.mjs"
import * as Proc from "./lib/processes.mjs"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const { values: args } = parseArgs({
  options: {
    variants: { type: "string", default: '[{"name":"this"}]' },
    pairs: { type: "string", default: "12" },
    seconds: { type: "string", default: "2" },
    warmup: { type: "string", default: "8" },
    mode: { type: "string", default: "both" },
    rate: { type: "string" }
  }
})
const variants = JSON.parse(args.variants)
const pairs = Number(args.pairs)
const seconds = Number(args.seconds)
const rate = args.rate === undefined ? undefined : Number(args.rate)
const modes = args.mode === "both" ? ["nonstream", "stream"] : [args.mode]
const notSampled = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00" }
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const pct = (x) => `${x >= 1 ? "+" : ""}${((x - 1) * 100).toFixed(1)} %`

const work = mkdtempSync(join(tmpdir(), "huddle-trace-cost-"))
const upstreamKey = "sk-bench-upstream"
const upstream = await Proc.spawnReadyLine("upstream", [join(root, "bench/upstream.mjs")], join(work, "upstream.log"))
const sink = await Proc.spawnReadyLine("otlp-sink", [join(root, "bench/otlp-sink.mjs")], join(work, "otlp-sink.log"))
const catalogPath = Huddle.writeCatalog(work)
const launch = Huddle.startCommand(root)
const dbs = []
const targets = []
try {
  for (const v of variants) {
    const db = await Postgres.create()
    dbs.push(db)
    const port = await Proc.freePort()
    const url = `http://127.0.0.1:${port}`
    const env = { ...launch.withDefaults(Huddle.serverEnv({ port, databaseUrl: db.url, catalogPath, upstreamBaseUrl: upstream.baseUrl, upstreamKey, starterCredits: 0, otlpUrl: sink.url })), ...(v.env ?? {}) }
    const server = await Proc.spawnServer(v.name, [...launch.nodeArgs, ...(v.args ?? []), v.main ?? join(root, "packages/server/dist/main.js")], env, join(work, `${v.name}.log`), `${url}/readyz`)
    const accounts = await Huddle.setup(url, { keys: 1, orgCredits: 1_000_000_000_000 })
    targets.push({ name: v.name, url, keys: accounts.apiKeys, pid: server.pid, ratios: Object.fromEntries(modes.map((m) => [m, []])), totals: Object.fromEntries(modes.map((m) => [m, { true: { cpu: 0, ok: 0 }, false: { cpu: 0, ok: 0 } }])), spans: Object.fromEntries(modes.map((m) => [m, []])) })
  }
  // Warm-up: both kinds of request, both modes, long enough for the heap to reach its size under load.
  for (const t of targets) for (const mode of modes) for (const headers of [notSampled, undefined]) await Load.run({ ...t, headers }, mode, { connections: 50, seconds: Number(args.warmup) / 2 })
  const measure = async (t, mode, recorded) => {
    const spans0 = (await Observability.sinkCounts(sink.url)).spans
    const c0 = Proc.cpuMsOf(t.pid)
    const res = await Load.run({ ...t, headers: recorded ? undefined : notSampled }, mode, { connections: 50, seconds, rate })
    const spent = Proc.cpuMsOf(t.pid) - c0
    t.totals[mode][recorded].cpu += spent
    t.totals[mode][recorded].ok += res.ok
    return { cpu: spent / res.ok, ok: res.ok, rps: res.rps, non2xx: res.non2xx, spans0 }
  }
  for (let p = 0; p < pairs; p++) {
    for (const mode of modes) {
      for (const t of p % 2 === 0 ? targets : [...targets].reverse()) {
        // on–off, then off–on: what drifts within a pair falls on each side in turn.
        const order = p % 2 === 0 ? [true, false] : [false, true]
        const got = {}
        for (const recorded of order) got[recorded] = await measure(t, mode, recorded)
        const ratio = got[true].cpu / got[false].cpu
        t.ratios[mode].push(ratio)
        console.log(`pair ${p + 1} ${mode.padEnd(9)} ${t.name.padEnd(12)} recorded ${got[true].cpu.toFixed(3)} / unrecorded ${got[false].cpu.toFixed(3)} ms per completion (${got[true].rps.toFixed(0)} / ${got[false].rps.toFixed(0)} req/s, non-2xx ${got[true].non2xx + got[false].non2xx}): ${pct(ratio)}`)
      }
    }
  }
  // Spans per recorded completion: one more recorded run per mode, after the exports of the last.
  for (const t of targets) {
    for (const mode of modes) {
      await new Promise((r) => setTimeout(r, 6000))
      const before = (await Observability.sinkCounts(sink.url)).spans
      const res = await Load.run(t, mode, { connections: 10, seconds: 1 })
      await new Promise((r) => setTimeout(r, 6000))
      t.spans[mode] = ((await Observability.sinkCounts(sink.url)).spans - before) / res.ok
    }
  }
  for (const t of targets) {
    const perRequest = (m, recorded) => t.totals[m][recorded].cpu / t.totals[m][recorded].ok
    console.log(`${t.name}: a recorded trace vs an unrecorded one: ${modes.map((m) => `${m} ${perRequest(m, true).toFixed(3)} / ${perRequest(m, false).toFixed(3)} ms, ${pct(perRequest(m, true) / perRequest(m, false))} over all runs, median of ${pairs} pairs ${pct(median(t.ratios[m]))} (${pct(Math.min(...t.ratios[m]))} to ${pct(Math.max(...t.ratios[m]))}), ${t.spans[m].toFixed(1)} spans a completion`).join("; ")}`)
  }
} finally {
  await Proc.stopAll()
  for (const db of dbs) await db.drop().catch(() => {})
}
