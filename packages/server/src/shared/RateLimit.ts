/**
 * Rate limits as the contract declares them (docs/decisions/0011-rate-limits.md). Each endpoint
 * counts against one class, per credential: `intent` (huddle messages, `intent.submit`), `chat`
 * (chat completions) or `read` (every GET under /v1, the default for a GET). An endpoint says
 * which with the `Class` annotation; the `RateLimited` middleware on its group enforces it
 * before the handler runs. JSON-RPC counts each call against its method's class instead.
 *
 * Order matters: `RateLimited` needs the principal, so it is declared before `Authenticated`
 * (a group's later middleware wraps its earlier ones and runs first):
 *
 * ```ts
 * HttpApiGroup.make("things")
 *   .add(HttpApiEndpoint.post("run", "/things/run").annotate(RateLimit.Class, "intent"))
 *   .add(HttpApiEndpoint.get("list", "/things")) // a GET: `read`
 *   .middleware(RateLimited)
 *   .middleware(Authenticated)
 * ```
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import { Context, Option, Schema } from "effect"
import * as Envelope from "./Envelope.js"

export type RateClass = "intent" | "chat" | "read"

export const rateClasses: ReadonlyArray<RateClass> = ["intent", "chat", "read"]

/** The class an endpoint (or every endpoint of a group) counts against; `"none"`: not limited. */
export class Class extends Context.Tag("@huddle/server/shared/RateLimit/Class")<Class, RateClass | "none">() {}

/** The class of an endpoint: as declared, else `read` for a GET under /v1, else none. */
export const classOf = (method: string, path: string, annotations: Context.Context<never>): RateClass | undefined => {
  const declared = Context.getOption(annotations, Class)
  if (Option.isSome(declared)) return declared.value === "none" ? undefined : declared.value
  return method === "GET" && path.startsWith("/v1/") ? "read" : undefined
}

/** The headers every response of a limited endpoint carries (and `Retry-After` on 429 and 503). */
export const headers = {
  limit: "ratelimit-limit",
  remaining: "ratelimit-remaining",
  reset: "ratelimit-reset",
  retryAfter: "retry-after"
} as const

/**
 * The same counters under OpenAI's names, sent beside the IETF ones, because OpenAI's SDKs and
 * the agent frameworks built on them read these. OpenAI's reset is a duration (`1s`, `6m0s`).
 */
export const openAiHeaders = {
  limit: "x-ratelimit-limit-requests",
  remaining: "x-ratelimit-remaining-requests",
  reset: "x-ratelimit-reset-requests"
} as const

/** Whole seconds as OpenAI writes a reset (Go's duration format): `45s`, `1m0s`, `1h2m3s`. */
export const openAiDuration = (seconds: number): string => {
  const hours = Math.floor(seconds / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  const rest = seconds % 60
  return hours > 0 ? `${hours}h${minutes}m${rest}s` : minutes > 0 ? `${minutes}m${rest}s` : `${rest}s`
}

/**
 * Counts the request against its endpoint's class for the caller's credential; over the limit
 * it fails with 429 `RATE_LIMITED`, and with 503 when the counters cannot be reached and the
 * deployment fails closed. Runs inside `Authenticated`.
 */
export class RateLimited extends HttpApiMiddleware.Tag<RateLimited>()("RateLimited", {
  failure: Schema.Union(Envelope.RateLimited, Envelope.ServiceUnavailable)
}) {}
