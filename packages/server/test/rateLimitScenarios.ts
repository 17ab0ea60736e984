/**
 * The rate-limit cases that hold whatever the store: registered by RateLimits.test.ts (memory)
 * and RateLimits.redis.test.ts (Redis). Each case uses credentials of its own, so the cases share
 * one server without sharing budgets.
 */
import type * as RateLimitStore from "@huddle/adapters/RateLimitStore"
import { Principal } from "@huddle/domain/identity/Principal"
import { Email, User, UserId } from "@huddle/domain/identity/User"
import * as RateLimiting from "@huddle/server/shared/RateLimiting"
import { Accounts, TestServer } from "@huddle/testkit"
import { Array as Arr, Context, DateTime, Effect, Layer, Schema } from "effect"
import OpenAI from "openai"
import { afterAll, beforeAll, expect, it } from "vitest"

/** Small limits, so that a test reaches them. */
export const limits = { intent: 3, chat: 3, read: 8 } as const

const call = (method: string, params: unknown, id: number | null = 1) => ({ jsonrpc: "2.0", method, params, id })

/** A limited response's headers, as numbers. */
export const rateHeaders = (res: TestServer.Response) => ({
  limit: Number(res.headers.get("ratelimit-limit")),
  remaining: Number(res.headers.get("ratelimit-remaining")),
  reset: Number(res.headers.get("ratelimit-reset"))
})

/** `Retry-After`: whole seconds, at least 1, at most the one-minute window. */
export const expectRetryAfter = (res: TestServer.Response) => {
  const value = res.headers.get("retry-after")
  expect(value).toMatch(/^\d+$/)
  expect(Number(value)).toBeGreaterThanOrEqual(1)
  expect(Number(value)).toBeLessThanOrEqual(60)
  return Number(value)
}

export const expectLimited = (res: TestServer.Response, limit: number) => {
  expect(res.status, res.text).toBe(429)
  expect(res.body).toEqual({ error: "RATE_LIMITED", message: expect.any(String) })
  const retryAfter = expectRetryAfter(res)
  expect(rateHeaders(res)).toEqual({ limit, remaining: 0, reset: retryAfter })
}

export const registerScenarios = (start: () => Promise<TestServer.TestServer>) => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await start()
  })
  afterAll(() => server.stop())

  const balance = async (token: string): Promise<number> => (await server.request("GET", "/v1/me", { token })).body.credits.balance
  const sessions = async (token: string): Promise<ReadonlyArray<string>> =>
    (await server.request("GET", "/v1/huddle/sessions", { token })).body.data.map((s: { id: string }) => s.id)
  const huddle = (token: string, input = "What is a rate limit?") => server.request("POST", "/v1/huddle", { token, body: { input } })

  it("refuses the 4th intent in a minute with 429, Retry-After and the headers, before anything runs", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    let sessionId = ""
    for (let i = 1; i <= limits.intent; i++) {
      const res = await huddle(key)
      expect(res.status, res.text).toBe(200)
      sessionId = res.body.session_id
      const headers = rateHeaders(res)
      expect(headers).toMatchObject({ limit: limits.intent, remaining: limits.intent - i })
      expect(Number.isInteger(headers.reset) && headers.reset >= 1 && headers.reset <= 60).toBe(true)
    }
    // Reads with the web session: another credential, so they leave the key's budgets alone.
    const before = { balance: await balance(user.session), sessions: await sessions(user.session) }
    const intentsBefore = await server.request("POST", "/v1/rpc", { token: user.session, body: call("intent.list", { limit: 100 }) })

    expectLimited(await huddle(key), limits.intent)
    // Session messages and intent.submit are intent submissions too, and share the budget.
    const message = await server.request("POST", `/v1/huddle/sessions/${sessionId}/messages`, { token: key, body: { content: "And now?" } })
    expectLimited(message, limits.intent)
    const submitted = await server.request("POST", "/v1/rpc", { token: key, body: call("intent.submit", { input: "hello" }) })
    expectLimited(submitted, limits.intent)
    // Streaming asks are refused the same way, before the stream starts.
    const streamed = await server.request("POST", "/v1/huddle?stream=true", { token: key, body: { input: "stream it" } })
    expectLimited(streamed, limits.intent)

    // Nothing ran: no credits, no session, no message, no intent.
    expect(await balance(user.session)).toBe(before.balance)
    expect(await sessions(user.session)).toEqual(before.sessions)
    const session = await server.request("GET", `/v1/huddle/sessions/${sessionId}`, { token: user.session })
    expect(session.body.messages).toHaveLength(2)
    const intentsAfter = await server.request("POST", "/v1/rpc", { token: user.session, body: call("intent.list", { limit: 100 }) })
    expect(intentsAfter.body.result.data).toEqual(intentsBefore.body.result.data)
  })

  it("limits each credential on its own: another key of the same user, its web session and another user go on", async () => {
    const user = await Accounts.signupAndLogin(server)
    const first = await Accounts.createApiKey(server, user)
    const second = await Accounts.createApiKey(server, user)
    for (let i = 0; i < limits.intent; i++) expect((await huddle(first.key)).status).toBe(200)
    expectLimited(await huddle(first.key), limits.intent)

    const other = await Accounts.signupAndLogin(server, "other")
    for (const token of [second.key, user.session, other.session, (await Accounts.createApiKey(server, other)).key]) {
      const res = await huddle(token)
      expect(res.status, res.text).toBe(200)
      expect(rateHeaders(res)).toMatchObject({ limit: limits.intent, remaining: limits.intent - 1 })
    }
  })

  it("gives reads their own budget; every GET carries the headers; unlimited endpoints carry none", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    for (let i = 0; i < limits.intent; i++) expect((await huddle(key)).status).toBe(200)
    expectLimited(await huddle(key), limits.intent)

    // Intents are spent; reads are not.
    const reads = ["/v1/me", "/v1/memories", "/v1/huddle/sessions", "/v1/models", "/v1/orgs", "/v1/me/audit-log", "/v1/models/standard", "/v1/me"]
    expect(reads).toHaveLength(limits.read)
    for (const [i, path] of reads.entries()) {
      const res = await server.request("GET", path, { token: key })
      expect(res.status, `${path}: ${res.text}`).toBe(200)
      expect(rateHeaders(res), path).toMatchObject({ limit: limits.read, remaining: limits.read - 1 - i })
    }
    expectLimited(await server.request("GET", "/v1/memories", { token: key }), limits.read)
    // A failure of the handler is still a limited response: it carries the headers (and counts).
    const other = await Accounts.createApiKey(server, user)
    const missing = await server.request("GET", "/v1/memories/mem_missing", { token: other.key })
    expect(missing.status).toBe(404)
    expect(rateHeaders(missing)).toMatchObject({ limit: limits.read, remaining: limits.read - 1 })

    // On the OpenAI-compatible paths the refusal is in OpenAI's envelope.
    const models = await server.request("GET", "/v1/models", { token: key })
    expect(models.status).toBe(429)
    expect(models.body).toEqual({ error: { message: expect.any(String), type: "rate_limit_exceeded", param: null, code: "RATE_LIMITED" } })
    expectRetryAfter(models)

    // Not every endpoint is limited: these have no class, and no headers.
    const preferences = await server.request("PUT", "/v1/me/preferences", { token: key, body: { model_tier: "economy" } })
    expect(preferences.status).toBe(200)
    expect(preferences.headers.get("ratelimit-limit")).toBeNull()
    const health = await server.request("GET", "/healthz")
    expect(health.headers.get("ratelimit-limit")).toBeNull()
  })

  it("refuses the 4th chat completion in OpenAI's envelope, which the official SDK raises as a RateLimitError", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 })
    for (let i = 1; i <= limits.chat; i++) {
      const { data, response } = await client.chat.completions
        .create({ model: "standard", messages: [{ role: "user", content: "hi" }] })
        .withResponse()
      expect(data.object).toBe("chat.completion")
      expect(response.headers.get("ratelimit-remaining")).toBe(String(limits.chat - i))
    }
    const before = await balance(user.session)
    const refused = await client.chat.completions.create({ model: "standard", messages: [{ role: "user", content: "hi" }] }).then(
      () => undefined,
      (error: unknown) => error
    )
    if (!(refused instanceof OpenAI.RateLimitError)) throw new Error(`expected a RateLimitError, got ${String(refused)}`)
    const error = refused
    expect(error.status).toBe(429)
    expect(error.code).toBe("RATE_LIMITED")
    expect(error.type).toBe("rate_limit_exceeded")
    expect(Number(error.headers?.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(await balance(user.session)).toBe(before)

    // Chat and intents are separate budgets.
    expect((await huddle(key)).status).toBe(200)
  })

  it("JSON-RPC: a batch answers over-limit calls with -32007 and runs the rest; a single call over the limit is a plain 429", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    const batch = await server.request("POST", "/v1/rpc", {
      token: key,
      body: [
        ...Array.from({ length: limits.intent + 1 }, (_, i) => call("intent.submit", { input: `task ${i}` }, i + 1)),
        call("intent.list", { limit: 100 }, 99)
      ]
    })
    expect(batch.status).toBe(200)
    const answers: ReadonlyArray<{ id: number; result?: unknown; error?: { code: number; data: { error: string; retry_after?: number } } }> = batch.body
    const submits = answers.filter((a) => a.id !== 99)
    expect(submits.filter((a) => a.result !== undefined)).toHaveLength(limits.intent)
    const refused = submits.filter((a) => a.error !== undefined)
    expect(refused).toHaveLength(1)
    expect(refused[0]!.error).toEqual({
      code: -32007,
      message: expect.any(String),
      data: { error: "RATE_LIMITED", message: expect.any(String), retry_after: expect.any(Number) }
    })
    expect(answers.find((a) => a.id === 99)?.result).toBeDefined()
    // The headers of the class with least left: intents, spent; with when to retry.
    expect(rateHeaders(batch)).toMatchObject({ limit: limits.intent, remaining: 0 })
    expect(expectRetryAfter(batch)).toBe(rateHeaders(batch).reset)
    expect(refused[0]!.error).toMatchObject({ data: { retry_after: rateHeaders(batch).reset } })

    const single = await server.request("POST", "/v1/rpc", { token: key, body: call("intent.submit", { input: "one more" }) })
    expectLimited(single, limits.intent)
    // A notification over the limit is refused the same way: it is a single call.
    const notification = await server.request("POST", "/v1/rpc", { token: key, body: { jsonrpc: "2.0", method: "intent.submit", params: { input: "x" } } })
    expectLimited(notification, limits.intent)

    // Reads over JSON-RPC count as reads, and carry their headers.
    const list = await server.request("POST", "/v1/rpc", { token: key, body: call("intent.list", { limit: 100 }) })
    expect(list.status).toBe(200)
    expect(list.body.result.data).toHaveLength(limits.intent)
    expect(rateHeaders(list)).toMatchObject({ limit: limits.read, remaining: limits.read - 2 })
  })
}

/** A principal for tests of `RateLimits` itself, below HTTP. */
export const principal = (credential_id: string) =>
  new Principal({
    user: new User({ id: UserId.make("usr_test"), email: Schema.decodeSync(Email)("test@example.com"), created_at: DateTime.unsafeNow() }),
    via: "api_key",
    credential_id,
    bound_org_id: null
  })

/**
 * Limits that do not divide the minute's 60 000 ms (7) or exceed them (100 000): a burst of the
 * whole budget is admitted and the request after it refused until the minute is over. (The
 * counter's expiry moves a minute/limit per request and it starts afresh once it has passed, so
 * a burst that takes a while may get, on top, what that time has refilled: at most one request per
 * minute/limit elapsed.) Failing closed, so that a store that cannot count shows as a refusal.
 */
export const registerAnyLimit = (store: () => RateLimitStore.Options) => {
  it.each([7, 100_000])("counts a limit of %i a minute", async (limit) => {
    const started = performance.now()
    const { admitted, extra, refused } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const context = yield* Layer.build(
            RateLimiting.layer({ limits: { intent: limit, chat: limit, read: limit }, store: store(), onStoreError: "closed" })
          )
          const limits = Context.get(context, RateLimiting.RateLimits)
          const check = limits.check(principal(`key_any_${limit}`), "read")
          const admitted = yield* Effect.forEach(Arr.range(1, limit), () => check, { concurrency: 64 })
          let extra = 0
          let refused = yield* check
          while (refused._tag === "Admitted" && extra <= limit) {
            extra++
            refused = yield* check
          }
          return { admitted, extra, refused }
        })
      )
    )
    const elapsed = performance.now() - started
    expect(admitted.filter((verdict) => verdict._tag !== "Admitted")).toEqual([])
    expect(admitted.map((verdict) => verdict._tag === "Admitted" && verdict.limit)).toEqual(Arr.replicate(limit, limit))
    expect(extra).toBeLessThanOrEqual(Math.ceil(elapsed / (60_000 / limit)))
    expect(refused).toMatchObject({ _tag: "Limited", limit })
    if (refused._tag !== "Limited") return
    expect(refused.reset).toBeGreaterThanOrEqual(1)
    expect(refused.reset).toBeLessThanOrEqual(60)
  }, 60_000)
}
