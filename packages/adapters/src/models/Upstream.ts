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
 *
 * The failures are made in `UpstreamFailures`; the dispatch handler is `UpstreamExchange`.
 */
import type { ModelChunk } from "@huddle/domain/models/Model"
import type { ProviderFailure } from "@huddle/domain/models/ModelProviders"
import type { Pull } from "@huddle/domain/shared/Streams"
import { Effect, Option, Scope, type Tracer } from "effect"
import { Agent, type Dispatcher } from "undici"
import { Exchange, type Interpreter, timerMillis } from "./UpstreamExchange.js"
import { type Call, clean, failure, statusFailure } from "./UpstreamFailures.js"

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

/** The W3C `traceparent` of a span: version 00, its trace and span ids, whether it is sampled. */
export const traceparentOf = (span: Tracer.Span): string => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/**
 * Sends the request through `dispatcher` and streams what `interpreter` makes of the answer's
 * events. Fails with `timeout` when the response headers, or a next piece of the body, take
 * longer than `call.timeout`; with `connection` when the connection breaks. The connection
 * belongs to the stream: ending, failing or interrupting it aborts the request.
 *
 * The body is read by undici's dispatch handler, in plain code (`Exchange`); the stream pulls
 * what it has decoded, all of it at once, and waits on a callback only when there is nothing.
 * A model call as a pull, in the caller's scope (`Provider.open`).
 */
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
