/**
 * Where rate-limit counters live, as an `@effect/experimental` `RateLimiterStore`: in memory (the
 * library's; one instance) or in Redis (ours; any number of instances sharing one Redis). See
 * docs/decisions/0011-rate-limits.md.
 *
 * ```ts
 * RateLimitStore.layer({ _tag: "Memory" })
 * RateLimitStore.layer({ _tag: "Redis", url: Redacted.make("redis://127.0.0.1:6379"), prefix: "huddle:rl:", timeout: "500 millis" })
 * ```
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import type { Result } from "ioredis"

export type Options =
  | { readonly _tag: "Memory" }
  | {
    readonly _tag: "Redis"
    /** `redis://[user:password@]host[:port][/db]`, or `rediss://…` for TLS. */
    readonly url: Redacted.Redacted
    /** Put in front of every key, so that deployments (or test runs) can share one Redis. */
    readonly prefix: string
    /** How long one counter update may take before it counts as a store failure. */
    readonly timeout: Duration.DurationInput
  }

export const defaultPrefix = "huddle:ratelimit:"
export const defaultTimeout = Duration.millis(500)

/** Where a Redis URL points: ioredis connection options. */
export interface RedisConnection {
  readonly host: string
  readonly port: number
  readonly username?: string
  readonly password?: string
  readonly db?: number
  /** TLS (`rediss://`) with Node's defaults: the server's name checked against `host`. */
  readonly tls?: Readonly<Record<string, never>>
}

/** The connection options of a Redis URL; throws on a URL that is not one. */
export const redisOptions = (url: string): RedisConnection => {
  const parsed = new URL(url)
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new Error(`a Redis URL starts with redis:// or rediss://, not ${parsed.protocol}//`)
  }
  const db = parsed.pathname.replace(/^\//, "")
  if (db !== "" && !/^\d+$/.test(db)) throw new Error("the path of a Redis URL is a database number")
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1",
    port: parsed.port === "" ? 6379 : Number(parsed.port),
    ...(parsed.username === "" ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === "" ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(db === "" ? {} : { db: Number(db) }),
    ...(parsed.protocol === "rediss:" ? { tls: {} } : {})
  }
}

/**
 * The library's "fixed window" — a count, and an expiry pushed back by window/limit for each
 * admitted request (`layerStoreMemory` keeps exactly this in memory) — kept in Redis. The
 * library's own Redis script hands window/limit to `SET … PX`, which takes whole milliseconds
 * only, so Redis refuses any limit that does not divide the window (60 000 ms / 7) or exceeds it
 * (60 000 ms / 100 000). Here the hash holds the exact, fractional expiry and the key itself
 * expires at the next whole millisecond after it. Time is Redis's clock, one for every instance.
 * A key of another type (a counter of an older version) is replaced.
 */
const fixedWindowScript = `
local key = KEYS[1]
local tokens = tonumber(ARGV[1])
local refill = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local count, expires
if redis.call("TYPE", key).ok == "hash" then
  count = tonumber(redis.call("HGET", key, "count"))
  expires = tonumber(redis.call("HGET", key, "expires"))
else
  redis.call("DEL", key)
end
if not count or not expires or expires <= now then
  count = 0
  expires = now
end
if limit and count + tokens > limit then
  return { count + tokens, math.ceil(expires - now) }
end
count = count + tokens
expires = expires + refill * tokens
redis.call("HSET", key, "count", string.format("%d", count), "expires", string.format("%.17g", expires))
redis.call("PEXPIREAT", key, string.format("%.0f", math.ceil(expires)))
return { count, math.ceil(expires - now) }
`

declare module "ioredis" {
  interface RedisCommander<Context> {
    huddleFixedWindow(key: string, tokens: number, refillMillis: number, limit: number | ""): Result<[number, number], Context>
  }
}

/**
 * The Redis store. A request must not wait on a Redis that is gone: while disconnected, counter
 * updates fail at once (no offline queue), and every command has a deadline (`commandTimeout`).
 * What a failure then means (let the request through, or refuse it) is the caller's choice, and
 * the caller logs it: the client's own `error` events are not printed. The client reconnects on
 * its own, at most 2 s apart, until the layer is released.
 */
const redis = (options: Extract<Options, { readonly _tag: "Redis" }>) =>
  Layer.scoped(
    RateLimiter.RateLimiterStore,
    Effect.gen(function*() {
      // Loaded only when used: a deployment without Redis never loads the client.
      const { Redis } = yield* Effect.promise(() => import("ioredis"))
      let closing = false
      const client = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const client = new Redis({
            ...redisOptions(Redacted.value(options.url)),
            commandTimeout: Math.max(1, Duration.toMillis(options.timeout)),
            connectTimeout: 5_000,
            enableOfflineQueue: false,
            // A command cut off by a lost connection has been answered (open or closed) already:
            // replaying it after reconnecting would count a request twice.
            autoResendUnfulfilledCommands: false,
            maxRetriesPerRequest: 1,
            retryStrategy: (attempt: number) => (closing ? null : Math.min(attempt * 100, 2_000))
          })
          client.on("error", () => {})
          client.defineCommand("huddleFixedWindow", { numberOfKeys: 1, lua: fixedWindowScript })
          return client
        }),
        // From here on the client stops reconnecting, so that a Redis that is down cannot keep the
        // process alive; a QUIT that cannot be delivered does not fail the shutdown.
        (client) =>
          Effect.suspend(() => {
            closing = true
            return Effect.promise(() => client.quit().catch(() => client.disconnect()))
          })
      )
      const fail = (cause: unknown) => new RateLimiter.RateLimitStoreError({ message: "Failed to execute fixedWindow rate limiting command", cause })
      const store = RateLimiter.RateLimiterStore.of({
        fixedWindow: ({ key, limit, refillRate, tokens }) =>
          Effect.tryPromise({
            try: () => client.huddleFixedWindow(`${options.prefix}${key}`, tokens, Duration.toMillis(refillRate), limit ?? ""),
            catch: fail
          }),
        // Huddle counts in fixed windows only (docs/decisions/0011-rate-limits.md).
        tokenBucket: () => Effect.fail(new RateLimiter.RateLimitStoreError({ message: "This store keeps fixed windows only" }))
      })
      // Without an offline queue, a request that came before the first connection would fail:
      // wait for it (briefly; a Redis that is down at start is handled like one that goes down).
      yield* Effect.tryPromise(() => client.ping()).pipe(
        Effect.retry(Schedule.spaced("20 millis")),
        Effect.timeout("1 second"),
        Effect.ignore
      )
      return store
    })
  )

export const layer = (options: Options): Layer.Layer<RateLimiter.RateLimiterStore> =>
  options._tag === "Memory" ? RateLimiter.layerStoreMemory : redis(options)
