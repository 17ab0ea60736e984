/**
 * What the HTTP model providers share: sending one call with a time limit, turning an
 * upstream's statuses, transport errors and silences into `ProviderFailure`s, and its body's
 * server-sent events into model chunks.
 *
 * The request goes straight to undici, whose dispatch handler (`Exchange`) decodes the body as it
 * arrives, in plain code: our `SseDecoder`, then the provider's `Interpreter`, called
 * synchronously for each event, with one timer per call for the silences. The stream pulls what
 * has been decoded, all of it at once. (Through `@effect/platform`'s HTTP client the body was a
 * stream of its own, read piece by piece through channel reads, and the client cost about twice
 * a bare undici request.)
 */
import type { IncomingHttpHeaders } from "node:http"
import type { ModelChunk } from "@huddle/domain/models/Model"
import { ProviderFailure } from "@huddle/domain/models/ModelProviders"
import type { Pull } from "@huddle/domain/shared/Streams"
import { Chunk, Clock, Duration, Effect, Option, Redacted, Scope, type Tracer } from "effect"
import { Agent, type Dispatcher } from "undici"
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


let shared: Agent | undefined

/**
 * The dispatcher of a provider made without one: an undici `Agent` of this module's own (never
 * undici's global dispatcher, which Node's built-in `fetch` may have set to its older undici).
 * Its idle connections do not keep the process alive.
 */
export const sharedDispatcher = (): Dispatcher => (shared ??= new Agent())

/** One model call as undici sends it: the path under the provider's origin, its headers and JSON body. */
export interface Request {
  readonly origin: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** `setTimeout` takes at most 2^31 - 1 ms; a longer (or infinite) timeout never goes off. */
const timerMillis = (timeout: Duration.Duration): number | undefined => {
  const millis = Duration.toMillis(timeout)
  return millis <= 2_147_483_647 ? Math.max(1, Math.ceil(millis)) : undefined
}

/** Headers as one string each (undici gives repeated ones as arrays). */
const flatHeaders = (headers: IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined) out[name] = typeof value === "string" ? value : value.join(", ")
  }
  return out
}

/** How far undici may read ahead of the consumer, in model chunks, before the socket is paused. */
const readAhead = 64
/** The most of an error body kept for a failure's message. */
const snippetLimit = 2048
const unexpectedTypeLimit = 200

/** Why a request is aborted by us: one reason for every abort, so that no stack is captured per call. */
const closedByUs = new Error("closed by the consumer")

/**
 * One call's exchange with undici, as its dispatch handler: the response's bytes are decoded and
 * interpreted as they arrive, in plain code, and the model chunks wait in `out` for the stream's
 * next pull (undici is paused when too many wait). One timer per call, armed only while the
 * stream waits for the headers or for data (a slow consumer is not a silent upstream).
 */
class Exchange implements Dispatcher.DispatchHandler {
  out: Array<ModelChunk> = []
  failure: ProviderFailure | undefined = undefined
  /** Nothing more will come: the body ended, the last event was read, or the call failed. */
  finished = false
  /** A non-2xx answer, or one that is not an event stream: its status, headers and the start of its body. */
  refused: { status: number; headers: Record<string, string>; type: string | undefined; body: string; limit: number } | undefined =
    undefined

  private controller: Dispatcher.DispatchController | undefined = undefined
  private responded: { readonly status: number } | undefined = undefined
  private readonly decoder = new SseDecoder()
  private readonly text = new TextDecoder()
  /** The body ended (or failed) on undici's side: nothing to abort. */
  private closed = false
  private expired = false
  private waiter: (() => void) | undefined = undefined
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private abortWanted = false
  /** The timer is armed for the deadline, not the silence limit. */

  constructor(
    private readonly call: Call,
    private readonly interpreter: Interpreter,
    private readonly millis: number | undefined
  ) {}

  private readonly onEvent = (event: SseEvent): boolean => {
    const outcome = this.interpreter.event(event, this.out)
    if (outcome === false) return false
    if (outcome === true) this.end()
    else this.fail(outcome)
    return true
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.abortWanted) controller.abort(closedByUs)
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    // 1xx answers come before the real one.
    if (status < 200) return
    this.responded = { status }
    const type = headers["content-type"]
    const contentType = typeof type === "string" ? type : undefined
    if (status >= 300) {
      this.refused = { status, headers: flatHeaders(headers), type: undefined, body: "", limit: snippetLimit }
    } else if (contentType !== undefined && !contentType.toLowerCase().includes("text/event-stream")) {
      this.refused = { status, headers: {}, type: contentType, body: "", limit: unexpectedTypeLimit }
    }
    this.wake()
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return
    const refused = this.refused
    if (refused !== undefined) {
      refused.body += this.text.decode(chunk, { stream: true })
      if (refused.body.length >= refused.limit) {
        refused.body = refused.body.slice(0, refused.limit)
        this.finished = true
        this.wake()
      }
      return
    }
    if (this.decoder.push(chunk, this.onEvent) === "too_large") {
      this.fail(failure(this.call, "bad_response", `Pending SSE event exceeded the maximum size of ${defaultMaxEventLength}`))
    }
    if (this.out.length >= readAhead && !this.finished) controller.pause()
    if (this.out.length > 0 || this.finished) this.wake()
  }

  onResponseEnd(): void {
    this.closed = true
    if (this.finished) return
    if (this.refused === undefined) this.end()
    else this.finished = true
    this.wake()
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.closed = true
    if (this.finished) return
    if (this.refused !== undefined) {
      // What arrived of an error body is enough for its message.
      this.finished = true
    } else if (this.expired) {
      this.fail(failure(
        this.call,
        "timeout",
        this.call.deadline !== undefined && Date.now() >= this.call.deadline
          ? "the call reached its deadline"
          : this.responded === undefined
          ? `no response within ${Duration.format(this.call.timeout)}`
          : `no data for ${Duration.format(this.call.timeout)}`
      ))
    } else {
      this.fail(transportFailure(this.call, error, this.responded))
    }
    this.wake()
  }

  /** The chunks that wait, taken; undici reads on if it was paused for them. */
  take(): Chunk.Chunk<ModelChunk> {
    const chunk = Chunk.unsafeFromArray(this.out)
    this.out = []
    if (this.controller?.paused === true && !this.finished) this.controller.resume()
    return chunk
  }

  /** Calls `wake` once something can be pulled; the timer runs meanwhile, up to the call's deadline. */
  wait(wake: () => void): void {
    this.waiter = wake
    const { deadline } = this.call
    // The deadline comes before the silence limit only in a call's last stretch: a timer of its own then.
    const left = deadline === undefined ? undefined : deadline - Date.now() + 1
    if (left !== undefined && (this.millis === undefined || left < this.millis)) {
      if (this.timer !== undefined) clearTimeout(this.timer)
      this.timer = setTimeout(this.expire, Math.max(1, left))
      return
    }
    if (this.millis === undefined) return
    if (this.timer === undefined) this.timer = setTimeout(this.expire, this.millis)
    else this.timer.refresh()
  }

  unwait(): void {
    this.waiter = undefined
  }

  /**
   * The stream is done with the call. A body still open is aborted, after what has already
   * arrived has been handled: ended, a body is closed quietly, and one that ends with its last
   * event usually does so at once.
   */
  close(): void {
    this.waiter = undefined
    if (this.timer !== undefined) clearTimeout(this.timer)
    if (!this.closed) setImmediate(this.abort)
  }

  private end(): void {
    this.finished = true
    const failed = this.interpreter.end(this.out)
    if (failed !== undefined) this.failure = failed
  }

  private fail(failed: ProviderFailure): void {
    this.finished = true
    this.failure = failed
  }

  private wake(): void {
    const waiter = this.waiter
    if (waiter === undefined) return
    this.waiter = undefined
    waiter()
  }

  private readonly expire = (): void => {
    if (this.waiter === undefined) return
    this.expired = true
    this.abort()
  }

  private readonly abort = (): void => {
    if (this.closed) return
    if (this.controller === undefined) this.abortWanted = true
    else this.controller.abort(closedByUs)
  }
}

/**
 * Sends the request through `dispatcher` and streams what `interpreter` makes of the answer's
 * events. Fails with `timeout` when the response headers, or a next piece of the body, take
 * longer than `call.timeout`; with `connection` when the connection breaks. The connection
 * belongs to the stream: ending, failing or interrupting it aborts the request.
 *
 * The body is read by undici's dispatch handler, in plain code (`Exchange`); the stream pulls
 * what it has decoded, all of it at once, and waits on a callback only when there is nothing.
 */
/** The W3C `traceparent` of a span: version 00, its trace and span ids, whether it is sampled. */
export const traceparentOf = (span: Tracer.Span): string => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/** A model call as a pull, in the caller's scope (`Provider.open`). */
export const modelPull = (
  dispatcher: Dispatcher,
  call: Call,
  request: Request,
  interpreter: () => Interpreter
): Effect.Effect<Pull<ModelChunk, ProviderFailure>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const exchange = new Exchange(call, interpreter(), timerMillis(call.timeout))
    // On the scope itself: `Effect.addFinalizer` would restore the fiber's references around it
    // (two diffs of a request's whole context), which closing a socket does not need.
    yield* Scope.addFinalizer(yield* Effect.scope, Effect.sync(() => exchange.close()))
    // The upstream's own traces join the request's (W3C Trace Context).
    const span = yield* Effect.option(Effect.currentSpan)
    const headers = Option.isNone(span) ? request.headers : { ...request.headers, traceparent: traceparentOf(span.value) }
    dispatcher.dispatch({ origin: request.origin, path: request.path, method: "POST", headers, body: request.body }, exchange)
    const waitFor: Effect.Effect<void> = Effect.async<void>((resume) => {
      exchange.wait(() => resume(Effect.void))
      return Effect.sync(() => exchange.unwait())
    })
    const pull: Pull<ModelChunk, ProviderFailure> = Effect.suspend(() => {
      if (exchange.out.length > 0) return Effect.succeed(exchange.take())
      if (!exchange.finished) return Effect.zipRight(waitFor, pull)
      if (exchange.failure !== undefined) return Effect.fail(Option.some(exchange.failure))
      const refused = exchange.refused
      if (refused === undefined) return Effect.fail(Option.none())
      if (refused.type !== undefined) {
        const body = clean(call, refused.body)
        return Effect.fail(Option.some(failure(call, "bad_response", `expected an event stream, got ${refused.type}${body.length > 0 ? `: ${body}` : ""}`)))
      }
      return Effect.flatMap(statusFailure(call, refused.status, refused.headers, refused.body), (failed) => Effect.fail(Option.some(failed)))
    })
    return pull
  })
