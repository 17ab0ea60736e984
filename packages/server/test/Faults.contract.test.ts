/**
 * PostgreSQL taken away mid-traffic, against the REAL built server process and the real
 * PostgreSQL (`npm run test:postgres`; PostgreSQL only, PGlite is in-process and cannot be cut).
 * The server reaches PostgreSQL through a TCP proxy that the test cuts (open connections
 * destroyed, new ones refused) and restores: requests answer 503 in the envelope with
 * `Retry-After` within a bounded time, `/readyz` fails while `/healthz` stays up, no ledger row
 * is half-written, and service resumes without a restart.
 */
import { Accounts, TestDatabase, TestServer } from "@huddle/testkit"
import { Redacted } from "effect"
import pg from "pg"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { existsSync } from "node:fs"
import { killAll, mainJs, onCleanup, type Running, sleep, startServer, tcpProxy } from "./serverProcesses.js"

afterEach(killAll)
afterAll(killAll)

// Always registered, so the file has a test on PGlite too (where the cases below do not apply).
it("finds the built server", () => {
  expect(existsSync(mainJs), `${mainJs} is missing: run tsc -b first`).toBe(true)
})

/** The bound on an answer while storage is away: connect timeout (3 s) plus slack. */
const answerWithinMs = 8_000
const retryAfter = "2"

/** A request with a client-side deadline: a hang fails the test instead of stalling it. */
const timed = async (server: Running, method: string, path: string, options: TestServer.RequestOptions = {}) => {
  const started = performance.now()
  const res = await Promise.race([
    TestServer.request(server.url, method, path, options),
    sleep(answerWithinMs + 5_000).then(() => {
      throw new Error(`${method} ${path}: no answer within ${answerWithinMs + 5_000} ms (hung)`)
    })
  ])
  return { res, ms: Math.round(performance.now() - started) }
}

const expectUnavailable = (res: TestServer.Response) => {
  expect(res.status, res.text).toBe(503)
  expect(res.headers.get("retry-after")).toBe(retryAfter)
}

const ledgerState = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const mismatched = await client.query(
      `SELECT a.id, a.balance, COALESCE(SUM(l.delta), 0)::bigint AS ledger
         FROM credit_accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id
        GROUP BY a.id, a.balance HAVING a.balance <> COALESCE(SUM(l.delta), 0)`
    )
    const held = await client.query(`SELECT id FROM credit_reservations WHERE status = 'held'`)
    return { mismatched: mismatched.rows, held: held.rows.length }
  } finally {
    await client.end()
  }
}

describe.each(TestDatabase.availableEngines().filter((engine) => engine === "postgres"))("PostgreSQL cut mid-traffic (%s)", () => {
  it("answers 503 with Retry-After, never hangs, writes no half ledger, and recovers without a restart", async () => {
    const database = await TestDatabase.fresh("postgres")
    onCleanup(() => database.drop())
    if (database.engine._tag !== "Postgres") throw new Error("expected a PostgreSQL database")
    const directUrl = Redacted.value(database.engine.url)
    const target = new URL(directUrl)
    const proxy = await tcpProxy(target.hostname, Number(target.port || 5432))
    onCleanup(() => proxy.cut())
    const viaProxy = new URL(directUrl)
    viaProxy.hostname = "127.0.0.1"
    viaProxy.port = String(proxy.port)

    const server = await startServer({ DATABASE_URL: viaProxy.toString(), HUDDLE_STARTER_CREDITS: "100000" })
    const user = await Accounts.signupAndLogin(server.api, "faults")
    const key = await Accounts.createApiKey(server.api, user)
    const balance = async () => {
      const me = await TestServer.request(server.url, "GET", "/v1/me", { token: key.key })
      expect(me.status, me.text).toBe(200)
      return me.body.credits.balance as number
    }
    const huddle = (input: string) => timed(server, "POST", "/v1/huddle", { token: key.key, body: { input } })

    // The charge of one huddle (the offline model, a fixed input).
    const input = "plan a short team offsite"
    const start = await balance()
    expect((await huddle(input)).res.status).toBe(200)
    const before = await balance()
    const charge = start - before
    expect(charge).toBeGreaterThan(0)

    // Cut while credit-spending requests are in flight.
    const inFlight = Array.from({ length: 12 }, () => huddle(input))
    await sleep(15)
    const cutAt = performance.now()
    await proxy.cut()
    const spent = await Promise.all(inFlight)
    for (const { res } of spent) {
      expect([200, 503], res.text).toContain(res.status)
      if (res.status === 503) expectUnavailable(res)
    }
    const completed = spent.filter(({ res }) => res.status === 200).length

    // While it is away: every storage-backed request answers 503 in its envelope, promptly.
    const during = await Promise.all([
      timed(server, "GET", "/v1/me", { token: key.key }),
      huddle(input),
      timed(server, "POST", "/v1/auth/login", { body: { email: user.email, password: user.password } }),
      timed(server, "POST", "/v1/chat/completions", {
        token: key.key,
        body: { model: "standard", messages: [{ role: "user", content: "hi" }] }
      })
    ])
    for (const { res } of during) expectUnavailable(res)
    const [me, spend, login, chat] = during.map(({ res }) => res)
    for (const res of [me!, spend!, login!]) expect(res.body).toEqual({ error: "SERVICE_UNAVAILABLE", message: expect.any(String) })
    expect(chat!.body).toMatchObject({ error: { type: "server_error", code: "SERVICE_UNAVAILABLE" } })
    const slowest = Math.max(...during.map(({ ms }) => ms))
    expect(slowest).toBeLessThan(answerWithinMs)

    const ready = await timed(server, "GET", "/readyz")
    expectUnavailable(ready.res)
    expect(ready.ms).toBeLessThan(answerWithinMs)
    const health = await timed(server, "GET", "/healthz")
    expect(health.res.status).toBe(200)
    const downFor = Math.round(performance.now() - cutAt)

    // Back: service resumes without a restart.
    await proxy.restore()
    const restoredAt = performance.now()
    let readyAgain = 0
    while (performance.now() - restoredAt < 15_000) {
      if ((await timed(server, "GET", "/readyz")).res.status === 200) {
        readyAgain = Math.round(performance.now() - restoredAt)
        break
      }
      await sleep(50)
    }
    expect(readyAgain, "readyz not 200 within 15 s of the restore").toBeGreaterThan(0)
    const after = await huddle(input)
    expect(after.res.status, after.res.text).toBe(200)
    const recovered = Math.round(performance.now() - restoredAt)
    expect(server.child.exitCode).toBeNull()

    // No half-written ledger: every balance is its ledger's sum, no reservation stays held (those
    // of requests that failed in the outage are closed in the background once the database is
    // back, within a few seconds), and the balance lost exactly the requests that completed.
    let state = await ledgerState(directUrl)
    while (state.held > 0 && performance.now() - restoredAt < 10_000) {
      await sleep(200)
      state = await ledgerState(directUrl)
    }
    expect(state).toEqual({ mismatched: [], held: 0 })
    const closedWithin = Math.round(performance.now() - restoredAt)
    expect(await balance()).toBe(before - charge * (completed + 1))

    console.log(
      `[faults] charge ${charge}; ${completed}/12 in-flight huddles completed around the cut; ` +
        `503s within ${slowest} ms (readyz ${ready.ms} ms), outage ${downFor} ms; ` +
        `readyz 200 ${readyAgain} ms after the restore, first huddle 200 at ${recovered} ms, nothing held at ${closedWithin} ms`
    )
  }, 90_000)
})
