/**
 * An instance killed (kill -9) under load has charged every answer it gave (decision 0041): a
 * complete answer (the non-streamed body, the streamed `[DONE]`) leaves only once its charge is
 * in the database. Two REAL server processes on one PostgreSQL; the survivor then gives back what
 * the killed one still held. PostgreSQL only; a Process suite, so it runs alone, at the end.
 */
import { Accounts, FakeOpenAi, TestDatabase } from "@huddle/testkit"
import { Redacted } from "effect"
import pg from "pg"
import { Pool } from "undici"
import { afterAll, afterEach, expect, it } from "vitest"
import { killAll, onCleanup, sleep, startServer, withTimeout } from "./serverProcesses.js"

afterEach(killAll)
afterAll(killAll)

const postgres = TestDatabase.availableEngines().includes("postgres")

it.runIf(postgres)("charges every answer an instance gave before it was killed, and gives back what it held", async () => {
  const database = await TestDatabase.fresh("postgres")
  onCleanup(() => database.drop())
  if (database.engine._tag !== "Postgres") throw new Error("expected PostgreSQL")
  const url = Redacted.value(database.engine.url)
  const fake = await FakeOpenAi.start({ apiKey: "sk-crash-charges", recordRequests: false })
  onCleanup(() => fake.stop())
  const env = {
    DATABASE_URL: url,
    OPENAI_API_KEY: "sk-crash-charges",
    OPENAI_BASE_URL: fake.baseUrl,
    HUDDLE_STARTER_CREDITS: "1000000",
    HUDDLE_RATE_CHAT: "1000000",
    HUDDLE_HEARTBEAT_INTERVAL: "250 millis",
    HUDDLE_INSTANCE_STALE_AFTER: "1500 millis"
  }
  const [doomed, survivor] = await Promise.all([startServer(env), startServer(env)])

  // One user per client, each asking one request at a time: a user's answers are the first
  // `answered` of their requests, and at most one more was in flight when the instance died.
  const clients = 16
  const users = await Promise.all(Array.from({ length: clients }, async (_, i) => {
    const user = await Accounts.signupAndLogin(survivor.api, `crash${i}`)
    const { key } = await Accounts.createApiKey(survivor.api, user)
    return { id: user.id, key, answered: 0 }
  }))
  const pool = new Pool(doomed.url, { connections: clients })
  let killed = false
  const ask = async (user: (typeof users)[number], stream: boolean): Promise<void> => {
    while (!killed) {
      const res = await pool.request({
        method: "POST",
        path: "/v1/chat/completions",
        headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "standard", stream, messages: [{ role: "user", content: "hi" }] })
      })
      const text = await res.body.text()
      // Complete: the whole body, or the stream's `[DONE]`.
      const complete = res.statusCode === 200 && (stream ? text.includes("data: [DONE]") : JSON.parse(text).object === "chat.completion")
      if (!complete) throw new Error(`${res.statusCode}: ${text.slice(0, 200)}`)
      user.answered++
    }
  }
  const failures: Array<string> = []
  const asking = users.map((user, i) =>
    ask(user, i % 2 === 0).catch((error: unknown) => {
      if (!killed) failures.push(String(error))
    })
  )
  // Killed under load, in the middle of answering: once the answers flow (however busy the machine).
  const total = () => users.reduce((sum, user) => sum + user.answered, 0)
  for (const started = Date.now(); total() < 4 * clients && Date.now() - started < 30_000;) await sleep(50)
  await sleep(300)
  killed = true
  doomed.child.kill("SIGKILL")
  await withTimeout(doomed.exited, 10_000, "exit after SIGKILL")
  await Promise.all(asking)
  await pool.destroy().catch(() => undefined)
  // Only the kill cut them.
  expect(failures).toEqual([])

  const client = new pg.Client({ connectionString: url })
  await client.connect()
  onCleanup(() => client.end())
  // The survivor gives back what the killed instance held (its heartbeat is stale after 1.5 s).
  let left = { held: -1, leased: -1 }
  for (const started = Date.now(); Date.now() - started < 20_000; await sleep(200)) {
    const { rows } = await client.query<{ held: string; leased: string }>(
      `SELECT (SELECT count(*) FROM credit_reservations WHERE status = 'held') AS held,
              (SELECT COALESCE(SUM(leased), 0) FROM credit_accounts) AS leased`
    )
    left = { held: Number(rows[0]!.held), leased: Number(rows[0]!.leased) }
    if (left.held === 0 && left.leased === 0) break
  }
  expect(left).toEqual({ held: 0, leased: 0 })

  const { rows } = await client.query<{ user_id: string; settled: string }>(
    `SELECT user_id, count(*) AS settled FROM credit_reservations WHERE status = 'settled' GROUP BY user_id`
  )
  const settled = new Map(rows.map((row) => [row.user_id, Number(row.settled)]))
  const answered = users.reduce((sum, user) => sum + user.answered, 0)
  const uncharged = users.reduce((sum, user) => sum + Math.max(0, user.answered - (settled.get(user.id) ?? 0)), 0)
  console.log(`[crash] ${answered} answers before kill -9; answered but not charged: ${uncharged}`)
  expect(answered).toBeGreaterThanOrEqual(4 * clients)
  expect(uncharged).toBe(0)
  // Every balance is still the sum of its ledger.
  const { rows: drift } = await client.query(
    `SELECT a.id FROM credit_accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id
     GROUP BY a.id, a.balance HAVING a.balance <> COALESCE(SUM(l.delta), 0)`
  )
  expect(drift).toEqual([])
}, 120_000)
