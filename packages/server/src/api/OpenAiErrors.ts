/**
 * OpenAI's error envelope, for the OpenAI-compatible paths: `{ "error": { "message", "type",
 * "param", "code" } }`. The status and `code` (our CODE) come from the error's entry in the one
 * error table (ErrorTable.ts), as the Huddle envelope's do, so that both envelopes agree; `type`
 * is OpenAI's word for the status, so that OpenAI SDKs raise the matching error class.
 */
import { HttpServerResponse } from "@effect/platform"
import { Predicate } from "effect"
import * as ErrorTable from "./ErrorTable.js"

export interface OpenAiError {
  readonly status: number
  readonly body: {
    readonly error: { readonly message: string; readonly type: string; readonly param: string | null; readonly code: string }
  }
}

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

/** The request field an error names (`InvalidRequest.param`), if any. */
const paramOf = (error: unknown): string | null =>
  Predicate.hasProperty(error, "param") && typeof error.param === "string" ? error.param : null

/** Any typed error of ours (an unknown one counts as `INTERNAL`) in OpenAI's envelope. */
export const fromError = (error: unknown): OpenAiError => {
  const { error: code, message, status } = ErrorTable.envelopeOf(error)
  return { status, body: { error: { message, type: typeFor(status), param: paramOf(error), code } } }
}

export const response = (error: unknown): HttpServerResponse.HttpServerResponse => {
  const { body, status } = fromError(error)
  return HttpServerResponse.unsafeJson(body, { status })
}
