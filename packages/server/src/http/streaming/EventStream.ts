/**
 * The one way an answer is streamed over HTTP, in any wire dialect: the events are held back
 * until the first output (or the end of the run), so that a request failing early — no credits,
 * a refusal, every model failing — still gets its plain HTTP error, which SDKs raise as such.
 * From then on events are framed by the dialect as they come; a failure after that point is
 * framed as the dialect's error, and the response stands for a failure (`Retention`), known from
 * the events rather than from the bytes, so that it is not kept for replay.
 *
 * The run lives in a scope of its own that closes when the body ends, or with the request's
 * scope at the latest: a client that goes away interrupts it, and the run settles its credits.
 */
import { HttpServerResponse } from "@effect/platform"
import { Chunk, Effect, Either, ExecutionStrategy, Exit, Option, Scope, Stream } from "effect"
import * as Retention from "../Retention.js"
import { SseSettings } from "./SseSettings.js"

/** How one wire dialect writes a run's events. */
export interface Dialect<A> {
  /** Whether an event is output: the events before the first one are held back. */
  readonly isOutput: (event: A) => boolean
  /** The frames of some events (possibly none). */
  readonly frames: (events: Chunk.Chunk<A>) => Chunk.Chunk<Uint8Array>
  /** The frame of a failure after the stream began. */
  readonly failure: (error: unknown) => Uint8Array
  /** Response headers said by the events held back (once, before the body starts). */
  readonly headers?: ((head: ReadonlyArray<A>) => Record<string, string>) | undefined
}

const headers = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/**
 * Sent every `SseSettings.heartbeat` once a stream has begun, to keep proxies from closing a
 * connection that says nothing for a while (a council deliberating): an SSE comment, which every
 * dialect's clients skip.
 */
const heartbeat = new TextEncoder().encode(": keepalive\n\n")

/**
 * Answers with `events` as `text/event-stream` in `dialect`; fails as they do when they fail
 * before any output.
 */
export const respond = <A, E>(
  events: Stream.Stream<A, E>,
  dialect: Dialect<A>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const { ended, head, pull } = yield* Effect.gen(function*() {
      const pull = yield* Stream.toPull(events)
      const head: Array<A> = []
      let ended = false
      while (!ended && !head.some(dialect.isOutput)) {
        const next = yield* Effect.either(pull)
        if (Either.isRight(next)) head.push(...next.right)
        else if (Option.isSome(next.left)) return yield* Effect.fail(next.left.value)
        else ended = true
      }
      return { ended, head, pull }
    }).pipe(
      Scope.extend(scope),
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit)))
    )

    const outcome = { failed: false }
    const rest: Stream.Stream<A, E> = ended ? Stream.empty : Stream.repeatEffectChunkOption(pull)
    const framed = Stream.concat(Stream.fromChunk(Chunk.unsafeFromArray(head)), rest).pipe(
      Stream.mapChunks(dialect.frames),
      Stream.catchAll((error) => {
        outcome.failed = true
        return Stream.make(dialect.failure(error))
      })
    )
    const { heartbeat: every } = yield* SseSettings
    const body = Stream.merge(framed, Stream.tick(every).pipe(Stream.drop(1), Stream.as(heartbeat)), { haltStrategy: "left" }).pipe(
        Stream.ensuring(Scope.close(scope, Exit.void))
      )
    // Sent 200 before it can fail; one that ended by framing a failure stands for a 5xx.
    return Retention.keepAs(
      HttpServerResponse.stream(body, {
        contentType: "text/event-stream",
        headers: dialect.headers === undefined ? headers : { ...headers, ...dialect.headers(head) }
      }),
      () => (outcome.failed ? 500 : 200)
    )
  })
