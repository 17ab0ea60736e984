/**
 * Whether an answer may be kept for idempotent replay, when its HTTP status does not say so: a
 * JSON-RPC 2.0 call is answered 200 whatever its error (yet one that would be a 5xx over REST
 * must run again on a retry), and a streamed answer is sent 200 before it can fail. The one who
 * builds such a response says which status it stands for; the idempotency layer asks here.
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"

const standsFor = new WeakMap<object, () => number>()

/** `response` is to be kept or released as if its status were `status()` (asked when it is decided). */
export const keepAs = (response: HttpServerResponse.HttpServerResponse, status: () => number) => {
  standsFor.set(response.body, status)
  return response
}

/** The status `response` is kept or released by: the one it stands for, else the one it is sent with. */
export const statusOf = (response: HttpServerResponse.HttpServerResponse): number =>
  standsFor.get(response.body)?.() ?? response.status
