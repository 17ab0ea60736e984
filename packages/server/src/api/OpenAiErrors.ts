/**
 * OpenAI's error envelope, for the OpenAI-compatible paths: `{ "error": { "message", "type",
 * "param", "code" } }`. The status and `code` (our CODE) come from the error's schema in
 * `Envelope.ts`, so that both envelopes agree; `type` is OpenAI's word for the status, so that
 * OpenAI SDKs raise the matching error class.
 */
import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Internal } from "./EdgeErrors.js"
import * as Envelope from "./Envelope.js"
import { Schema } from "effect"

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

/** Renders the errors of one schema (`undefined` for the others) in OpenAI's envelope. */
const entry = <A>(schema: Schema.Schema<A, Envelope.ErrorBody>) => {
  const is = Schema.is(schema)
  const encode = Schema.encodeSync(schema)
  const status = HttpApiSchema.getStatusError(schema)
  const type = typeFor(status)
  return (error: unknown): OpenAiError | undefined => {
    if (!is(error)) return undefined
    const { error: code, message } = encode(error)
    return { status, body: { error: { message, type, param: null, code } } }
  }
}

/** Every error schema of `Envelope.ts` (those with a status), so that a new one is rendered here too. */
const isErrorSchema = (value: unknown): value is Schema.Schema<unknown, Envelope.ErrorBody> =>
  Schema.isSchema(value) && value.ast.annotations[HttpApiSchema.AnnotationStatus] !== undefined

const exported: ReadonlyArray<unknown> = Object.values(Envelope)
const schemas = exported.filter(isErrorSchema).map(entry)

const internal = new Internal({ message: "An unexpected error occurred" })

/** Any typed error of ours (an unknown one counts as `INTERNAL`) in OpenAI's envelope. */
export const fromError = (error: unknown): OpenAiError => {
  for (const render of schemas) {
    const rendered = render(error)
    if (rendered !== undefined) return rendered
  }
  return fromError(internal)
}

export const response = (error: unknown): HttpServerResponse.HttpServerResponse => {
  const { body, status } = fromError(error)
  return HttpServerResponse.unsafeJson(body, { status })
}
