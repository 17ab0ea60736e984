/**
 * `Idempotency-Key` as the contract declares it (docs/decisions/0012-idempotency.md). An
 * endpoint that honours the header says so with the `keyed` annotations (which also put the
 * header in the OpenAPI document); the `Idempotent` middleware on its group does the work:
 * the first request with a key runs and its answer is kept for 24 hours, a retry with the same
 * request gets that answer again (with `Idempotent-Replayed: true`) without running, the same
 * key with another request is refused with 422, and a retry while the first still runs gets 409.
 *
 * Order matters as for rate limits: `Idempotent` needs the principal and should count against
 * the rate limit, so it is declared first (innermost), before `RateLimited` and `Authenticated`:
 *
 * ```ts
 * HttpApiGroup.make("things")
 *   .add(HttpApiEndpoint.post("create", "/things").annotateContext(Idempotency.keyed))
 *   .middleware(Idempotent)
 *   .middleware(RateLimited)
 *   .middleware(Authenticated)
 * ```
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as OpenApi from "@effect/platform/OpenApi"
import { Context, Option, Schema } from "effect"
import * as Envelope from "./Envelope.js"

export const headers = {
  key: "idempotency-key",
  replayed: "idempotent-replayed"
} as const

/** The longest key accepted; keys are printable ASCII (UUIDs, ULIDs, hashes fit). */
export const maxKeyLength = 255

const keyShape = new RegExp(`^[\\x20-\\x7E]{1,${maxKeyLength}}$`)

export const isValidKey = (key: string): boolean => keyShape.test(key)

/** Whether an endpoint (or every endpoint of a group) honours `Idempotency-Key`. */
export class Keyed extends Context.Tag("@huddle/server/shared/Idempotency/Keyed")<Keyed, boolean>() {}

export const isKeyed = (annotations: Context.Context<never>): boolean =>
  Option.getOrElse(Context.getOption(annotations, Keyed), () => false)

const headerParameter = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  schema: { type: "string", minLength: 1, maxLength: maxKeyLength, pattern: "^[\\x20-\\x7E]+$" },
  description: [
    "Makes a retry safe: the first request with a key runs, and for 24 hours the same request (method, path, query,",
    "organization header and body) with the same key from the same credential gets the first answer again — status,",
    "body and content type, a stream as one body — with `Idempotent-Replayed: true`, without running or charging",
    "again. Answers 5xx and 429 are not kept, so those can be retried. The same key with another request: 422",
    "`IDEMPOTENCY_KEY_REUSED`; while the first request still runs: 409 `IDEMPOTENCY_IN_PROGRESS` with `Retry-After`;",
    "a key that is not 1–255 printable ASCII characters: 400."
  ].join(" ")
}

const documentHeader = (operation: Record<string, any>): Record<string, any> => ({
  ...operation,
  parameters: [...(operation.parameters ?? []), headerParameter]
})

/** The annotations of an endpoint that honours `Idempotency-Key`: `.annotateContext(Idempotency.keyed)`. */
export const keyed: Context.Context<Keyed | OpenApi.Transform> = Context.make(Keyed, true).pipe(
  Context.add(OpenApi.Transform, documentHeader)
)

/**
 * Applies `Idempotency-Key` on the keyed endpoints of its group: refuses a malformed key (400),
 * a key reused with another request (422) or one whose first request still runs (409), replays
 * a finished one, and otherwise lets the request run and keeps its answer. Runs inside
 * `Authenticated` (and `RateLimited`).
 */
export class Idempotent extends HttpApiMiddleware.Tag<Idempotent>()("Idempotent", {
  failure: Schema.Union(Envelope.InvalidRequest, Envelope.IdempotencyKeyReused, Envelope.IdempotencyInProgress)
}) {}
