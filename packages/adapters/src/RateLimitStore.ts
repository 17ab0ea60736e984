/**
 * Where rate-limit counters live: `@effect/experimental`'s `RateLimiterStore`, in memory (one
 * instance) or in Redis (any number of instances sharing one Redis). See
 * docs/decisions/0011-rate-limits.md.
 *
 * ```ts
 * RateLimitStore.layer({ _tag: "Memory" })
 * RateLimitStore.layer({ _tag: "Redis", url: Redacted.make("redis://127.0.0.1:6379"), prefix: "huddle:rl:", timeout: "500 millis" })
 * ```
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import { Duration, Effect, Exit, Layer, Redacted, Schedule, Scope } from "effect"

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
 * The Redis store. A request must not wait on a Redis that is gone: while disconnected, counter
 * updates fail at once (no offline queue), and every command has a deadline (`commandTimeout`).
 * What a failure then means (let the request through, or refuse it) is the caller's choice. The
 * client reconnects on its own, at most 2 s apart, until the layer is released.
 */
const redis = (options: Extract<Options, { readonly _tag: "Redis" }>) =>
  Layer.scoped(
    RateLimiter.RateLimiterStore,
    Effect.gen(function*() {
      // Loaded only when used: a deployment without Redis never loads the client.
      const RedisStore = yield* Effect.promise(() => import("@effect/experimental/RateLimiter/Redis"))
      let closing = false
      const client = yield* Scope.make()
      // Runs before the store's own release (which asks Redis to QUIT): from here on the client
      // stops reconnecting, so that a Redis that is down cannot keep the process alive, and a
      // QUIT that cannot be delivered does not fail the shutdown.
      yield* Effect.addFinalizer(() =>
        Effect.suspend(() => {
          closing = true
          return Effect.ignore(Effect.catchAllDefect(Scope.close(client, Exit.void), () => Effect.void))
        })
      )
      const store = yield* RedisStore.make({
        ...redisOptions(Redacted.value(options.url)),
        prefix: options.prefix,
        commandTimeout: Math.max(1, Duration.toMillis(options.timeout)),
        connectTimeout: 5_000,
        enableOfflineQueue: false,
        // A command cut off by a lost connection has been answered (open or closed) already:
        // replaying it after reconnecting would count a request twice.
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 1,
        retryStrategy: (attempt: number) => (closing ? null : Math.min(attempt * 100, 2_000))
      }).pipe(Scope.extend(client))
      // Without an offline queue, a request that came before the first connection would fail:
      // wait for it (briefly; a Redis that is down at start is handled like one that goes down).
      yield* store.fixedWindow({ key: "connected", tokens: 1, refillRate: Duration.millis(1), limit: undefined }).pipe(
        Effect.retry(Schedule.spaced("20 millis")),
        Effect.timeout("1 second"),
        Effect.ignore
      )
      return store
    })
  )

export const layer = (options: Options): Layer.Layer<RateLimiter.RateLimiterStore> =>
  options._tag === "Memory" ? RateLimiter.layerStoreMemory : redis(options)
