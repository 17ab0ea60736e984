/**
 * Rate limits at work (docs/decisions/0011-rate-limits.md): `RateLimits` counts a request of a
 * class against its credential with `@effect/experimental`'s `RateLimiter` (memory or Redis
 * store), and says what the answer carries (headers, a refusal). The contract's middleware is
 * `RateLimitedLive.ts`; JSON-RPC counts each call with `rpc/RpcAdmission.ts`.
 */
import * as Instruments from "@huddle/domain/observability/Instruments"
import * as Metrics from "@huddle/domain/observability/Metrics"
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as RateLimitStore from "@huddle/adapters/RateLimitStore"
import type { Principal } from "@huddle/domain/identity/Principal"
import { createHash } from "node:crypto"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { RateLimited, ServiceUnavailable } from "./EdgeErrors.js"
import * as RateLimit from "./RateLimit.js"

/** Requests per minute, per credential, of each class. */
export type Limits = { readonly [Class in RateLimit.RateClass]: number }

export const defaultLimits: Limits = { intent: 60, chat: 60, read: 120 }

/**
 * Sign-in throttles (docs/decisions/0040-sign-in-throttles.md): over `window`, failed logins and
 * password checks per account and per client address, and sign-ups per address.
 */
export interface Throttles {
  readonly window: Duration.Duration
  readonly failuresPerAccount: number
  readonly failuresPerAddress: number
  readonly signupsPerAddress: number
}

export const defaultThrottles: Throttles = {
  window: Duration.minutes(15),
  failuresPerAccount: 10,
  failuresPerAddress: 50,
  signupsPerAddress: 20
}

/** What a throttle counts: an account (by email), or a client address (for sign-ins, for sign-ups). */
export type ThrottleBucket = "account" | "address" | "signup"

export interface Options {
  readonly limits: Limits
  /** The sign-in throttles; the defaults when absent. */
  readonly throttles?: Throttles | undefined
  readonly store: RateLimitStore.Options
  /** When the store cannot be reached: `open` lets requests through (logging a warning), `closed` answers 503. */
  readonly onStoreError: "open" | "closed"
}

export const window = Duration.minutes(1)

/** What a request learns from the counters. */
export type Verdict =
  | { readonly _tag: "Admitted"; readonly limit: number; readonly remaining: number; readonly reset: number }
  | { readonly _tag: "Limited"; readonly limit: number; readonly reset: number }
  /** The store failed and the deployment fails open: let through, nothing known. */
  | { readonly _tag: "Unknown" }
  /** The store failed and the deployment fails closed. */
  | { readonly _tag: "Unavailable" }

/** How long a client should wait when the store is down and the deployment fails closed. */
export const storeRetryAfterSeconds = 5

/** Whole seconds, at least 1: `Retry-After: 0` would invite an immediate retry that fails again. */
const seconds = (duration: Duration.Duration) => Math.max(1, Math.ceil(Duration.toMillis(duration) / 1000))

const counters = (limit: number, remaining: number, reset: number): Record<string, string> => ({
  [RateLimit.headers.limit]: String(limit),
  [RateLimit.headers.remaining]: String(remaining),
  [RateLimit.headers.reset]: String(reset),
  [RateLimit.openAiHeaders.limit]: String(limit),
  [RateLimit.openAiHeaders.remaining]: String(remaining),
  [RateLimit.openAiHeaders.reset]: RateLimit.openAiDuration(reset)
})

export const headersOf = (verdict: Verdict): Record<string, string> => {
  switch (verdict._tag) {
    case "Admitted":
      return counters(verdict.limit, verdict.remaining, verdict.reset)
    case "Limited":
      return { ...counters(verdict.limit, 0, verdict.reset), [RateLimit.headers.retryAfter]: String(verdict.reset) }
    case "Unknown":
      return {}
    case "Unavailable":
      return { [RateLimit.headers.retryAfter]: String(storeRetryAfterSeconds) }
  }
}

const what: { readonly [Class in RateLimit.RateClass]: string } = {
  intent: "intent submissions",
  chat: "chat completions",
  read: "reads"
}

/** The error a refusal is answered with; `undefined` when the request may go on. */
export const refusal = (verdict: Verdict, rateClass: RateLimit.RateClass): RateLimited | ServiceUnavailable | undefined => {
  switch (verdict._tag) {
    case "Limited":
      return new RateLimited({
        message: `Too many ${what[rateClass]}: at most ${verdict.limit} a minute per credential; retry after ${verdict.reset} s`
      })
    case "Unavailable":
      return new ServiceUnavailable({ message: "Rate limits cannot be checked right now; retry shortly" })
    default:
      return undefined
  }
}

/** Puts headers on the response of the request being served, whatever it turns out to be. */
export const setHeaders = (headers: Record<string, string>) =>
  Object.keys(headers).length === 0
    ? Effect.void
    : HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

/** A store failure's kind and message for the log, without anything that looks like a URL (which may hold a password). */
const describeStoreFailure = (error: RateLimiter.RateLimitStoreError): string => {
  const cause = error.cause instanceof Error ? `${error.cause.name}: ${error.cause.message}` : error.message
  return cause.replace(/[a-z][a-z0-9+.-]*:\/\/\S*/gi, "<url>")
}

export class RateLimits extends Context.Tag("@huddle/server/RateLimits")<RateLimits, {
  /** Counts one request of `rateClass` against the principal's credential. Never fails. */
  readonly check: (principal: Principal, rateClass: RateLimit.RateClass) => Effect.Effect<Verdict>
  /**
   * Counts `tokens` against a sign-in throttle of `subject` (an email or an address); -1 gives back
   * one counted earlier (an attempt that turned out not to be a failure). Never fails.
   */
  readonly throttle: (bucket: ThrottleBucket, subject: string, tokens: 1 | -1) => Effect.Effect<Verdict>
  readonly throttles: Throttles
}>() {}

/** At most one warning about the store every this many milliseconds: an outage must not flood the log. */
const warningInterval = 10_000

export const make = (options: Options) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter.RateLimiter
    const metrics = yield* Metrics.Metrics
    let lastWarning = Number.NEGATIVE_INFINITY

    const storeFailed = (error: RateLimiter.RateLimitStoreError): Effect.Effect<Verdict> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (now - lastWarning >= warningInterval) {
          lastWarning = now
          yield* Effect.logWarning(
            options.onStoreError === "open"
              ? "rate-limit store unavailable: requests are let through unlimited (HUDDLE_RATE_LIMIT_ON_STORE_ERROR=open)"
              : "rate-limit store unavailable: requests are refused with 503 (HUDDLE_RATE_LIMIT_ON_STORE_ERROR=closed)"
          ).pipe(Effect.annotateLogs({ store: options.store._tag, failure: describeStoreFailure(error) }))
        }
        return options.onStoreError === "open" ? { _tag: "Unknown" } : { _tag: "Unavailable" }
      })

    const throttles = options.throttles ?? defaultThrottles
    const throttleLimit = (bucket: ThrottleBucket) =>
      bucket === "account" ? throttles.failuresPerAccount : bucket === "address" ? throttles.failuresPerAddress : throttles.signupsPerAddress

    return RateLimits.of({
      throttles,
      throttle: (bucket, subject, tokens) =>
        limiter.consume({
          algorithm: "fixed-window",
          onExceeded: "fail",
          window: throttles.window,
          limit: throttleLimit(bucket),
          tokens,
          // A digest: the store need not hold emails and addresses in the clear.
          key: `signin:${bucket}:${createHash("sha256").update(subject).digest("base64url").slice(0, 22)}`
        }).pipe(
          Effect.map((result): Verdict => ({
            _tag: "Admitted",
            limit: result.limit,
            remaining: Math.max(0, result.remaining),
            reset: seconds(result.resetAfter)
          })),
          Effect.catchAll((error) => {
            if (!(error instanceof RateLimiter.RateLimitExceeded)) return storeFailed(error)
            metrics.add(Instruments.rateLimited, { limit: bucket === "signup" ? "signup" : "signin" })
            return Effect.succeed<Verdict>({ _tag: "Limited", limit: error.limit, reset: seconds(error.retryAfter) })
          })
        ),
      check: (principal, rateClass) =>
        limiter.consume({
          algorithm: "fixed-window",
          onExceeded: "fail",
          window,
          limit: options.limits[rateClass],
          key: `${rateClass}:${principal.credential_id}`
        }).pipe(
          Effect.map((result): Verdict => ({
            _tag: "Admitted",
            limit: result.limit,
            remaining: result.remaining,
            reset: seconds(result.resetAfter)
          })),
          Effect.catchAll((error) => {
            if (!(error instanceof RateLimiter.RateLimitExceeded)) return storeFailed(error)
            metrics.add(Instruments.rateLimited, { limit: rateClass })
            return Effect.succeed<Verdict>({ _tag: "Limited", limit: error.limit, reset: seconds(error.retryAfter) })
          })
        )
    })
  })

export const layer = (options: Options): Layer.Layer<RateLimits> =>
  Layer.effect(RateLimits, make(options)).pipe(
    Layer.tap(() =>
      Effect.logInfo("rate limits").pipe(
        Effect.annotateLogs({
          store: options.store._tag,
          on_store_error: options.onStoreError,
          per_minute: `intent ${options.limits.intent}, chat ${options.limits.chat}, read ${options.limits.read}`
        })
      )
    ),
    Layer.provide(RateLimiter.layer),
    Layer.provide(RateLimitStore.layer(options.store))
  )
