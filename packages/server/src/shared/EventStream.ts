/**
 * The one way an answer is streamed over HTTP, in any wire dialect: the events are held back
 * until the first output (or the end of the run), so that a request failing early — no credits,
 * a refusal, every model failing — still gets its plain HTTP error, which SDKs raise as such.
 * From then on events are framed by the dialect as they come; a failure after that point is
 * framed as the dialect's error, and the response stands for a failure (`Retention`), known from
 * the events rather than from the bytes, so that it is not kept for replay.
 *
 * The run lives in a scope of its own, forked from the request's, which the platform closes once
 * the body is written or the client is gone: a client that goes away interrupts the run, and the
 * run settles its credits.
 *
 * One fiber runs the events, frames them in plain code as they arrive and pushes the frames into
 * the body, a Node `Readable` that Node writes from; the heartbeats are pushed into it too. When
 * the client reads slower than the answer comes, the run waits until Node reads again. (Merging a
 * tick stream into the body forked a dozen fibers per response; a mailbox read as an Effect stream
 * cost a channel or three per response: decision 0029.)
 */
import { Readable } from "node:stream"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Chunk, Deferred, Effect, Either, ExecutionStrategy, Exit, Schedule, Scope } from "effect"
import { describeDefect } from "../edge/ErrorTranslation.js"
import * as Retention from "./Retention.js"
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
  /** The dialect's own heartbeat frame (Anthropic's `ping`), instead of an SSE comment. */
  readonly heartbeat?: Uint8Array | undefined
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
  events: Opened<A, E>,
  dialect: Dialect<A>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const { heartbeat: every } = yield* SseSettings
    // The body Node writes from: frames are pushed as they are made, and the run waits while the
    // client is slower than the answer (`push` false) until Node reads again.
    const readable = yield* Effect.makeLatch(true)
    let ended = false
    const body = new Readable({
      read: () => readable.unsafeOpen(),
      destroy: (error, done) => {
        ended = true
        readable.unsafeOpen()
        done(error)
      }
    })
    /** Pushes the frames now; false when the run must wait for Node to read (the latch is closed then). */
    const pushNow = (frames: Chunk.Chunk<Uint8Array>): boolean => {
      if (ended) return true
      let more = true
      for (const frame of frames) more = body.push(frame)
      if (!more) readable.unsafeClose()
      return more
    }
    const push = (frames: Chunk.Chunk<Uint8Array>): Effect.Effect<void> =>
      Effect.suspend(() => (pushNow(frames) ? Effect.void : readable.await))
    const end = (last?: Uint8Array) =>
      Effect.sync(() => {
        if (ended) return
        if (last !== undefined) body.push(last)
        ended = true
        body.push(null)
      })
    // Completed once the first output came or the run ended; failed when the run failed before.
    const begun = yield* Deferred.make<void, E>()
    const outcome = { failed: false }
    let head: Array<A> | undefined = []
    // The events held back before the body began: what `dialect.headers` reads.
    let held: ReadonlyArray<A> = []

    const beat = Effect.repeat(push(Chunk.of(dialect.heartbeat ?? heartbeat)), Schedule.spaced(every)).pipe(Effect.delay(every), Effect.forkIn(scope))
    /**
     * The held events' frames, then the heartbeats; the handler answers 200 from here. The body
     * is handed to Node only once `begun` is done, so the run waits for Node to read (when the
     * first frames fill its buffer) only after that, never before.
     */
    const begin = (): Effect.Effect<void> =>
      Effect.suspend(() => {
        held = head!
        head = undefined
        const more = pushNow(dialect.frames(Chunk.unsafeFromArray(held)))
        return beat.pipe(
          Effect.zipRight(Deferred.succeed(begun, undefined)),
          Effect.zipRight(more ? Effect.void : readable.await)
        )
      })

    const run = forEachPull(events, (chunk): Effect.Effect<unknown> => {
      if (head === undefined) return push(dialect.frames(chunk))
      for (const event of chunk) head.push(event)
      return Chunk.some(chunk, dialect.isOutput) ? begin() : Effect.void
    }).pipe(
      Effect.matchCauseEffect({
        onSuccess: () => (head === undefined ? end() : Effect.zipRight(begin(), end())),
        onFailure: (cause) => {
          if (head !== undefined) return Deferred.failCause(begun, cause)
          outcome.failed = true
          return Either.match(Cause.failureOrCause(cause), {
            onLeft: (error) => end(dialect.failure(error)),
            // A defect once the body began: logged as the edge logs one (no stack), and the
            // response cut, so that the client cannot take what it got for a whole answer.
            onRight: (defect) =>
              Effect.logError("unexpected failure").pipe(
                Effect.annotateLogs({ defect: describeDefect(Cause.squash(defect)), streamed: true }),
                Effect.zipRight(Effect.sync(() => body.destroy(new Error("the answer failed after it began"))))
              )
          })
        }
      })
    )
    yield* Effect.forkIn(run, scope)
    yield* Deferred.await(begun).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit))))
    // Sent 200 before it can fail; one that ended by framing a failure stands for a 5xx.
    return Retention.keepAs(
      HttpServerResponse.raw(body, {
        contentType: "text/event-stream",
        headers: dialect.headers === undefined ? headers : { ...headers, ...dialect.headers(held) }
      }),
      () => (outcome.failed ? 500 : 200)
    )
  })
