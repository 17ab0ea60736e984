/**
 * One call's exchange with undici, as its dispatch handler (`Exchange`): the response's bytes go
 * through our `SseDecoder` and the provider's `Interpreter` as they arrive, in plain code, and the
 * model chunks wait for the stream's next pull; one timer per call for the silences and the
 * deadline.
 */
import type { IncomingHttpHeaders } from "node:http"
import type { ModelChunk } from "@huddle/domain/models/Model"
import type { ProviderFailure } from "@huddle/domain/models/ModelProviders"
import { Chunk, Duration } from "effect"
import type { Dispatcher } from "undici"
import { defaultMaxEventLength, SseDecoder, type SseEvent } from "./SseDecoder.js"
import { type Call, failure, transportFailure } from "./UpstreamFailures.js"

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

/** `setTimeout` takes at most 2^31 - 1 ms; a longer (or infinite) timeout never goes off. */
export const timerMillis = (timeout: Duration.Duration): number | undefined => {
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
export class Exchange implements Dispatcher.DispatchHandler {
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
