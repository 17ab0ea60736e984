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
 *
 * One fiber runs the events and frames them into a mailbox that the body reads: the events are
 * framed in plain code as they arrive, and the heartbeats go into the same mailbox. (Merging a
 * tick stream into the body forked a dozen fibers per response and sent every frame through a
 * queue of its own.)
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Chunk, Deferred, Effect, Either, ExecutionStrategy, Exit, Mailbox, Schedule, Scope, Stream } from "effect"
import * as Retention from "../Retention.js"
import { forEachPull, type Opened } from "@huddle/domain/shared/Streams"
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

/** How many frames may wait for a slow client before the run waits too. */
const bufferedFrames = 64

/**
 * Answers with `events` as `text/event-stream` in `dialect`; fails as they do when they fail
 * before any output.
 */
export const respond = <A, E>(
  events: Opened<A, E>,
  dialect: Dialect<A>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const { heartbeat: every } = yield* SseSettings
    const frames = yield* Mailbox.make<Uint8Array, E>(bufferedFrames)
    // Completed once the first output came or the run ended; failed when the run failed before.
    const begun = yield* Deferred.make<void, E>()
    const outcome = { failed: false }
    let head: Array<A> | undefined = []
    // The events held back before the body began: what `dialect.headers` reads.
    let held: ReadonlyArray<A> = []

    const beat = Effect.repeat(frames.offer(heartbeat), Schedule.spaced(every)).pipe(Effect.delay(every), Effect.forkIn(scope))
    /** The held events' frames, then the heartbeats; the handler answers 200 from here. */
    const begin = (): Effect.Effect<void> => {
      held = head!
      head = undefined
      return frames.offerAll(dialect.frames(Chunk.unsafeFromArray(held))).pipe(
        Effect.zipRight(beat),
        Effect.zipRight(Deferred.succeed(begun, undefined))
      )
    }

    const run = forEachPull(events, (chunk): Effect.Effect<unknown> => {
      if (head === undefined) return frames.offerAll(dialect.frames(chunk))
      for (const event of chunk) head.push(event)
      return Chunk.some(chunk, dialect.isOutput) ? begin() : Effect.void
    }).pipe(
      Effect.matchCauseEffect({
        onSuccess: () => (head === undefined ? frames.end : Effect.zipRight(begin(), frames.end)),
        onFailure: (cause) => {
          if (head !== undefined) return Deferred.failCause(begun, cause)
          outcome.failed = true
          return Either.match(Cause.failureOrCause(cause), {
            onLeft: (error) => Effect.zipRight(frames.offer(dialect.failure(error)), frames.end),
            onRight: (defect) => frames.failCause(defect)
          })
        }
      })
    )
    yield* Effect.forkIn(run, scope)
    yield* Deferred.await(begun).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit))))
    const body = Stream.ensuring(Mailbox.toStream(frames), Scope.close(scope, Exit.void))
    // Sent 200 before it can fail; one that ended by framing a failure stands for a 5xx.
    return Retention.keepAs(
      HttpServerResponse.stream(body, {
        contentType: "text/event-stream",
        headers: dialect.headers === undefined ? headers : { ...headers, ...dialect.headers(held) }
      }),
      () => (outcome.failed ? 500 : 200)
    )
  })
