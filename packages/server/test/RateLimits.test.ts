/**
 * Rate limits with the memory store (one instance): the shared cases, the default limits, and
 * the contract's declarations. The same cases against Redis: RateLimits.redis.test.ts.
 */
import { HttpApi } from "@effect/platform"
import * as RateLimitStore from "@huddle/adapters/RateLimitStore"
import { Api } from "@huddle/server/Api"
import { Authenticated } from "@huddle/server/shared/Security"
import * as RateLimit from "@huddle/server/shared/RateLimit"
import { routeClasses } from "@huddle/server/shared/RateLimitedLive"
import { rateLimitsFromEnv } from "@huddle/server/ServerConfig"
import { Accounts, TestServer } from "@huddle/testkit"
import { ConfigProvider, Duration, Effect, Either, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectLimited, limits, rateHeaders, registerAnyLimit, registerScenarios } from "./rateLimitScenarios.js"

describe("rate limits, memory store", () => {
  registerScenarios(() => TestServer.start({ rateLimits: limits }))
  registerAnyLimit(() => ({ _tag: "Memory" }))
})

describe("rate limits at the defaults", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ starterCredits: 1_000_000 })
  })
  afterAll(() => server.stop())

  it("lets 60 intents through in a minute and refuses the 61st", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    const started = Date.now()
    for (let i = 1; i <= 60; i++) {
      const res = await server.request("POST", "/v1/rpc", {
        token: key,
        body: { jsonrpc: "2.0", method: "intent.submit", params: { input: `task ${i}` }, id: i }
      })
      expect(res.status, res.text).toBe(200)
      expect(rateHeaders(res)).toMatchObject({ limit: 60, remaining: 60 - i })
    }
    // The window is a minute: this test means something only if it took less.
    expect(Date.now() - started).toBeLessThan(50_000)
    expectLimited(await server.request("POST", "/v1/huddle", { token: key, body: { input: "the 61st" } }), 60)
    const read = await server.request("GET", "/v1/me", { token: key })
    expect(rateHeaders(read)).toMatchObject({ limit: 120, remaining: 119 })
  }, 60_000)
})

describe("rate limits in the contract", () => {
  const endpoints: Array<{ route: string; middleware: ReadonlyArray<unknown> }> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      endpoints.push({ route: `${endpoint.method} ${endpoint.path}`, middleware: [...middleware] })
    }
  })
  const classes = routeClasses()

  it("declares the classes of the spec: huddle messages and chat completions, and every GET under /v1 a read", () => {
    expect(classes.get("POST /v1/huddle")).toBe("intent")
    expect(classes.get("POST /v1/huddle/sessions/:session_id/messages")).toBe("intent")
    expect(classes.get("POST /v1/chat/completions")).toBe("chat")
    for (const { route } of endpoints) {
      // The operator is no user credential to count against; its API is not limited.
      if (route.startsWith("GET /v1/operator/")) expect(classes.get(route), route).toBeUndefined()
      else if (route.startsWith("GET /v1/")) expect(classes.get(route), route).toBe("read")
    }
    // JSON-RPC counts per call (by each method's class), not per request.
    expect(classes.get("POST /v1/rpc")).toBeUndefined()
    expect(classes.get("GET /healthz")).toBeUndefined()
  })

  it("enforces every declared class, after authentication: RateLimited is declared before Authenticated", () => {
    for (const { middleware, route } of endpoints) {
      if (!classes.has(route) && route !== "POST /v1/rpc") continue
      const limited = middleware.indexOf(RateLimit.RateLimited)
      expect(limited, `${route} has no RateLimited middleware`).toBeGreaterThanOrEqual(0)
      expect(limited, `${route}: RateLimited must come before Authenticated`).toBeLessThan(middleware.indexOf(Authenticated))
    }
  })
})

describe("rate-limit configuration", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSync(Effect.either(Effect.withConfigProvider(rateLimitsFromEnv, ConfigProvider.fromMap(new Map(Object.entries(env))))))

  it("defaults to 60, 60 and 120 a minute in memory, failing open", () => {
    expect(read({})).toEqual(Either.right({
      limits: { intent: 60, chat: 60, read: 120 },
      throttles: { window: Duration.minutes(15), failuresPerAccount: 10, failuresPerAddress: 50, signupsPerAddress: 20 },
      store: { _tag: "Memory" },
      onStoreError: "open"
    }))
  })

  it("reads the sign-in throttles and refuses ones that cannot work (decision 0040)", () => {
    const config = read({
      HUDDLE_SIGNIN_WINDOW: "1 hour",
      HUDDLE_SIGNIN_FAILURES_PER_ACCOUNT: "5",
      HUDDLE_SIGNIN_FAILURES_PER_ADDRESS: "100",
      HUDDLE_SIGNUPS_PER_ADDRESS: "3"
    })
    if (Either.isLeft(config)) throw new Error(String(config.left))
    expect(config.right.throttles).toEqual({ window: Duration.hours(1), failuresPerAccount: 5, failuresPerAddress: 100, signupsPerAddress: 3 })
    for (const [name, value] of [
      ["HUDDLE_SIGNIN_WINDOW", "0 seconds"],
      ["HUDDLE_SIGNIN_WINDOW", "2 days"],
      ["HUDDLE_SIGNIN_FAILURES_PER_ACCOUNT", "0"],
      ["HUDDLE_SIGNIN_FAILURES_PER_ADDRESS", "many"],
      ["HUDDLE_SIGNUPS_PER_ADDRESS", "-1"]
    ] as const) {
      const refused = read({ [name]: value })
      expect(Either.isLeft(refused), `${name}=${value}`).toBe(true)
      if (Either.isLeft(refused)) expect(String(refused.left), `${name}=${value}`).toContain(name)
    }
  })

  it("reads the limits, REDIS_URL and the choice on store errors", () => {
    const config = read({
      HUDDLE_RATE_INTENT: "5",
      HUDDLE_RATE_CHAT: "6",
      HUDDLE_RATE_READ: "7",
      REDIS_URL: "redis://:s3cret@cache.internal:6380/2",
      HUDDLE_RATE_LIMIT_ON_STORE_ERROR: "closed"
    })
    if (Either.isLeft(config)) throw new Error(String(config.left))
    expect(config.right).toMatchObject({ limits: { intent: 5, chat: 6, read: 7 }, onStoreError: "closed", store: { _tag: "Redis", prefix: "huddle:ratelimit:" } })
    const store = config.right.store
    if (store._tag !== "Redis") throw new Error("expected Redis")
    // The URL stays redacted in the configuration.
    expect(String(store.url)).not.toContain("s3cret")
    expect(RateLimitStore.redisOptions(Redacted.value(store.url))).toEqual({ host: "cache.internal", port: 6380, password: "s3cret", db: 2 })
  })

  it("takes any whole number of requests from 1 to a million a minute", () => {
    for (const value of ["1", "7", "100000", "1000000"]) {
      const config = read({ HUDDLE_RATE_READ: value })
      expect(Either.isRight(config) && config.right.limits.read, value).toBe(Number(value))
    }
  })

  it("refuses a limit that cannot work, naming the variable", () => {
    for (const [name, value] of [
      ["HUDDLE_RATE_INTENT", "0"],
      ["HUDDLE_RATE_CHAT", "-5"],
      ["HUDDLE_RATE_READ", "7.5"],
      ["HUDDLE_RATE_READ", "1000001"],
      ["HUDDLE_RATE_INTENT", "99999999999999999999"]
    ] as const) {
      const config = read({ [name]: value })
      expect(Either.isLeft(config), `${name}=${value}`).toBe(true)
      if (Either.isLeft(config)) expect(String(config.left), `${name}=${value}`).toContain(name)
    }
  })

  it("refuses limits that are not positive integers, other store choices and URLs that are not Redis's", () => {
    for (const env of [
      { HUDDLE_RATE_INTENT: "0" },
      { HUDDLE_RATE_READ: "lots" },
      { HUDDLE_RATE_LIMIT_ON_STORE_ERROR: "maybe" },
      { REDIS_URL: "http://127.0.0.1:6379" },
      { REDIS_URL: "redis://127.0.0.1:6379/db" }
    ]) {
      expect(Either.isLeft(read(env)), JSON.stringify(env)).toBe(true)
    }
  })

  it("understands the forms of a Redis URL", () => {
    expect(RateLimitStore.redisOptions("redis://127.0.0.1")).toEqual({ host: "127.0.0.1", port: 6379 })
    expect(RateLimitStore.redisOptions("rediss://user:p%40ss@[::1]:7000")).toEqual({
      host: "::1",
      port: 7000,
      username: "user",
      password: "p@ss",
      tls: {}
    })
  })
})
