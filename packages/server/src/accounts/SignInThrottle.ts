/**
 * The sign-in throttles at work (docs/decisions/0040-sign-in-throttles.md). Each guarded attempt
 * is counted before it runs, against its account (by email) and its client address, so that a
 * burst sent in parallel is cut off too, and given back when it succeeds: only failures use up a
 * budget, and a user who signs in is never locked out by their own successes. Sign-ups count
 * per address, success or not. Counters live in the rate-limit store (memory, or Redis shared by
 * every instance); when they are spent the answer is 429 `RATE_LIMITED` with `Retry-After`.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect, Exit, Layer } from "effect"
import * as ClientAddress from "../edge/ClientAddress.js"
import { RateLimited, ServiceUnavailable } from "../shared/EdgeErrors.js"
import { headersOf, RateLimits, setHeaders, type ThrottleBucket, type Verdict } from "../shared/RateLimiting.js"

type Refused = RateLimited | ServiceUnavailable

export interface Service {
  /** A login: failures count per account and per address. */
  readonly login: <A, E, R>(email: string, attempt: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Refused, R | HttpServerRequest.HttpServerRequest>
  /** A check of a signed-in user's password: counts as a login of their account would. */
  readonly passwordCheck: <A, E, R>(email: string, attempt: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Refused, R | HttpServerRequest.HttpServerRequest>
  /** Redeeming a reset token: failures count per address. */
  readonly reset: <A, E, R>(attempt: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Refused, R | HttpServerRequest.HttpServerRequest>
  /** A sign-up: every one counts per address. */
  readonly signup: <A, E, R>(attempt: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Refused, R | HttpServerRequest.HttpServerRequest>
}

export class SignInThrottle extends Context.Tag("@huddle/server/SignInThrottle")<SignInThrottle, Service>() {}

export interface Options {
  /** How many proxies in front append to `X-Forwarded-For` (`HUDDLE_TRUST_PROXY`); 0: the socket's address. */
  readonly trustedProxies: number
}

const refusal = (verdict: Verdict, bucket: ThrottleBucket): Refused | undefined => {
  switch (verdict._tag) {
    case "Limited":
      return new RateLimited({
        message: bucket === "signup"
          ? `Too many sign-ups from this address: at most ${verdict.limit}; retry after ${verdict.reset} s`
          : `Too many failed sign-ins ${bucket === "account" ? "for this account" : "from this address"}: at most ${verdict.limit}; retry after ${verdict.reset} s`
      })
    case "Unavailable":
      return new ServiceUnavailable({ message: "Sign-in limits cannot be checked right now; retry shortly" })
    default:
      return undefined
  }
}

/** The verdict with the least left: what the answer's headers tell. */
const tighter = (a: Verdict | undefined, b: Verdict): Verdict =>
  a === undefined || a._tag !== "Admitted" || (b._tag === "Admitted" && b.remaining < a.remaining) ? b : a

export const make = (options: Options) =>
  Effect.map(RateLimits, (limits): Service => {
    const giveBack = (taken: ReadonlyArray<readonly [ThrottleBucket, string]>) =>
      Effect.forEach(taken, ([bucket, subject]) => limits.throttle(bucket, subject, -1), { discard: true })

    const guarded = (
      subjects: (address: string) => ReadonlyArray<readonly [ThrottleBucket, string]>,
      refundOnSuccess: boolean
    ) =>
    <A, E, R>(attempt: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const taken: Array<readonly [ThrottleBucket, string]> = []
        let shown: Verdict | undefined
        for (const [bucket, subject] of subjects(ClientAddress.of(request, options.trustedProxies))) {
          const verdict = yield* limits.throttle(bucket, subject, 1)
          const refused = refusal(verdict, bucket)
          if (refused !== undefined) {
            // A refused attempt is not counted anywhere (as with the other limits, decision 0011).
            yield* giveBack(taken)
            yield* setHeaders(headersOf(verdict))
            return yield* Effect.fail(refused)
          }
          if (verdict._tag === "Admitted") taken.push([bucket, subject])
          shown = tighter(shown, verdict)
        }
        if (shown !== undefined) yield* setHeaders(headersOf(shown))
        // An attempt cut short (the client hung up) stays counted: it may have been a wrong guess.
        return yield* Effect.onExit(attempt, (exit) => refundOnSuccess && Exit.isSuccess(exit) ? giveBack(taken) : Effect.void)
      })

    const failures = (email: string) => guarded((address) => [["address", address], ["account", email]], true)
    return {
      login: (email, attempt) => failures(email)(attempt),
      passwordCheck: (email, attempt) => failures(email)(attempt),
      reset: guarded((address) => [["address", address]], true),
      signup: guarded((address) => [["signup", address]], false)
    }
  })

export const layer = (options: Options): Layer.Layer<SignInThrottle, never, RateLimits> => Layer.effect(SignInThrottle, make(options))
