/**
 * OpenAI's error envelope, for the OpenAI-compatible paths: `{ "error": { "message", "type",
 * "param", "code" } }`. The status and `code` (our CODE) come from the error's entry in the one
 * error table (ErrorTable.ts), as the Huddle envelope's do, so that both envelopes agree; `type`
 * is OpenAI's word for the status, so that OpenAI SDKs raise the matching error class; `param`
 * is the request field the error concerns when it says so (its `field`), else `null`.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Predicate, Schema } from "effect"
import * as ErrorTable from "../shared/ErrorTable.js"

export interface OpenAiError {
  readonly status: number
  readonly body: {
    readonly error: { readonly message: string; readonly type: string; readonly param: string | null; readonly code: string }
  }
}

/** The envelope's shape, for the OpenAPI document (OpenApiDocument.ts). */
export const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    message: Schema.String,
    type: Schema.String,
    param: Schema.NullOr(Schema.String),
    code: Schema.String
  })
}).annotations({
  identifier: "OpenAiError",
  description: "OpenAI's error envelope: `code` holds the Huddle error code, `type` OpenAI's word for the status, `param` the request field concerned (or null)"
})

/** OpenAI's `type` for a status. */
export const typeFor = (status: number): string => {
  switch (status) {
    case 401:
      return "authentication_error"
    case 402:
      return "insufficient_quota"
    case 403:
      return "permission_error"
    case 429:
      return "rate_limit_exceeded"
    default:
      return status >= 500 ? "server_error" : "invalid_request_error"
  }
}

/** The request field a typed error says it concerns (its `field`), or `null`: never guessed. */
const paramOf = (error: unknown): string | null =>
  ErrorTable.lookup(error) !== undefined && Predicate.hasProperty(error, "field") && typeof error.field === "string"
    ? error.field
    : null

/** Any typed error of ours (an unknown one counts as `INTERNAL`) in OpenAI's envelope. */
export const fromError = (error: unknown): OpenAiError => {
  const { error: code, message, status } = ErrorTable.envelopeOf(error)
  return { status, body: { error: { message, type: typeFor(status), param: paramOf(error), code } } }
}

export const response = (error: unknown): HttpServerResponse.HttpServerResponse => {
  const { body, status } = fromError(error)
  return HttpServerResponse.unsafeJson(body, { status })
}

/**
 * A route of OpenAI's API that Huddle does not serve: 404 with OpenAI's own code for an unknown
 * URL (`unknown_url`), so that an OpenAI client shows the message rather than a bare status.
 */
export const unknownUrl = (message: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(
    { error: { message, type: typeFor(404), param: null, code: "unknown_url" } },
    { status: 404 }
  )
