/**
 * What the HTTP model providers share: sending one call with a time limit, turning an
 * upstream's statuses, transport errors and silences into `ProviderFailure`s, and its body into
 * server-sent events.
 *
 * SSE parsing is `@effect/experimental/Sse`'s `makeParser` (a port of the maintained
 * `eventsource-parser`, already a dependency of ours). We drive it ourselves rather than through
 * its `makeChannel`, because that channel treats a `retry:` field as "sleep, then read on",
 * which is EventSource reconnection semantics and wrong for a one-shot model call.
 */
import * as Sse from "@effect/experimental/Sse"
import type { HttpClient, HttpClientError, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { ProviderFailure } from "@huddle/domain/ports/ModelProviders"
import { Clock, Duration, Effect, Redacted, type Scope, Stream } from "effect"

/** One model call, as the failure messages describe it. */
export interface Call {
  readonly provider: string
  /** The catalog id of the model. */
  readonly model: string
  /** Removed from every failure message, in case an upstream echoes it. */
  readonly secret: Redacted.Redacted | undefined
  /** Time to the response headers, and the longest silence allowed between body chunks. */
  readonly timeout: Duration.Duration
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

/** The start of a body, for a failure message; never fails, never waits longer than the timeout. */
const snippet = (call: Call, response: HttpClientResponse.HttpClientResponse, limit = 2048): Effect.Effect<string> =>
  response.stream.pipe(
    Stream.decodeText(),
    Stream.runFoldWhile("", (text) => text.length < limit, (text, part) => text + part),
    Effect.timeout(call.timeout),
    Effect.orElseSucceed(() => "")
  )

const causeCode = (cause: unknown): string | undefined => {
  for (let current = cause, depth = 0; typeof current === "object" && current !== null && depth < 5; depth++) {
    if ("code" in current && typeof current.code === "string") return current.code
    current = "cause" in current ? current.cause : undefined
  }
  return undefined
}

export const transportFailure = (call: Call, error: HttpClientError.HttpClientError): ProviderFailure => {
  const code = causeCode(error.cause)
  const detail = code ?? (error.cause instanceof Error ? error.cause.message : error.reason)
  if (error._tag === "RequestError") {
    return error.reason === "Transport"
      ? failure(call, "connection", `could not reach the provider (${detail})`)
      : failure(call, "rejected", `could not send the request (${error.reason})`)
  }
  return failure(call, "connection", `the connection failed while reading the response (${detail})`, { status: error.response.status })
}

/** A non-2xx status as a failure: 429 and 408 carry `retryAfter`, 5xx are retryable, other 4xx are not. */
export const statusFailure = (call: Call, response: HttpClientResponse.HttpClientResponse): Effect.Effect<never, ProviderFailure> =>
  Effect.gen(function*() {
    const status = response.status
    const detail = errorMessageOf(yield* snippet(call, response))
    const message = `HTTP ${status}${detail.trim().length > 0 ? `: ${detail}` : ""}`
    const wait = yield* retryAfter(response.headers)
    const reason: Reason = status === 429 ? "rate_limited" : status === 408 ? "timeout" : status >= 500 ? "server_error" : "rejected"
    return yield* Effect.fail(failure(call, reason, message, { status, retryAfter: reason === "rejected" ? undefined : wait }))
  })

/**
 * Sends the request and waits, at most `timeout`, for a 2xx answer with an event-stream body.
 * The connection belongs to the surrounding scope: closing it (the stream ends, fails or is
 * interrupted) aborts the request.
 */
export const openEventStream = (
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, Scope.Scope>,
  call: Call,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, ProviderFailure, Scope.Scope> =>
  client.execute(request).pipe(
    Effect.catchAll((error) => Effect.fail(transportFailure(call, error))),
    Effect.timeoutFail({
      duration: call.timeout,
      onTimeout: () => failure(call, "timeout", `no response within ${Duration.format(call.timeout)}`)
    }),
    Effect.flatMap((response) => {
      if (response.status < 200 || response.status >= 300) return statusFailure(call, response)
      const type = response.headers["content-type"]
      if (type !== undefined && !type.toLowerCase().includes("text/event-stream")) {
        return Effect.flatMap(snippet(call, response, 200), (body) =>
          Effect.fail(failure(call, "bad_response", `expected an event stream, got ${type}${body.length > 0 ? `: ${body}` : ""}`)))
      }
      return Effect.succeed(response)
    })
  )

/**
 * The server-sent events of a response body. Fails with `timeout` when no bytes arrive for
 * `call.timeout`, with `connection` when the connection breaks.
 */
export const events = (call: Call, response: HttpClientResponse.HttpClientResponse): Stream.Stream<Sse.Event, ProviderFailure> =>
  Stream.suspend(() => {
    let parsed: Array<Sse.Event> = []
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Event") parsed.push(event)
    })
    return response.stream.pipe(
      Stream.catchAll((error) => Stream.fail(transportFailure(call, error))),
      Stream.timeoutFail(() => failure(call, "timeout", `no data for ${Duration.format(call.timeout)}`), call.timeout),
      Stream.decodeText(),
      Stream.mapEffect((text) => {
        const error = parser.feed(text)
        if (error !== undefined) return Effect.fail(failure(call, "bad_response", error.message))
        const out = parsed
        parsed = []
        return Effect.succeed(out)
      }),
      Stream.flattenIterables
    )
  })

/** Parses one event's JSON payload; malformed JSON is a `bad_response`. */
export const parseJson = (call: Call, data: string): Effect.Effect<unknown, ProviderFailure> =>
  Effect.try({
    try: (): unknown => JSON.parse(data),
    catch: () => failure(call, "bad_response", `malformed JSON in a server-sent event: ${data.slice(0, 80)}`)
  })
