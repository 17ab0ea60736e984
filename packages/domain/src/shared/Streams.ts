import { Effect, Stream } from "effect"

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
