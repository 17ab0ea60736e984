/**
 * Server-sent events for a pipeline run. Events before the first token are held back so that a
 * request failing early (no credits, a policy refusal) still gets its plain HTTP error; from the
 * first token (or the end of the run) on, events stream as they happen, with comment heartbeats
 * while nothing else is said. The run lives in the response's scope: a client that goes away
 * interrupts it, and the pipeline settles credits for what was used.
 */
import { HttpServerResponse } from "@effect/platform"
import type { PipelineEvent } from "@huddle/domain/services/IntentPipeline"
import { Cause, Deferred, Duration, Effect, Exit, Mailbox, Option, Scope, Stream } from "effect"
import * as ErrorTable from "../api/ErrorTable.js"

const encoder = new TextEncoder()

export const frame = (event: string, data: unknown): Uint8Array =>
  encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)

const heartbeat = encoder.encode(": keepalive\n\n")

export const pipelineFrame = (event: PipelineEvent): Uint8Array =>
  event._tag === "Token"
    ? frame("token", { text: event.text })
    : frame("stage", { stage: event.stage, status: event.status, ...event.detail })

/** The envelope of a failure after streaming began, from the one error table. */
const errorCode = (error: unknown): { error: string; message: string } => {
  const { error: code, message } = ErrorTable.envelopeOf(error)
  return { error: code, message }
}

export interface Options {
  readonly heartbeat: Duration.Duration
}

/**
 * Runs `run` and answers with its events as SSE; `metadata` is the run's result, encoded by
 * `toMetadata`. Fails like `run` when it fails before anything was streamed.
 */
export const respond = <A, E, R>(
  run: (emit: (event: PipelineEvent) => Effect.Effect<void>) => Effect.Effect<A, E, R>,
  toMetadata: (result: A) => Effect.Effect<{ readonly status: string; readonly body: unknown }>,
  options: Options
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const mailbox = yield* Mailbox.make<Uint8Array>()
    const started = yield* Deferred.make<void>()
    let streamedToken = false
    const emit = (event: PipelineEvent) =>
      Effect.zipRight(
        mailbox.offer(pipelineFrame(event)),
        event._tag === "Token"
          ? Effect.zipRight(Effect.sync(() => (streamedToken = true)), Deferred.succeed(started, undefined))
          : Effect.void
      )
    const runExit = yield* Deferred.make<Exit.Exit<A, E>>()

    yield* run(emit).pipe(
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.gen(function*() {
          yield* Deferred.succeed(runExit, exit)
          if (Exit.isSuccess(exit)) {
            const { body, status } = yield* toMetadata(exit.value)
            yield* mailbox.offer(frame("metadata", body))
            yield* mailbox.offer(frame("done", { status }))
          } else if (!Exit.isInterrupted(exit)) {
            yield* mailbox.offer(frame("error", errorCode(Option.getOrUndefined(Cause.failureOption(exit.cause)) ?? Cause.squash(exit.cause))))
            yield* mailbox.offer(frame("done", { status: "failed" }))
          }
          yield* Deferred.succeed(started, undefined)
        })
      ),
      Effect.ensuring(mailbox.end),
      Effect.forkIn(scope)
    )

    // Until the first token: if the run fails, answer with its error instead of a stream.
    yield* Deferred.await(started).pipe(Effect.onInterrupt(() => Scope.close(scope, Exit.void)))
    const early = yield* Deferred.poll(runExit)
    if (Option.isSome(early)) {
      const exit = yield* early.value
      if (Exit.isFailure(exit) && !Exit.isInterrupted(exit) && !streamedToken) {
        yield* Scope.close(scope, Exit.void)
        return yield* Effect.failCause(exit.cause)
      }
    }

    const events = Mailbox.toStream(mailbox).pipe(
      Stream.merge(Stream.tick(options.heartbeat).pipe(Stream.drop(1), Stream.as(heartbeat)), { haltStrategy: "left" }),
      Stream.ensuring(Scope.close(scope, Exit.void))
    )
    return HttpServerResponse.stream(events, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })
