/**
 * Anthropic's error envelope, for the Messages API paths: `{"type":"error","error":{"type",
 * "message"}}`. The status and the message come from the error's entry in the one error table
 * (ErrorTable.ts), as the other envelopes' do; `error.type` is Anthropic's word for the status,
 * so that Anthropic's SDKs raise the matching error class (402 `billing_error` says which budget
 * ran out, in the message). A message about a request field starts with its name.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Predicate, Schema } from "effect"
import * as ErrorTable from "../shared/ErrorTable.js"

export interface AnthropicError {
  readonly status: number
  readonly body: { readonly type: "error"; readonly error: { readonly type: string; readonly message: string } }
}

/** The envelope's shape, for the OpenAPI document (OpenApiDocument.ts). */
export const ErrorBody = Schema.Struct({
  type: Schema.Literal("error"),
  error: Schema.Struct({ type: Schema.String, message: Schema.String })
}).annotations({
  identifier: "AnthropicError",
  description: "Anthropic's error envelope: `error.type` is Anthropic's word for the status"
})

/** Anthropic's `error.type` for a status. */
export const typeFor = (status: number): string => {
  switch (status) {
    case 401:
      return "authentication_error"
    case 402:
      return "billing_error"
    case 403:
      return "permission_error"
    case 404:
      return "not_found_error"
    case 413:
      return "request_too_large"
    case 429:
      return "rate_limit_error"
    case 503:
    case 529:
      return "overloaded_error"
    default:
      return status >= 500 ? "api_error" : "invalid_request_error"
  }
}

/** The message, with the field it concerns in front when the error names one and the message does not. */
const messageOf = (error: unknown, message: string): string => {
  const field = ErrorTable.lookup(error) !== undefined && Predicate.hasProperty(error, "field") && typeof error.field === "string"
    ? error.field
    : undefined
  return field === undefined || message.includes(field) ? message : `${field}: ${message}`
}

/** Any typed error of ours (an unknown one counts as `INTERNAL`) in Anthropic's envelope. */
export const fromError = (error: unknown): AnthropicError => {
  const { message, status } = ErrorTable.envelopeOf(error)
  return { status, body: { type: "error", error: { type: typeFor(status), message: messageOf(error, message) } } }
}

export const response = (error: unknown): HttpServerResponse.HttpServerResponse => {
  const { body, status } = fromError(error)
  return HttpServerResponse.unsafeJson(body, { status })
}
