/**
 * Rate limits per JSON-RPC call (docs/decisions/0011-rate-limits.md, 0008-json-rpc.md): the
 * dispatcher's admission hook and the wrapping of a `/v1/rpc` answer. HTTP-side (it sets response
 * headers and answers a refused single call as a plain HTTP error), so it lives here, not in rpc/.
 */
import type { Principal } from "@huddle/domain/identity/Principal"
import { Effect } from "effect"
import type * as RateLimit from "../shared/RateLimit.js"
import { headersOf, RateLimits, refusal, setHeaders, type Verdict } from "../shared/RateLimiting.js"
import type * as JsonRpc from "./JsonRpc.js"
import * as RpcErrors from "./RpcErrors.js"

const rpcClass = (rateClass: JsonRpc.RateClass): RateLimit.RateClass => (rateClass === "intent_submission" ? "intent" : "read")

/** JSON-RPC's code for `RATE_LIMITED` (docs/decisions/0008-json-rpc.md). */
export const rateLimitedCode = RpcErrors.rateLimited.code

interface Counted {
  readonly rateClass: RateLimit.RateClass
  readonly verdict: Verdict
}

/** The most telling verdict of a request's calls: a refusal first, else the class with least left. */
const mostConstrained = (counted: ReadonlyArray<Counted>): Counted | undefined =>
  counted.reduce<Counted | undefined>((worst, next) => {
    if (worst === undefined) return next
    const rank = (c: Counted) =>
      c.verdict._tag === "Unavailable" ? -2 : c.verdict._tag === "Limited" ? -1 : c.verdict._tag === "Admitted" ? c.verdict.remaining : Infinity
    return rank(next) < rank(worst) ? next : worst
  }, undefined)

/**
 * Rate limits for `/v1/rpc`: `admit` (the dispatcher's hook) counts each call against its
 * method's class and refuses one over the limit with -32007 (a batch's other calls still run);
 * `answering` wraps the answer of one request: when it was a single call (not a batch) and was
 * refused, the whole request is answered as the plain HTTP error (429, or 503 failing closed),
 * as other transport failures are; otherwise the response carries the headers of the class
 * with the least left.
 */
export const rpcAdmission = Effect.map(RateLimits, (limits) => {
  const requests = new WeakMap<object, Array<Counted>>()
  return {
    admit: <C extends { readonly principal: Principal }>(method: JsonRpc.Method<C>, caller: C) => {
      const rateClass = rpcClass(method.rateClass)
      return Effect.flatMap(limits.check(caller.principal, rateClass), (verdict) => {
        requests.get(caller)?.push({ rateClass, verdict })
        const refused = refusal(verdict, rateClass)
        if (refused === undefined) return Effect.void
        return Effect.fail(
          refused._tag === "RateLimited"
            ? new RpcErrors.RpcError({
              code: rateLimitedCode,
              message: refused.message,
              // In a batch the response is 200: the call's own error says when to retry.
              data: {
                error: RpcErrors.rateLimited.error,
                message: refused.message,
                ...(verdict._tag === "Limited" ? { retry_after: verdict.reset } : {})
              },
              status: RpcErrors.rateLimited.status
            })
            : RpcErrors.internalError(refused)
        )
      })
    },
    answering: <A, C extends object>(caller: C, batch: boolean, answer: Effect.Effect<A>) =>
      Effect.gen(function*() {
        const counted: Array<Counted> = []
        requests.set(caller, counted)
        const answered = yield* answer
        const worst = mostConstrained(counted)
        if (worst === undefined) return answered
        yield* setHeaders(headersOf(worst.verdict))
        const refused = batch ? undefined : refusal(worst.verdict, worst.rateClass)
        if (refused !== undefined) return yield* Effect.fail(refused)
        return answered
      })
  }
})
