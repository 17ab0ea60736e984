#!/usr/bin/env node
/**
 * `npm run bench`: OpenAI chat completions through Huddle against a bare pass-through proxy and
 * the fake upstream itself, on loopback, bounded in time; before them, the council's overhead
 * (bench/council.mjs, its own process, about 20 s) and code grounding on a generated repository
 * (bench/grounding.mjs, its own process, 30 to 40 s). See docs/performance.md.
 *
 * Sections: `council` (a council of scripted participants: wall time against the critical path,
 * CPU per council), `grounding` (indexing, retrieval, re-indexing and storing a repository of
 * 5,000+ files) and `gateway` (the chat completions below). --only NAME[,NAME] runs only those,
 * --skip NAME[,NAME] leaves those out.
 *
 * Processes: this one (the load generator: autocannon, and the unloaded prober), the fake
 * upstream (bench/upstream.mjs), the bare proxy (bench/proxy.mjs), and Huddle as its operators
 * run it (`node packages/server/dist/main.js`), once on PostgreSQL and once on PGlite. Each
 * server is its own process, so no server shares an event loop with the load generator or with
 * another server; the machine's two cores are shared by all of them, as they would be by any
 * gateway and its upstream on one host.
 *
 * Options (all optional): --duration S (seconds per loaded run, default 4) --rounds N (3)
 * --connections N (50) --warmup S (2) --probes N (200 unloaded requests per target and mode)
 * --keys N (API keys, one member each, spread over the connections; default 1)
 * --payer personal|org (who pays: the member's personal balance, or the org pool; default org)
 * --engines postgres,pglite (default both) --redis (rate-limit counters in the local Redis at
 * 127.0.0.1:6379 instead of in memory) --server-node-args="..." (node flags for Huddle, e.g.
 * "--max-old-space-size=128") --json FILE (write the results) --keep (keep logs)
 * --council-runs N (councils one after another, default 5) --council-concurrent N (at once, 3)
 * --grounding-files N (files of the generated repository, default 5000)
 * --time-limit S (the watchdog, default 300). BENCH_DATABASE_URL (else TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres) names the PostgreSQL server; loopback only.
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
import * as Proc from "./lib/processes.mjs"
import { answer, usage } from "./lib/answer.mjs"
import * as CouncilReport from "./lib/councilReport.mjs"
import * as GroundingReport from "./lib/groundingReport.mjs"
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
    probes: { type: "string", default: "200" },
    keys: { type: "string", default: "1" },
    payer: { type: "string", default: "org" },
    engines: { type: "string", default: "postgres,pglite" },
    json: { type: "string" },
    keep: { type: "boolean", default: false },
    redis: { type: "boolean", default: false },
    "server-node-args": { type: "string", default: "" },
    "time-limit": { type: "string", default: "300" },
    only: { type: "string" },
    skip: { type: "string", default: "" },
    "council-runs": { type: "string", default: "5" },
    "council-concurrent": { type: "string", default: "3" },
    "grounding-files": { type: "string", default: "5000" }
  }
})
const duration = Number(args.duration)
const rounds = Number(args.rounds)
const connections = Number(args.connections)
const warmup = Number(args.warmup)
const probes = Number(args.probes)
const keys = Number(args.keys)
const engines = args.engines.split(",").map((e) => e.trim()).filter(Boolean)
if (!["personal", "org"].includes(args.payer)) throw new Error("--payer is personal or org")
if (engines.some((e) => e !== "postgres" && e !== "pglite")) throw new Error("--engines takes postgres and/or pglite")
const allSections = ["council", "grounding", "gateway"]
const listOf = (value) => value.split(",").map((e) => e.trim()).filter(Boolean)
const sections = new Set(listOf(args.only ?? allSections.join(",")).filter((name) => !listOf(args.skip).includes(name)))
for (const name of [...listOf(args.only ?? ""), ...listOf(args.skip)]) {
  if (!allSections.includes(name)) throw new Error(`--only and --skip take ${allSections.join(", ")}`)
}

const targetsOf = {
  nonstreamThroughput: 0.25,
  streamThroughput: 0.5,
  addedP50Ms: 1,
  addedFirstByteMs: 1,
  rssBytes: 250 * 1024 * 1024
}

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
}, Number(args["time-limit"]) * 1000)

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
const median = (xs) => {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

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
  if (!sections.has("gateway")) {
    if (council) CouncilReport.print(council)
    if (grounding) GroundingReport.print(grounding)
    if (args.json) writeFileSync(args.json, JSON.stringify({ machine: machineOf(), council, grounding }, null, 2))
    log(`done in ${fmt((performance.now() - t0) / 1000)} s; load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`)
    return
  }

  log(`plan: ${rounds} rounds × 2 modes × targets, ${duration} s each at ${connections} connections; ${probes} unloaded requests per target and mode`)

  // 1. The fake upstream and the bare proxy.
  const upstreamKey = "sk-bench-upstream"
  const upstream = await Proc.spawnReadyLine("upstream", [join(root, "bench/upstream.mjs")], join(work, "upstream.log"))
  const proxy = await Proc.spawnReadyLine("proxy", [join(root, "bench/proxy.mjs"), upstream.url], join(work, "proxy.log"))
  log(`fake upstream at ${upstream.url} (pid ${upstream.pid}); bare proxy at ${proxy.url} (pid ${proxy.pid})`)

  const targets = [
    { name: "upstream", label: "fake upstream, direct", url: upstream.url, keys: [upstreamKey], pid: upstream.pid, entry: upstream.entry },
    { name: "proxy", label: "bare proxy (node:http + undici Pool)", url: proxy.url, keys: [upstreamKey], pid: proxy.pid, entry: proxy.entry }
  ]

  // 2. Huddle, on each engine, in its own process, set up through its API.
  const catalogPath = Huddle.writeCatalog(work)
  const starterCredits = args.payer === "personal" ? 1_000_000_000_000 : 0
  let pgDatabase
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
      const port = await Proc.freePort()
      const url = `http://127.0.0.1:${port}`
      const env = Huddle.serverEnv({ port, databaseUrl, dataDir, catalogPath, upstreamBaseUrl: upstream.baseUrl, upstreamKey, starterCredits, redisUrl: args.redis ? "redis://127.0.0.1:6379" : undefined })
      const nodeArgs = args["server-node-args"].split(" ").filter(Boolean)
      const server = await Proc.spawnServer(`huddle-${engine}`, [...nodeArgs, serverMain], env, join(work, `huddle-${engine}.log`), `${url}/readyz`)
      const accounts = await Huddle.setup(url, { keys, orgCredits: 1_000_000_000_000 })
      log(`huddle on ${engine === "postgres" ? `PostgreSQL ${pgDatabase.version} (${pgDatabase.name})` : "PGlite"} at ${url} (pid ${server.pid}), ready in ${fmt(server.startupMs / 1000)} s; ${keys} API key(s), payer: ${args.payer}, rate-limit counters: ${args.redis ? "Redis" : "memory"}`)
      return {
        name: `huddle-${engine}`,
        label: `Huddle on ${engine === "postgres" ? "PostgreSQL" : "PGlite"}`,
        engine,
        url,
        keys: accounts.apiKeys,
        pid: server.pid,
        entry: server.entry,
        accounts,
        server
      }
    })
  )
  targets.push(...huddles)

  // 3. Every target answers both modes correctly before anything is timed.
  const succeeded = new Map(targets.map((t) => [t.name, 0]))
  for (const target of targets) {
    const { info, problems } = await Load.validate(target, { answer, usage })
    if (problems.length > 0) {
      if (problems.some((p) => p.includes("status 404")) && target.name.startsWith("huddle")) {
        problems.unshift("Huddle has no POST /v1/chat/completions in this build (packages/server/dist)")
      }
      throw new Error(`${target.label} answered wrongly:\n  ${problems.join("\n  ")}`)
    }
    succeeded.set(target.name, succeeded.get(target.name) + 2)
    log(`checked ${target.name}: non-streaming and streaming answers are OpenAI-shaped (${info.events} SSE events, ${info.contentChunks} content chunks, ${info.bytes} bytes)`)
  }

  // Memory of the Huddle processes, sampled throughout.
  const memory = new Map(huddles.map((h) => [h.name, { peakRss: 0, peakRssUnderLoad: 0, samples: 0 }]))
  let loading
  const sampler = setInterval(() => {
    for (const h of huddles) {
      const m = Proc.memoryOf(h.pid)
      if (m?.rss === undefined) continue
      const entry = memory.get(h.name)
      entry.samples++
      entry.peakRss = Math.max(entry.peakRss, m.rss)
      entry.hwm = m.hwm
      if (loading === h.name) entry.peakRssUnderLoad = Math.max(entry.peakRssUnderLoad, m.rss)
    }
  }, 200)
  cleanups.push(() => clearInterval(sampler))

  const modes = ["nonstream", "stream"]
  // CPU time of each server process over each run, per successful request.
  const servers = targets.map((t) => ({ name: t.name, pid: t.pid }))
  const load = async (target, mode, seconds) => {
    loading = target.name
    try {
      const before = servers.map((s) => Proc.cpuMsOf(s.pid))
      const startedAt = new Date()
      const result = await Load.run(target, mode, { connections, seconds })
      result.startedAt = startedAt.toISOString()
      result.endedAt = new Date().toISOString()
      const after = servers.map((s) => Proc.cpuMsOf(s.pid))
      // A server that died mid-run makes the figures meaningless: say who and how.
      for (const t of targets) {
        if (t.entry.exited) {
          throw new Error(`${t.name} (pid ${t.pid}) exited during the run (code ${t.entry.code}, signal ${t.entry.signal}); the benchmark did not stop it${t.entry.signal ? " (a signal from outside: another process on this machine)" : ""}\n${Proc.tail(t.entry.logPath, 5)}`)
        }
      }
      result.cpuMsPerRequest = Object.fromEntries(servers.map((s, i) => [s.name, (after[i] - before[i]) / Math.max(1, result.ok)]))
      succeeded.set(target.name, succeeded.get(target.name) + result.ok)
      return result
    } finally {
      loading = undefined
    }
  }

  // 4. Warm-up: every target, both modes (JIT, connection pools, caches), not recorded.
  for (const mode of modes) for (const target of targets) await load(target, mode, warmup)
  log("warmed up")

  // 5. Unloaded probe: one request at a time, targets interleaved so that they share the noise.
  const prober = Load.prober(targets)
  const probed = new Map()
  for (const mode of modes) {
    for (const target of targets) probed.set(`${target.name}/${mode}`, [])
    for (let i = 0; i < probes; i++) {
      for (const target of targets) {
        probed.get(`${target.name}/${mode}`).push(await prober.once(target, mode))
        succeeded.set(target.name, succeeded.get(target.name) + 1)
      }
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
      p50: Load.percentile(total, 50),
      p90: Load.percentile(total, 90),
      firstByteP50: Load.percentile(first, 50),
      firstTokenP50: Load.percentile(token, 50)
    }
  }
  log("unloaded probe done")

  // 6. Loaded rounds, alternating targets and modes; the order rotates every round.
  const runs = []
  for (let round = 0; round < rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length])
    for (const mode of round % 2 === 0 ? modes : [...modes].reverse()) {
      for (const target of order) {
        const result = await load(target, mode, duration)
        runs.push({ round, ...result })
        const bad = result.non2xx + result.errors + result.timeouts
        const rss = memory.has(target.name) ? Proc.memoryOf(target.pid)?.rss : undefined
        result.rssAfter = rss
        log(`round ${round + 1} ${mode.padEnd(9)} ${target.name.padEnd(15)} ${fmt(result.rps, 0).padStart(6)} req/s  p50 ${fmt(result.p50, 2)} ms  p99 ${fmt(result.p99, 2)} ms  CPU ${fmt(result.cpuMsPerRequest[target.name], 3)} ms/req${rss === undefined ? "" : `  RSS ${mb(rss)}`}${bad > 0 ? `  (${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts: ${JSON.stringify(result.statusCodes)})` : ""}`)
      }
    }
  }
  clearInterval(sampler)
  for (const h of huddles) {
    const m = Proc.memoryOf(h.pid)
    if (m?.hwm !== undefined) memory.get(h.name).hwm = m.hwm
  }

  // 7. The ledger on PostgreSQL: one settled reservation per completed request.
  let ledger
  const pgHuddle = huddles.find((h) => h.engine === "postgres")
  if (pgHuddle) {
    // Requests cut at the end of the last run are settled or released as Huddle notices the
    // disconnect: give it up to 10 s.
    for (let waited = 0; ; waited += 250) {
      const rows = await Postgres.query(pgDatabase.url, "SELECT status, count(*)::int AS n FROM credit_reservations GROUP BY status")
      ledger = Object.fromEntries(rows.map((r) => [r.status, r.n]))
      if ((ledger.held ?? 0) === 0 || waited >= 10_000) break
      await new Promise((r) => setTimeout(r, 250))
    }
    ledger.responses = succeeded.get(pgHuddle.name)
    if ((ledger.held ?? 0) > 0) {
      ledger.heldRows = await Postgres.query(pgDatabase.url, "SELECT id, amount, purpose, created_at FROM credit_reservations WHERE status = 'held' ORDER BY created_at")
    }
  }

  // 8. Aggregate and report.
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
        // CPU ms per request of the target's own process, and of the fake upstream behind it.
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
  console.log("CPU ms/req: user+system CPU of the target's own process per answered request (the load generator's not counted); upstream CPU: the fake upstream's)")
  const rows = [["target", "mode", "req/s", "(min–max)", "p50 ms", "p99 ms", "÷ proxy", "CPU ms/req", "upstream CPU", "errors"]]
  for (const mode of modes) {
    for (const target of targets) {
      const s = summary[`${target.name}/${mode}`]
      rows.push([target.label, mode === "stream" ? "streaming" : "non-streaming", fmt(s.rps, 0), `${fmt(s.rpsMin, 0)}–${fmt(s.rpsMax, 0)}`, fmt(s.p50, 2), fmt(s.p99, 2), fmt(ratio(target.name, mode), 3), fmt(s.cpuMs, 3), fmt(s.upstreamCpuMs, 3), String(s.bad)])
    }
  }
  printTable(rows)

  console.log("")
  console.log(`Unloaded: one request at a time, ${probes} per target and mode, p50 (ms); first byte = first byte of the streamed body`)
  const probeRows = [["target", "non-streaming p50", "p90", "added p50", "stream first byte p50", "added", "stream total p50", "first token p50"]]
  for (const target of targets) {
    const n = probe[`${target.name}/nonstream`]
    const s = probe[`${target.name}/stream`]
    probeRows.push([target.label, fmt(n.p50, 3), fmt(n.p90, 3), fmt(added(target.name, "nonstream", "p50"), 3), fmt(s.firstByteP50, 3), fmt(added(target.name, "stream", "firstByteP50"), 3), fmt(s.p50, 3), fmt(s.firstTokenP50, 3)])
  }
  printTable(probeRows)

  console.log("")
  console.log("Huddle memory (RSS, /proc/<pid>/status, sampled every 200 ms)")
  for (const h of huddles) {
    const m = memory.get(h.name)
    console.log(`  ${h.label}: peak RSS ${mb(m.peakRss)} (under its own load ${mb(m.peakRssUnderLoad)}), VmHWM ${mb(m.hwm)}`)
  }
  if (ledger) {
    console.log(`  Ledger on PostgreSQL: ${ledger.settled ?? 0} reservations settled, ${ledger.released ?? 0} released, ${ledger.held ?? 0} held, for ${ledger.responses} successful responses (autocannon cuts requests in flight at the end of each run: those are settled or released too)`)
  }

  // 9. Targets, judged on Huddle with PostgreSQL (PGlite is for reference).
  const judged = pgHuddle ?? huddles[0]
  const verdicts = []
  if (judged) {
    const rss = memory.get(judged.name).peakRss
    const check = (what, value, target, pass, unit) => verdicts.push({ what, value, target, pass, unit })
    check("throughput, non-streaming (÷ bare proxy)", ratio(judged.name, "nonstream"), `≥ ${targetsOf.nonstreamThroughput}`, ratio(judged.name, "nonstream") >= targetsOf.nonstreamThroughput, "")
    check("throughput, streaming (÷ bare proxy)", ratio(judged.name, "stream"), `≥ ${targetsOf.streamThroughput}`, ratio(judged.name, "stream") >= targetsOf.streamThroughput, "")
    check("unloaded added p50 vs bare proxy", added(judged.name, "nonstream", "p50"), `≤ ${targetsOf.addedP50Ms} ms`, added(judged.name, "nonstream", "p50") <= targetsOf.addedP50Ms, " ms")
    check("added time to first streamed byte", added(judged.name, "stream", "firstByteP50"), `≤ ${targetsOf.addedFirstByteMs} ms`, added(judged.name, "stream", "firstByteP50") <= targetsOf.addedFirstByteMs, " ms")
    check("server RSS during the run", rss / 1024 / 1024, "≤ 250 MB", rss <= targetsOf.rssBytes, " MB")
    console.log("")
    console.log(`Targets (${judged.label}; the upstream's own ratio: non-streaming ${fmt(ratio("upstream", "nonstream"), 2)}, streaming ${fmt(ratio("upstream", "stream"), 2)})`)
    printTable([
      ["target", "measured", "wanted", "verdict"],
      ...verdicts.map((v) => [v.what, `${fmt(v.value, v.unit === " MB" ? 0 : v.unit ? 3 : 3)}${v.unit}`, v.target, v.pass ? "PASS" : "MISS"])
    ])
  }

  if (council) CouncilReport.print(council)
  if (grounding) GroundingReport.print(grounding)

  const totalBad = Object.values(summary).reduce((a, s) => a + s.bad, 0)
  const totalAll = Object.values(summary).reduce((a, s) => a + s.total, 0)
  const results = { machine: { ...machineOf(), postgres: pgDatabase?.version }, options: { duration, rounds, connections, warmup, probes, keys, payer: args.payer, engines, redis: args.redis, serverNodeArgs: args["server-node-args"] }, summary, probe, memory: Object.fromEntries(memory), ledger, verdicts, runs, council, grounding }
  if (args.json) writeFileSync(args.json, JSON.stringify(results, null, 2))
  log(`done in ${fmt((performance.now() - t0) / 1000)} s; load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`)
  if (totalBad > totalAll * 0.001) {
    failed = true
    throw new Error(`${totalBad} of ${totalAll} requests under load failed (non-2xx, errors or timeouts): the figures are not a measurement`)
  }
  if (ledger && (ledger.held ?? 0) > 0) {
    // A finding about Huddle, not a failure of the measurement.
    const during = (at) => {
      const t = new Date(at).toISOString()
      const run = runs.find((r) => r.startedAt <= t && t <= r.endedAt)
      return run ? `during round ${run.round + 1} ${run.mode} ${run.target} (${run.startedAt.slice(11, 23)}–${run.endedAt.slice(11, 23)})` : "outside the timed rounds"
    }
    console.log(`[bench] WARNING: ${ledger.held} credit reservation(s) on PostgreSQL still held 10 s after the last request:`)
    for (const row of ledger.heldRows) console.log(`  ${row.id} created ${new Date(row.created_at).toISOString()}, ${during(row.created_at)}`)
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
