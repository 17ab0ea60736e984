/**
 * An upstream's answers that are not model chunks, as `ProviderFailure`s: a non-2xx status (with
 * its `Retry-After`), a transport error, a malformed event; each message cleaned of the call's
 * secret and bounded.
 */
import { ProviderFailure } from "@huddle/domain/models/ModelProviders"
import { Clock, Duration, Effect, Redacted } from "effect"

/** One model call, as the failure messages describe it. */
export interface Call {
  readonly provider: string
  /** The catalog id of the model. */
  readonly model: string
  /** Removed from every failure message, in case an upstream echoes it. */
  readonly secret: Redacted.Redacted | undefined
  /** Time to the response headers, and the longest silence allowed between body chunks. */
  readonly timeout: Duration.Duration
  /** When the whole call must have ended (`ModelRequest.deadline`): no waiting past it. */
  readonly deadline?: number | undefined
}

type Reason = ProviderFailure["reason"]

const maxMessage = 300

/** Upstream text as it may appear in a failure: secret removed, on one line, bounded. */
export const clean = (call: Call, text: string): string => {
  let out = text
  if (call.secret !== undefined) {
    const secret = Redacted.value(call.secret)
    if (secret.length > 0) out = out.split(secret).join("[redacted]")
  }
  out = out.replace(/\s+/g, " ").trim()
  return out.length > maxMessage ? `${out.slice(0, maxMessage)}…` : out
}

export const failure = (
  call: Call,
  reason: Reason,
  message: string,
  extra: { readonly status?: number | undefined; readonly retryAfter?: Duration.Duration | undefined } = {}
): ProviderFailure =>
  new ProviderFailure({
    provider: call.provider,
    model: call.model,
    reason,
    retryable: reason !== "rejected" && reason !== "bad_response",
    message: clean(call, message),
    status: extra.status,
    retryAfter: extra.retryAfter
  })

/** `retry-after-ms` (OpenAI's), else `Retry-After` in seconds or as an HTTP date. */
export const retryAfter = (headers: Readonly<Record<string, string>>): Effect.Effect<Duration.Duration | undefined> =>
  Effect.gen(function*() {
    const millis = headers["retry-after-ms"]
    if (millis !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(millis)) return Duration.millis(Number(millis))
    const value = headers["retry-after"]
    if (value === undefined) return undefined
    if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Duration.seconds(Number(value))
    const at = Date.parse(value)
    if (Number.isNaN(at)) return undefined
    const now = yield* Clock.currentTimeMillis
    return Duration.millis(Math.max(0, at - now))
  })

/** The message inside an error body (`{error: {message}}`, `{error: "…"}`, `{message}`), else the body. */
export const errorMessageOf = (body: string): string => {
  try {
    const json: unknown = JSON.parse(body)
    if (typeof json === "object" && json !== null) {
      const error = "error" in json ? json.error : undefined
      if (typeof error === "string") return error
      if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
        return error.message
      }
      if ("message" in json && typeof json.message === "string") return json.message
    }
  } catch {
    // not JSON: the body itself
  }
  return body
}

const causeCode = (cause: unknown): string | undefined => {
  for (let current = cause, depth = 0; typeof current === "object" && current !== null && depth < 5; depth++) {
    if ("code" in current && typeof current.code === "string") return current.code
    current = "cause" in current ? current.cause : undefined
  }
  return undefined
}

/** A transport error, before the response headers (`responded` false) or while reading the body. */
export const transportFailure = (call: Call, error: Error, responded: { readonly status: number } | undefined): ProviderFailure => {
  const detail = causeCode(error) ?? error.message
  return responded === undefined
    ? failure(call, "connection", `could not reach the provider (${detail})`)
    : failure(call, "connection", `the connection failed while reading the response (${detail})`, { status: responded.status })
}

/** A non-2xx status as a failure: 429 and 408 carry `retryAfter`, 5xx are retryable, other 4xx are not. */
export const statusFailure = (
  call: Call,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string
): Effect.Effect<ProviderFailure> =>
  Effect.map(retryAfter(headers), (wait) => {
    const detail = errorMessageOf(body)
    const message = `HTTP ${status}${detail.trim().length > 0 ? `: ${detail}` : ""}`
    const reason: Reason = status === 429 ? "rate_limited" : status === 408 ? "timeout" : status >= 500 ? "server_error" : "rejected"
    return failure(call, reason, message, { status, retryAfter: reason === "rejected" ? undefined : wait })
  })

/** One event's JSON payload parsed, or, when it is malformed, a `bad_response` failure. */
export const parseJson = (call: Call, data: string): unknown => {
  try {
    return JSON.parse(data)
  } catch {
    return failure(call, "bad_response", `malformed JSON in a server-sent event: ${data.slice(0, 80)}`)
  }
}
