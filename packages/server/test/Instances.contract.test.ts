/**
 * Many instances: two REAL server processes on two ports sharing one fresh PostgreSQL database
 * and one Redis (127.0.0.1:6379, `REDIS_TEST_URL` to use another), started at the same time
 * against the empty database (the migrator takes a lock). PostgreSQL only (`npm run
 * test:postgres`). Rate limits are shared, credits are not overspent, a key revoked on one is
 * refused on the other within the change feed's bound, and sessions made on one are seen by the
 * other.
 */
import { randomBytes } from "node:crypto"
import { Accounts, Orgs, TestDatabase } from "@huddle/testkit"
import { Redacted } from "effect"
import pg from "pg"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { existsSync } from "node:fs"
import { killAll, mainJs, onCleanup, type Running, sleep, startServer } from "./serverProcesses.js"

afterEach(killAll)
afterAll(killAll)

// Always registered, so the file has a test on PGlite too (where the cases below do not apply).
it("finds the built server", () => {
  expect(existsSync(mainJs), `${mainJs} is missing: run tsc -b first`).toBe(true)
})

const redisUrl = process.env.REDIS_TEST_URL ?? "redis://127.0.0.1:6379"
const intentLimit = 5
const input = "plan a short team offsite"

const query = async <A>(url: string, text: string): Promise<Array<A>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows as Array<A>
  } finally {
    await client.end()
  }
}

const freshDatabase = async () => {
  const database = await TestDatabase.fresh("postgres")
  onCleanup(() => database.drop())
  if (database.engine._tag !== "Postgres") throw new Error("expected a PostgreSQL database")
  return Redacted.value(database.engine.url)
}

const envFor = (databaseUrl: string, starterCredits: number, prefix: string, limits = { intent: intentLimit, read: 120 }) => ({
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl,
  HUDDLE_RATE_LIMIT_PREFIX: prefix,
  HUDDLE_RATE_INTENT: String(limits.intent),
  HUDDLE_RATE_READ: String(limits.read),
  HUDDLE_STARTER_CREDITS: String(starterCredits)
})

/**
 * What an instance promises about changes made through another (decision 0013): the change holds
 * there once its notification has arrived, which is usually at once, and however loaded the
 * machine, at the latest three heartbeats (3 s) after its commit: until then the change feed has
 * either delivered it or counts as down, and then the caches are off. So `seen` is asked until it
 * holds, and an ask that began more than that bound after the change was made must see it.
 */
const feedBoundMs = 3_000
const lags: Array<number> = []
const followed = async (what: string, seen: () => Promise<boolean>) => {
  const changedBy = Date.now()
  let pause = 10
  for (;;) {
    const asked = Date.now()
    if (await seen()) {
      lags.push(asked - changedBy)
      return
    }
    if (asked - changedBy > feedBoundMs) throw new Error(`${what}: not seen on the other instance ${feedBoundMs} ms after the change`)
    await sleep(pause)
    pause = Math.min(2 * pause, 200)
  }
}

/**
 * What one huddle of `input` reserves (its worst case) and is then charged by the offline model,
 * measured on a throwaway server and database.
 */
const measureHuddle = async () => {
  const url = await freshDatabase()
  const server = await startServer(envFor(url, 10_000, `huddle-test:${randomBytes(6).toString("hex")}:`))
  const user = await Accounts.signupAndLogin(server.api, "measure")
  const res = await server.api.request("POST", "/v1/huddle", { token: user.session, body: { input } })
  expect(res.status, res.text).toBe(200)
  // A reservation from a credit lease reaches its row with the instance's next batch (decision 0021).
  let row: { amount: string; actual: string } | undefined
  for (const started = Date.now(); row === undefined && Date.now() - started < 5_000; await sleep(20)) {
    ;[row] = await query<{ amount: string; actual: string }>(url, "SELECT amount, actual FROM credit_reservations WHERE status = 'settled'")
  }
  server.child.kill("SIGKILL")
  return { reserved: Number(row!.amount), charged: Number(row!.actual) }
}

describe.each(TestDatabase.availableEngines().filter((engine) => engine === "postgres"))("two instances (%s)", () => {
  it("share rate limits, credits, revocations and sessions", async () => {
    const { reserved, charged } = await measureHuddle()
    expect(charged).toBeGreaterThan(0)
    // Covers exactly `huddles` huddles one after another: the last one's worst case, the rest's
    // real cost.
    const huddles = intentLimit
    const starterCredits = reserved + (huddles - 1) * charged

    const url = await freshDatabase()
    const prefix = `huddle-test:${randomBytes(6).toString("hex")}:`
    // Both start at once against the same empty database: the migrations run once.
    const [a, b] = await Promise.all([startServer(envFor(url, starterCredits, prefix)), startServer(envFor(url, starterCredits, prefix))])
    const migrations = await query<{ count: string }>(url, "SELECT count(*) FROM effect_sql_migrations")
    expect(Number(migrations[0]!.count)).toBeGreaterThan(0)
    const instances: ReadonlyArray<Running> = [a, b]
    const on = (i: number) => instances[i % 2]!.api

    // Sessions: made on one, valid on the other; a huddle session made on A is read on B.
    const user = await Accounts.signupAndLogin(a.api, "instances")
    const seen = await b.api.request("GET", "/v1/me", { token: user.session })
    expect(seen.status, seen.text).toBe(200)
    expect(seen.body.user.id).toBe(user.id)

    // Rate limits: the intent limit holds across both (one key, alternating instances).
    const limited = await Accounts.createApiKey(a.api, user, { name: "limited" })
    let sessionId = ""
    for (let i = 0; i < intentLimit; i++) {
      const res = await on(i).request("POST", "/v1/huddle", { token: limited.key, body: { input } })
      expect(res.status, res.text).toBe(200)
      expect(res.headers.get("ratelimit-remaining")).toBe(String(intentLimit - 1 - i))
      if (i === 0) sessionId = res.body.session_id
    }
    const refused = await on(intentLimit).request("POST", "/v1/huddle", { token: limited.key, body: { input } })
    expect(refused.status, refused.text).toBe(429)
    expect(refused.body).toEqual({ error: "RATE_LIMITED", message: expect.any(String) })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    const again = await on(0).request("POST", "/v1/huddle", { token: limited.key, body: { input } })
    expect(again.status).toBe(429)

    const session = await b.api.request("GET", `/v1/huddle/sessions/${sessionId}`, { token: user.session })
    expect(session.status, session.text).toBe(200)
    expect(session.body.id).toBe(sessionId)

    // Revocation: a key revoked on A is refused on B as soon as B has heard of it (within the feed's bound).
    const revoked = await Accounts.createApiKey(a.api, user, { name: "revoked" })
    expect((await b.api.request("GET", "/v1/me", { token: revoked.key })).status).toBe(200)
    const del = await a.api.request("DELETE", `/v1/api-keys/${revoked.id}`, { token: user.session })
    expect(del.status, del.text).toBeLessThan(300)
    await followed("the revoked key refused", async () => {
      const afterRevoke = await b.api.request("GET", "/v1/me", { token: revoked.key })
      expect([200, 401], afterRevoke.text).toContain(afterRevoke.status)
      return afterRevoke.status === 401
    })

    // Credits: a fresh user whose starter credits cover `huddles` huddles sends twice as many at
    // once, split over both instances, each with a key of its own (so rate limits play no part).
    const spender = await Accounts.signupAndLogin(b.api, "spender")
    const keys = await Promise.all(Array.from({ length: 2 * huddles }, (_, i) => Accounts.createApiKey(on(i), spender, { name: `k${i}` })))
    const results = await Promise.all(
      keys.map((key, i) => on(i).request("POST", "/v1/huddle", { token: key.key, body: { input } }))
    )
    for (const res of results) expect([200, 402], res.text).toContain(res.status)
    const succeeded = results.filter((res) => res.status === 200).length
    // Each instance writes its leased reservations with its next batch (decision 0021): A's
    // balance includes what B settled at most a tick later.
    const balanceOnA = async () => (await a.api.request("GET", "/v1/me", { token: spender.session })).body.credits.balance as number
    let balance = await balanceOnA()
    for (const started = Date.now(); balance !== starterCredits - succeeded * charged && Date.now() - started < 2_000; await sleep(20)) {
      balance = await balanceOnA()
    }
    expect(balance).toBeGreaterThanOrEqual(0)
    expect(balance).toBe(starterCredits - succeeded * charged)
    expect(succeeded).toBeGreaterThanOrEqual(1)
    // At least the `huddles` the credits cover at their worst case; more when a balance short of
    // a worst case lowers a huddle's max_tokens instead of refusing it (decision 0020), but never
    // more than the credits pay for.
    expect(succeeded).toBeLessThanOrEqual(Math.floor(starterCredits / charged))
    // When the worst case is the real cost, the outcome does not depend on timing.
    if (reserved === charged) expect(succeeded).toBe(huddles)
    const held = await query<{ id: string }>(url, "SELECT id FROM credit_reservations WHERE status = 'held'")
    expect(held).toEqual([])
    const mismatched = await query<{ id: string }>(
      url,
      `SELECT a.id FROM credit_accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id
        GROUP BY a.id, a.balance HAVING a.balance <> COALESCE(SUM(l.delta), 0)`
    )
    expect(mismatched).toEqual([])
    console.log(
      `[instances] huddle reserves ${reserved}, costs ${charged}; starter ${starterCredits}: ` +
        `${succeeded}/${2 * huddles} concurrent huddles succeeded, balance ${balance}`
    )
  }, 120_000)

  // Each instance caches what it reads on every request (keys, memberships, policies, memories);
  // a change made through one holds on the other within the change feed's bound, and never
  // reverts once seen.
  it("follow on one instance what changed through the other, at the latest three heartbeats after the change", async () => {
    const url = await freshDatabase()
    const prefix = `huddle-test:${randomBytes(6).toString("hex")}:`
    // Limits high enough for the reads that wait for a change.
    const env = envFor(url, 10_000, prefix, { intent: 1_000, read: 10_000 })
    const [a, b] = await Promise.all([startServer(env), startServer(env)])
    const org = await Orgs.createOrg(a.api)
    const member = await Orgs.addMember(a.api, org)
    const inOrg = { token: member.session, headers: { "openai-organization": org.id } }
    const modelIds = async () => {
      const res = await b.api.request("GET", "/v1/models", inOrg)
      expect(res.status, res.text).toBe(200)
      return (res.body.data as ReadonlyArray<{ id: string }>).map((model) => model.id)
    }
    const huddleOnB = async () => {
      const res = await b.api.request("POST", "/v1/huddle", { token: member.session, body: { input: "What is the release train called?", org_id: org.id } })
      expect(res.status, res.text).toBe(200)
      return res.body.output as string
    }

    for (let round = 0; round < 3; round++) {
      // Policies: B has read them (twice, so they are cached) before A changes them.
      await modelIds()
      expect(await modelIds()).toContain("premium")
      const strict = await a.api.request("PUT", `/v1/orgs/${org.id}/admin/policies`, {
        token: org.admin.session,
        body: { model_tier: round % 2 === 0 ? "economy" : "standard" }
      })
      expect(strict.status, strict.text).toBe(200)
      await followed("the stricter tier", async () => !(await modelIds()).includes("premium"))
      expect(await modelIds()).not.toContain("premium")
      const lifted = await a.api.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: {} })
      expect(lifted.status, lifted.text).toBe(200)
      await followed("the lifted tier", async () => (await modelIds()).includes("premium"))
      expect(await modelIds()).toContain("premium")
    }

    // Memories: an org memory written through A reaches the model through B.
    expect(await huddleOnB()).not.toContain("osprey")
    const remembered = await a.api.request("POST", "/v1/memories", {
      token: org.admin.session,
      body: { scope: "org", org_id: org.id, content: "The release train is called osprey." }
    })
    expect(remembered.status, remembered.text).toBe(201)
    await followed("the org memory", async () => (await huddleOnB()).includes("osprey"))
    expect(await huddleOnB()).toContain("osprey")

    // Membership: removed through A, the member is out of the org on B.
    const removed = await a.api.request("DELETE", `/v1/orgs/${org.id}/admin/members/${member.id}`, { token: org.admin.session })
    expect(removed.status, removed.text).toBeLessThan(300)
    const outsideStatus = async () => {
      const res = await b.api.request("GET", "/v1/models", inOrg)
      expect([200, 404], res.text).toContain(res.status)
      return res.status
    }
    await followed("the removed membership", async () => (await outsideStatus()) === 404)
    expect(await outsideStatus()).toBe(404)
    console.log(`[instances] changes through A seen on B after ${lags.join(", ")} ms (bound ${feedBoundMs} ms)`)
  }, 120_000)
})
