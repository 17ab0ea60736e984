/**
 * The domain's typed errors: the ones a caller can act on. Each carries a human-readable
 * `message`; HTTP statuses and wire codes are attached at the server edge, never here.
 */
import { Schema } from "effect"

/**
 * The request field an error concerns, when whoever raised it knows (`model`, `messages`,
 * `messages[0].role`): OpenAI's envelope answers it as `param`; the other envelopes leave it out.
 */
const field = Schema.optional(Schema.String)

/** Input that is well-formed but not acceptable (beyond what schema decoding already rejects). */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  field
}) {}

/** Missing, unknown, expired or revoked credentials; wrong email or password. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}) {}

/** Authenticated, but the caller's role does not allow the operation. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {}

/** The operation needs a web-app session; an API key is not enough. */
export class SessionRequired extends Schema.TaggedError<SessionRequired>()("SessionRequired", {
  message: Schema.String
}) {}

/** The resource does not exist, or the caller may not know that it exists. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String,
  field
}) {}

/** The request conflicts with existing state (an email already registered, a member already invited). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String
}) {}

/** No credit source the caller may use can cover the request's worst-case cost. */
export class InsufficientCredits extends Schema.TaggedError<InsufficientCredits>()("InsufficientCredits", {
  message: Schema.String
}) {}

/** The request names something (a model, a tier) that an enforced organization policy forbids. */
export class PolicyViolation extends Schema.TaggedError<PolicyViolation>()("PolicyViolation", {
  message: Schema.String,
  field
}) {}

export const notFound = (what: string) => new NotFound({ message: `${what} not found` })

/** Every model that could serve the request failed (after retries and fallback). */
export class UpstreamUnavailable extends Schema.TaggedError<UpstreamUnavailable>()("UpstreamUnavailable", {
  message: Schema.String,
  /**
   * What the failed call was charged (the output it produced before failing), when it was
   * settled as it failed: the client is told, as a successful answer tells it.
   */
  charged: Schema.optional(Schema.Number)
}) {}

/** The wire code of a typed error (`InsufficientCredits` → `INSUFFICIENT_CREDITS`). */
export const codeOf = (error: { readonly _tag: string }): string =>
  error._tag.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase()
