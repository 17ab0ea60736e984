#!/usr/bin/env node
/**
 * A single-mode huddle turn, as #15 asks: the database writes and commits one turn costs, and
 * its CPU (`npm run bench` runs it as its "turn" section; alone: `node bench/turn.mjs` after
 * `npx tsc -b`, about 40 s). Huddle on PostgreSQL talks to the database through
 * bench/pgcount.mjs, the counting relay, so every statement is seen; the fake upstream answers.
 *
 * 1. The census: `--turns` turns one at a time, of two kinds — a first turn (`POST /v1/huddle`,
 *    which starts a session) and a next turn (`POST /v1/huddle/sessions/:id/messages`, which
 *    reads the session's history), each non-streaming and streaming. Per turn: writes
 *    (statements that change rows), commits (each a WAL flush: a `COMMIT`, or a write outside a
 *    transaction), round trips, Huddle's CPU, the latency, and the statements.
 * 2. CPU per turn under load: first turns at `--connections` for `--seconds` (after as long to
 *    warm up), user + system CPU of Huddle's process over the turns it answered.
 * 3. The money, after Huddle stopped: every balance equals its ledger, none negative, none held.
 *
 * The org pool pays (the member has no credits of their own), as in the gateway section.
 * Options: --turns N (100) --connections N (16) --seconds S (4) --json FILE (write the results)
 * --clock-offset MS (accepted for `npm run bench`'s sections; its log has no clock)
 * Exit status: 0 when it measured; 1 when a turn failed or the money did not add up.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Pool } from "undici"
import * as Huddle from "./lib/huddle.mjs"
import * as Load from "./lib/load.mjs"
import * as Money from "./lib/money.mjs"
import * as Postgres from "./lib/postgres.mjs"
import * as Proc from "./lib/processes.mjs"
import { failedMoney, print } from "./lib/turnReport.mjs"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const serverMain = join(root, "packages/server/dist/main.js")
const { values: args } = parseArgs({
  options: {
    turns: { type: "string", default: "100" },
    connections: { type: "string", default: "16" },
    seconds: { type: "string", default: "4" },
    json: { type: "string" },
    "clock-offset": { type: "string" }
  }
})
const turns = Number(args.turns)
const connections = Number(args.connections)
const seconds = Number(args.seconds)
for (const [name, value] of [["turns", turns], ["connections", connections], ["seconds", seconds]]) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a whole number of at least 1`)
}

const work = mkdtempSync(join(tmpdir(), "huddle-turn-"))
const watchdog = setTimeout(() => {
  console.error("[turn] time limit reached")
  Proc.stopAll().finally(() => process.exit(1))
}, 180_000)

const question = "How should a small team review each other's changes?"
const bodyOf = (mode) => JSON.stringify(mode === "start" ? { input: question, mode: "single" } : { content: question, mode: "single" })

let database
const main = async () => {
  const upstream = await Proc.spawnReadyLine("upstream", [join(root, "bench/upstream.mjs")], join(work, "upstream.log"))
  database = await Postgres.create()
  const admin = new URL(Postgres.adminUrl())
  const counter = await Proc.spawnReadyLine("pgcount", [join(root, "bench/pgcount.mjs"), `${admin.hostname}:${admin.port || 5432}`], join(work, "pgcount.log"))
  const counted = new URL(database.url)
  counted.port = String(counter.port)
  const port = await Proc.freePort()
  const url = `http://127.0.0.1:${port}`
  // As `npm start` runs it.
  const launch = Huddle.startCommand(root)
  const env = launch.withDefaults(Huddle.serverEnv({
    port,
    databaseUrl: counted.toString(),
    catalogPath: Huddle.writeCatalog(work),
    upstreamBaseUrl: upstream.baseUrl,
    upstreamKey: "sk-bench-upstream",
    starterCredits: 0,
    observability: "off"
  }))
  const server = await Proc.spawnServer("huddle-turn", [...launch.nodeArgs, serverMain], env, join(work, "huddle.log"), `${url}/readyz`)
  const accounts = await Huddle.setup(url, { keys: 1, orgCredits: 1_000_000_000_000 })
  const key = accounts.apiKeys[0]
  const pool = new Pool(url, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 })

  /** One turn; its session id and its time. A turn that is not answered in full fails the run. */
  const turn = async (kind, stream, sessionId) => {
    const path = kind === "start" ? "/v1/huddle" : `/v1/huddle/sessions/${sessionId}/messages`
    const t0 = process.hrtime.bigint()
    const res = await pool.request({
      method: "POST",
      path: stream ? `${path}?stream=true` : path,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: bodyOf(kind)
    })
    const text = await res.body.text()
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    if (res.statusCode !== 200) throw new Error(`${kind} turn: ${res.statusCode} ${text.slice(0, 300)}`)
    let reply
    if (stream) {
      const metadata = text.split("\n\n").find((event) => event.startsWith("event: metadata"))
      if (!metadata || !text.includes('"status":"completed"')) throw new Error(`${kind} turn (streamed) did not complete: ${text.slice(-300)}`)
      reply = JSON.parse(metadata.slice(metadata.indexOf("data: ") + 6))
    } else {
      reply = JSON.parse(text)
      if (reply.status !== "completed") throw new Error(`${kind} turn did not complete: ${text.slice(0, 300)}`)
    }
    return { ms, sessionId: reply.session_id }
  }

  const stats = async (reset) => (await fetch(`${counter.control}/${reset ? "reset" : "stats"}`, { method: reset ? "POST" : "GET" })).json()

  // Warm-up: caches filled, connections open, the JIT settled.
  const warm = (await turn("start", false)).sessionId
  for (let i = 0; i < 20; i++) await turn(i % 2 === 0 ? "start" : "next", i % 4 >= 2, warm)

  const census = []
  for (const kind of ["start", "next"]) {
    for (const stream of [false, true]) {
      // A next turn reads its session's history: sessions made beforehand, 4 next turns each.
      const sessions = []
      if (kind === "next") for (let i = 0; i < Math.ceil(turns / 4); i++) sessions.push((await turn("start", false)).sessionId)
      await stats(true)
      const cpuBefore = Proc.cpuMsOf(server.pid)
      const latencies = []
      for (let i = 0; i < turns; i++) latencies.push((await turn(kind, stream, sessions[Math.floor(i / 4)])).ms)
      const cpuMs = Proc.cpuMsOf(server.pid) - cpuBefore
      census.push({ kind, stream, cpuMs, counted: await stats(false), latencies: latencies.sort((a, b) => a - b) })
    }
  }

  // Under load: first turns, non-streaming.
  const options = {
    url: `${url}/v1/huddle`,
    method: "POST",
    body: bodyOf("start"),
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    connections
  }
  await Load.plain({ ...options, duration: seconds })
  const cpuBefore = Proc.cpuMsOf(server.pid)
  const loaded = await Load.plain({ ...options, duration: seconds })
  const loadedCpu = Proc.cpuMsOf(server.pid) - cpuBefore
  if (loaded.errors > 0 || loaded.non2xx > 0) throw new Error(`under load: ${loaded.errors} errors, ${loaded.non2xx} non-2xx answers`)

  await pool.close()
  await Proc.stop(server.entry)
  const money = await Money.integrity(database.url)
  // What was left held, to tell a cut turn from a lost settlement.
  if (money.held > 0) {
    money.heldRows = await Postgres.query(
      database.url,
      `SELECT r.purpose, r.amount::float8 AS amount, r.created_at, i.status AS intent_status
       FROM credit_reservations r LEFT JOIN intents i ON r.purpose = 'intent ' || i.id WHERE r.status = 'held'`
    )
  }
  return { census, loaded: { connections, seconds, answered: loaded["2xx"], rps: loaded["2xx"] / loaded.duration, cpuMsPerTurn: loadedCpu / Math.max(1, loaded["2xx"]) }, money }
}

/** The census's figures per turn. */
const summarise = ({ census, loaded, money }) => ({
  rows: census.map(({ kind, stream, cpuMs, counted, latencies }) => ({
    kind,
    stream,
    writes: counted.writes / turns,
    commits: counted.commits / turns,
    roundTrips: counted.roundTrips / turns,
    cpuMs: cpuMs / turns,
    p50: Load.percentile(latencies, 50),
    statements: Object.entries(counted.statements).map(([sql, count]) => ({ sql, perTurn: count / turns })).sort((a, b) => b.perTurn - a.perTurn)
  })),
  loaded,
  money
})

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (isMain) {
  main()
    .then(async (measured) => {
      const results = summarise(measured)
      print(results)
      if (args.json) writeFileSync(args.json, JSON.stringify(results, null, 2))
      await Proc.stopAll()
      await database?.drop()
      if (failedMoney(results.money)) console.error(`[turn] logs kept in ${work}`)
      else rmSync(work, { recursive: true, force: true })
      clearTimeout(watchdog)
      process.exit(failedMoney(results.money) ? 1 : 0)
    })
    .catch(async (error) => {
      console.error("[turn]", error.stack ?? error.message)
      console.error(`[turn] logs kept in ${work}`)
      await Proc.stopAll()
      await database?.drop().catch(() => {})
      process.exit(1)
    })
}
