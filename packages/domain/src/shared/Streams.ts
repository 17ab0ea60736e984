import { Chunk, Effect, Option, type Scope, Stream } from "effect"

/**
 * A stream's pull: its next chunk, or `Option.none()` once it has ended (what `Stream.fromPull`
 * takes). The model call's stages hand each other pulls rather than streams: a stage of a stream
 * costs a channel of its own, a pull is a plain effect.
 */
export type Pull<A, E, R = never> = Effect.Effect<Chunk.Chunk<A>, Option.Option<E>, R>

/**
 * A stream before it is one: the effect that opens its pull, in the caller's scope (which its
 * resources live in), failing as the stream would before its first element. A consumer in this
 * process runs the pull directly (`forEachPull`); as a `Stream` (`Stream.unwrapScoped` of it, then
 * `Stream.toPull` by whoever consumes it), every pull went through two channels, and a
 * non-streamed chat completion cost 38 % more CPU (decision 0029).
 */
export type Opened<A, E, R = never> = Effect.Effect<Pull<A, E, R>, E, R | Scope.Scope>

/** `opened` with its failures, before and while it streams, mapped by `f`. */
export const mapOpenedError = <A, E, E2, R>(opened: Opened<A, E, R>, f: (error: E) => E2): Opened<A, E2, R> =>
  Effect.map(Effect.mapError(opened, f), (pull) => Effect.mapError(pull, Option.map(f)))

/**
 * Runs an opened pull to its end in the calling fiber, handing each chunk to `f`; its resources
 * are released as it ends (a scope of its own). What `Stream.runForEachChunk` does, without the
 * fiber every `Stream.run*` forks for the channel it runs (and the merge of that fiber's
 * references into the caller's as it ends); a stream is run so with `Stream.toPull` of it.
 */
export const forEachPull = <A, E, R, E2 = never, R2 = never>(
  opened: Opened<A, E, R>,
  f: (chunk: Chunk.Chunk<A>) => Effect.Effect<unknown, E2, R2> | void
): Effect.Effect<void, E | E2, Exclude<R | R2, Scope.Scope>> =>
  Effect.scoped(Effect.flatMap(opened, (pull) => {
    const loop: Effect.Effect<void, E | E2, R | R2> = Effect.matchEffect(pull, {
      onFailure: Option.match({ onNone: () => Effect.void, onSome: Effect.fail }),
      onSuccess: (chunk) => {
        const next = f(chunk)
        return next === undefined ? loop : Effect.zipRight(next, loop)
      }
    })
    return loop
  }))

/**
 * Runs `events` to their end and answers the last one `pick` selects (a run's result event); a
 * run that ends without one is a defect, `what` saying which.
 */
export const lastOf = <A, B, E, R>(
  events: Stream.Stream<A, E, R>,
  pick: (event: A) => B | undefined,
  what: string
): Effect.Effect<B, E, R> =>
  Stream.runFold(events, undefined as B | undefined, (last, event) => pick(event) ?? last).pipe(
    Effect.flatMap((result) => result === undefined ? Effect.dieMessage(`${what} ended without its result`) : Effect.succeed(result))
  )
