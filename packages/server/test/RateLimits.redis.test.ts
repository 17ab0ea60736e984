/**
 * Rate limits with the Redis store, against the real Redis at 127.0.0.1:6379 (`REDIS_TEST_URL`
 * to use another; CI starts one): the shared cases, counters shared between instances, and what
 * happens when Redis cannot be reached (HUDDLE_RATE_LIMIT_ON_STORE_ERROR open and closed). Every
 * server and store here uses a key prefix of its own, so runs never see each other's counters.
 */
import { createHash, randomBytes } from "node:crypto"
import * as RateLimitStore from "@huddle/adapters/RateLimitStore"
import * as RateLimiting from "@huddle/server/shared/RateLimiting"
import { Accounts, TestServer } from "@huddle/testkit"
import { Effect, Layer, Redacted } from "effect"
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectLimited, expectRetryAfter, limits, principal, rateHeaders, registerAnyLimit, registerScenarios } from "./rateLimitScenarios.js"
import { tcpProxy } from "./serverProcesses.js"

const redisUrl = process.env.REDIS_TEST_URL ?? "redis://127.0.0.1:6379"
const unreachable = "redis://:hunter2@127.0.0.1:1"
const uniquePrefix = () => `huddle-test:${randomBytes(6).toString("hex")}:`

describe("rate limits, Redis store", () => {
  registerScenarios(() => TestServer.start({ rateLimits: { ...limits, redisUrl, redisPrefix: uniquePrefix() } }))
})

describe("limits of any size in Redis", () => {
  registerAnyLimit(() => ({ _tag: "Redis", url: Redacted.make(redisUrl), prefix: uniquePrefix(), timeout: RateLimitStore.defaultTimeout }))

  // Redis took only whole milliseconds of window/limit: with these, every limited request was
  // refused (503, failing closed) or went unlimited (failing open).
  for (const onStoreError of ["closed", "open"] as const) {
    describe(`over HTTP, failing ${onStoreError}`, () => {
      let server: TestServer.TestServer
      beforeAll(async () => {
        server = await TestServer.start({
          rateLimits: { intent: 100_000, chat: 60, read: 7, redisUrl, redisPrefix: uniquePrefix(), onStoreError }
        })
      })
      afterAll(() => server.stop())

      it("limits reads to 7 a minute and intents to 100 000", async () => {
        const user = await Accounts.signupAndLogin(server)
        for (let i = 1; i <= 7; i++) {
          const res = await server.request("GET", "/v1/me", { token: user.session })
          expect(res.status, res.text).toBe(200)
          expect(rateHeaders(res)).toMatchObject({ limit: 7, remaining: 7 - i })
        }
        expectLimited(await server.request("GET", "/v1/me", { token: user.session }), 7)
        const huddle = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "hello" } })
        expect(huddle.status, huddle.text).toBe(200)
        expect(rateHeaders(huddle)).toMatchObject({ limit: 100_000, remaining: 99_999 })
        expect(server.logs.join("\n")).not.toContain("rate-limit store unavailable")
      })
    })
  }
})

describe("counters in Redis", () => {
  const prefix = uniquePrefix()
  const instance = () =>
    RateLimiting.layer({
      limits,
      store: { _tag: "Redis", url: Redacted.make(redisUrl), prefix, timeout: RateLimitStore.defaultTimeout },
      onStoreError: "closed"
    })

  it("are shared by every instance that uses the same Redis", async () => {
    const verdicts = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          // Two instances: each its own RateLimiter and Redis connection.
          const a = RateLimiting.RateLimits.pipe(Effect.provide(yield* Layer.build(instance())))
          const b = RateLimiting.RateLimits.pipe(Effect.provide(yield* Layer.build(instance())))
          const first = yield* a
          const second = yield* b
          const who = principal("key_shared")
          return [
            yield* first.check(who, "intent"),
            yield* second.check(who, "intent"),
            yield* first.check(who, "intent"),
            yield* second.check(who, "intent"),
            yield* second.check(who, "read"),
            yield* first.check(principal("key_other"), "intent")
          ]
        })
      )
    )
    expect(verdicts.map((v) => (v._tag === "Admitted" ? v.remaining : v._tag))).toEqual([2, 1, 0, "Limited", limits.read - 1, 2])

    // The counters are Redis keys under the prefix, per class and credential, that expire.
    const redis = new Redis(redisUrl)
    try {
      expect((await redis.keys(`${prefix}*`)).sort()).toEqual(
        [`${prefix}intent:key_other`, `${prefix}intent:key_shared`, `${prefix}read:key_shared`]
      )
      const ttl = await redis.pttl(`${prefix}intent:key_shared`)
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(60_000)
    } finally {
      await redis.quit()
    }
  })
})

describe("Redis unreachable, failing open (the default)", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ rateLimits: { ...limits, redisUrl: unreachable, redisPrefix: uniquePrefix() } })
  })
  afterAll(() => server.stop())

  it("lets requests through without limits or headers, and logs a warning without the URL's secret", async () => {
    const user = await Accounts.signupAndLogin(server)
    for (let i = 0; i < limits.intent + 2; i++) {
      const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "still answered?" } })
      expect(res.status, res.text).toBe(200)
      expect(res.headers.get("ratelimit-limit")).toBeNull()
    }
    expect((await server.request("GET", "/v1/me", { token: user.session })).status).toBe(200)
    const warnings = server.logs.filter((line) => line.includes("rate-limit store unavailable"))
    // One warning, not one per request.
    expect(warnings).toHaveLength(1)
    expect(JSON.parse(warnings[0]!)).toMatchObject({ logLevel: "WARN" })
    expect(server.logs.join("\n")).not.toContain("hunter2")
  })
})

/** A TCP proxy to Redis that a test can cut and restore, to take Redis away mid-traffic. */
const redisProxy = async () => {
  const target = new URL(redisUrl)
  const proxy = await tcpProxy(target.hostname, Number(target.port || 6379))
  return { url: `redis://127.0.0.1:${proxy.port}`, cut: proxy.cut, restore: proxy.restore }
}

/** A user with a web session, written straight into the database of a server that cannot sign anyone in. */
const downSession = `hs_${"d".repeat(12)}_${"s".repeat(43)}`
const downUserSql = `
  INSERT INTO users (id, email, password_hash, created_at) VALUES ('usr_down', 'down@example.com', 'unused', now());
  INSERT INTO web_sessions (id, user_id, prefix, token_hash, created_at, expires_at)
  VALUES ('ses_down', 'usr_down', 'hs_${"d".repeat(12)}', '${createHash("sha256").update(downSession).digest("hex")}', now(), now() + interval '1 day');`

describe("Redis unreachable, failing closed", () => {
  let server: TestServer.TestServer
  let down: TestServer.TestServer
  let proxy: Awaited<ReturnType<typeof redisProxy>>
  beforeAll(async () => {
    proxy = await redisProxy()
    ;[server, down] = await Promise.all([
      TestServer.start({ rateLimits: { ...limits, redisUrl: proxy.url, redisPrefix: uniquePrefix(), onStoreError: "closed" } }),
      // Sign-up and login are throttled in the same store, so refused too: its user is made in SQL.
      TestServer.start({ rateLimits: { ...limits, redisUrl: unreachable, redisPrefix: uniquePrefix(), onStoreError: "closed" }, setupSql: downUserSql })
    ])
  })
  afterAll(async () => {
    await Promise.all([server.stop(), down.stop()])
    await proxy.cut()
  })

  const expectUnavailable = (res: TestServer.Response) => {
    expect(res.status, res.text).toBe(503)
    expect(res.headers.get("retry-after")).toBe(String(RateLimiting.storeRetryAfterSeconds))
    expectRetryAfter(res)
  }

  it("answers every limited endpoint 503 with Retry-After, in each endpoint's envelope; unlimited ones still work", async () => {
    // The sign-in throttles fail closed too (decision 0040): no unthrottled guessing while Redis is away.
    const credentials = { email: "down@example.com", password: "a long password" }
    expectUnavailable(await down.request("POST", "/v1/auth/signup", { body: { email: Accounts.uniqueEmail(), password: "a long password" } }))
    const login = await down.request("POST", "/v1/auth/login", { body: credentials })
    expectUnavailable(login)
    expect(login.body).toEqual({ error: "SERVICE_UNAVAILABLE", message: expect.any(String) })
    const user = { session: downSession }
    const huddle = await down.request("POST", "/v1/huddle", { token: user.session, body: { input: "hello" } })
    expectUnavailable(huddle)
    expect(huddle.body).toEqual({ error: "SERVICE_UNAVAILABLE", message: expect.any(String) })
    expectUnavailable(await down.request("GET", "/v1/me", { token: user.session }))
    const rpc = await down.request("POST", "/v1/rpc", { token: user.session, body: { jsonrpc: "2.0", method: "intent.submit", params: { input: "x" }, id: 1 } })
    expectUnavailable(rpc)
    expect(rpc.body).toEqual({ error: "SERVICE_UNAVAILABLE", message: expect.any(String) })
    const chat = await down.request("POST", "/v1/chat/completions", {
      token: user.session,
      body: { model: "standard", messages: [{ role: "user", content: "hi" }] }
    })
    expectUnavailable(chat)
    expect(chat.body).toMatchObject({ error: { type: "server_error", code: "SERVICE_UNAVAILABLE" } })
    expect((await down.request("PUT", "/v1/me/preferences", { token: user.session, body: { model_tier: "economy" } })).status).toBe(200)
    expect(down.logs.join("\n")).not.toContain("hunter2")
  })

  it("refuses while Redis is away, changing nothing, and recovers without a restart when it is back", async () => {
    const user = await Accounts.signupAndLogin(server)
    const first = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "before" } })
    expect(first.status, first.text).toBe(200)
    expect(rateHeaders(first)).toMatchObject({ limit: limits.intent, remaining: limits.intent - 1 })
    const balance = (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance

    await proxy.cut()
    for (let i = 0; i < 3; i++) {
      expectUnavailable(await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "during" } }))
    }
    expectUnavailable(
      await server.request("POST", `/v1/huddle/sessions/${first.body.session_id}/messages`, { token: user.session, body: { content: "during" } })
    )

    await proxy.restore()
    const deadline = Date.now() + 10_000
    let me = await server.request("GET", "/v1/me", { token: user.session })
    while (me.status === 503 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      me = await server.request("GET", "/v1/me", { token: user.session })
    }
    expect(me.status, me.text).toBe(200)
    expect(me.body.credits.balance).toBe(balance)
    const sessions = await server.request("GET", "/v1/huddle/sessions", { token: user.session })
    expect(sessions.body.data.map((s: { id: string }) => s.id)).toEqual([first.body.session_id])
    const session = await server.request("GET", `/v1/huddle/sessions/${first.body.session_id}`, { token: user.session })
    expect(session.body.messages).toHaveLength(2)
    // The counters survived the outage: one intent used before it, none during.
    const after = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "after" } })
    expect(after.status, after.text).toBe(200)
    expect(rateHeaders(after)).toMatchObject({ limit: limits.intent, remaining: limits.intent - 2 })
  }, 30_000)
})
