/**
 * What the HTTP model providers share: sending one call with a time limit, turning an
 * upstream's statuses, transport errors and silences into `ProviderFailure`s, and its body's
 * server-sent events into model chunks.
 *
 * The body goes through one stream stage (`readBody`): our `SseDecoder`, then the provider's
 * `Interpreter`, called synchronously for each event, with one timer per call for the silences.
 * A stream stage per step (decode, parse, time out, interpret, flatten) cost several channel
 * reads and effects per event; this costs one read per piece of the body.
 */
import type { HttpClient, HttpClientError, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import type { ModelChunk } from "@huddle/domain/models/Model"
import { ProviderFailure } from "@huddle/domain/models/ModelProviders"
import { Cause, Channel, Chunk, Clock, Duration, Effect, Either, ExecutionStrategy, Exit, Redacted, Scope, Stream } from "effect"
import { defaultMaxEventLength, SseDecoder, type SseEvent } from "./SseDecoder.js"

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


/** What a provider makes of the events of one call, given them synchronously as they are decoded. */
export interface Interpreter {
  /**
   * One event: pushes what it yields to `out`, and answers `false` to read on, `true` when it was
   * the last event to read (`[DONE]`, `message_stop`), or a failure to end the stream with.
   */
  readonly event: (event: SseEvent, out: Array<ModelChunk>) => boolean | ProviderFailure
  /** After the last event, or at the end of the body: pushes the closing chunks, or fails. */
  readonly end: (out: Array<ModelChunk>) => ProviderFailure | undefined
}

/** One event's JSON payload parsed, or, when it is malformed, a `bad_response` failure. */
export const parseJson = (call: Call, data: string): unknown => {
  try {
    return JSON.parse(data)
  } catch {
    return failure(call, "bad_response", `malformed JSON in a server-sent event: ${data.slice(0, 80)}`)
  }
}

/**
 * The call's one timer, armed while the response headers or the next piece of the body are
 * awaited and idle while the consumer is busy, as a timeout around each read would be. Arming
 * refreshes the same timer rather than making one per read. Going off while armed, it aborts
 * the request, which fails the pending read, and the stream reports the timeout.
 */
class Watchdog {
  expired = false
  private armed = false
  private timer: ReturnType<typeof setTimeout> | undefined
  private grace: ReturnType<typeof setImmediate> | undefined

  constructor(private readonly millis: number | undefined, private readonly abort: () => void) {}

  arm(): void {
    this.armed = true
    if (this.millis === undefined) return
    if (this.timer === undefined) this.timer = setTimeout(this.check, this.millis)
    else this.timer.refresh()
  }

  disarm(): void {
    this.armed = false
  }

  /** Aborts the request once what has already arrived has been handled, unless stopped before. */
  abortSoon(): void {
    this.grace ??= setImmediate(this.abort)
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    if (this.grace !== undefined) clearImmediate(this.grace)
  }

  private readonly check = (): void => {
    if (!this.armed) return
    this.expired = true
    this.abort()
  }
}

/** `setTimeout` takes at most 2^31 - 1 ms; a longer (or infinite) timeout never goes off. */
const timerMillis = (timeout: Duration.Duration): number | undefined => {
  const millis = Duration.toMillis(timeout)
  return millis <= 2_147_483_647 ? Math.max(1, Math.ceil(millis)) : undefined
}

/** A 2xx answer with an event-stream body, or the failure its status or content type makes. */
const accept = (call: Call, response: HttpClientResponse.HttpClientResponse): Effect.Effect<void, ProviderFailure> => {
  if (response.status < 200 || response.status >= 300) return statusFailure(call, response)
  const type = response.headers["content-type"]
  if (type !== undefined && !type.toLowerCase().includes("text/event-stream")) {
    return Effect.flatMap(snippet(call, response, 200), (body) =>
      Effect.fail(failure(call, "bad_response", `expected an event stream, got ${type}${body.length > 0 ? `: ${body}` : ""}`)))
  }
  return Effect.void
}

type Body = Channel.Channel<
  Chunk.Chunk<ModelChunk>,
  Chunk.Chunk<Uint8Array>,
  ProviderFailure,
  HttpClientError.HttpClientError,
  unknown,
  unknown
>

/**
 * Body bytes in, model chunks out, in one stage: the events of each piece of the body are
 * decoded and interpreted as it arrives, and what they yield leaves as one chunk. A failure
 * comes after the chunks of the events before it.
 */
const readBody = (call: Call, watchdog: Watchdog, interpreter: Interpreter): Body => {
  const decoder = new SseDecoder()
  let out: Array<ModelChunk> = []
  let outcome: boolean | ProviderFailure = false
  const onEvent = (event: SseEvent): boolean => {
    outcome = interpreter.event(event, out)
    return outcome !== false
  }
  const emit = (then: Body): Body => {
    if (out.length === 0) return then
    const chunk = Chunk.unsafeFromArray(out)
    out = []
    return Channel.zipRight(Channel.write(chunk), then)
  }
  const end = (then: Body): Body => {
    const failed = interpreter.end(out)
    return emit(failed === undefined ? then : Channel.fail(failed))
  }
  // After the last event, read on to the end of the body, which comes with it or just after:
  // ended, the body is closed quietly, whereas destroying it early makes undici build an
  // error and format its stack trace. A body that goes on is aborted without waiting.
  const drained: Body = Channel.readWithCause({
    onInput: () => drained,
    onFailure: () => Channel.void,
    onDone: () => Channel.void
  })
  const drain: Body = Channel.suspend(() => {
    watchdog.abortSoon()
    return drained
  })
  const read: Body = Channel.suspend(() => {
    watchdog.arm()
    return next
  })
  const next: Body = Channel.readWithCause({
    onInput: (input: Chunk.Chunk<Uint8Array>) => {
      watchdog.disarm()
      const pieces = Chunk.toReadonlyArray(input)
      for (let i = 0; i < pieces.length && outcome === false; i++) {
        if (decoder.push(pieces[i]!, onEvent) === "too_large") {
          outcome = failure(call, "bad_response", `Pending SSE event exceeded the maximum size of ${defaultMaxEventLength}`)
        }
      }
      if (outcome === false) return emit(read)
      if (outcome === true) return end(drain)
      return emit(Channel.fail(outcome))
    },
    onFailure: (cause) => {
      watchdog.disarm()
      const error = Cause.failureOrCause(cause)
      if (Either.isRight(error)) return Channel.failCause(error.right)
      return Channel.fail(watchdog.expired
        ? failure(call, "timeout", `no data for ${Duration.format(call.timeout)}`)
        : transportFailure(call, error.left))
    },
    onDone: () => {
      watchdog.disarm()
      return end(Channel.void)
    }
  })
  return read
}

/**
 * Sends the request and streams what `interpreter` makes of the answer's events. Fails with
 * `timeout` when the response headers, or a next piece of the body, take longer than
 * `call.timeout`; with `connection` when the connection breaks. The connection belongs to the
 * stream: ending, failing or interrupting it aborts the request.
 */
export const modelStream = (
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, Scope.Scope>,
  call: Call,
  request: HttpClientRequest.HttpClientRequest,
  interpreter: () => Interpreter
): Stream.Stream<ModelChunk, ProviderFailure> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    // A scope of the connection's own, which the watchdog can close while the stream runs.
    const connection = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const watchdog = new Watchdog(timerMillis(call.timeout), () => {
      Effect.runFork(Scope.close(connection, Exit.void))
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => watchdog.stop()))
    watchdog.arm()
    const response = yield* client.execute(request).pipe(
      Scope.extend(connection),
      Effect.catchAll((error) =>
        Effect.fail(watchdog.expired
          ? failure(call, "timeout", `no response within ${Duration.format(call.timeout)}`)
          : transportFailure(call, error))
      )
    )
    watchdog.disarm()
    yield* accept(call, response)
    return response.stream.pipe(Stream.pipeThroughChannel(readBody(call, watchdog, interpreter())))
  }))
