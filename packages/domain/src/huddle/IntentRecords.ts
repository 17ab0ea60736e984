/**
 * How a run is written down: the intent's rows as it moves on, the answer recorded in its session
 * with the completed intent, and the charge taken only once the answer is recorded (decision
 * 0027). What a run that fails or is cut short records as its error.
 */
import { Cause, DateTime, Effect, Exit, Option, Predicate } from "effect"
import { codeOf } from "../shared/Errors.js"
import type { Ids } from "../shared/Ids.js"
import { HuddleMessage, Reference } from "./Huddle.js"
import { Intent, IntentError } from "./Intent.js"
import type { IntentRepository } from "./IntentRepository.js"

/** An answer's verified citations, as references (none for an answer not grounded in a repository). */
export const referencesOf = (intent: Intent): ReadonlyArray<Reference> =>
  (intent.grounding?.references ?? []).map((reference) => new Reference(reference))

export const cancelled = new IntentError({ error: "CANCELLED", message: "The request was cancelled before the answer was complete" })

/** A typed failure as the intent records it. */
export const failure = (error: { readonly _tag: string; readonly message: string }) =>
  new IntentError({ error: codeOf(error), message: error.message })

/** What a run that ended with `exit` records as its error (none when it succeeded). */
export const closeWith = (exit: Exit.Exit<unknown, unknown>): IntentError | null => {
  if (Exit.isSuccess(exit)) return null
  if (Exit.isInterrupted(exit)) return cancelled
  const error = Cause.failureOption(exit.cause)
  return Option.isSome(error) && Predicate.hasProperty(error.value, "_tag") && Predicate.hasProperty(error.value, "message")
    ? failure(error.value as { _tag: string; message: string })
    : new IntentError({ error: "INTERNAL", message: "The request failed" })
}

/** The message recording a completed intent's answer in its session. */
export const answerIn = (ids: Ids["Type"]) => (intent: Intent): Effect.Effect<HuddleMessage> =>
  Effect.gen(function*() {
    return new HuddleMessage({
      id: yield* ids.next("msg"),
      role: "assistant",
      content: intent.output ?? "",
      mode: intent.mode,
      intent_id: intent.id,
      models: intent.models,
      usage: intent.usage,
      credits_charged: intent.credits_charged,
      references: referencesOf(intent),
      ...(intent.consensus === undefined ? {} : { consensus: intent.consensus }),
      created_at: yield* DateTime.now
    })
  })

export interface Records {
  /** The intent with `changes` written. */
  readonly save: (intent: Intent, changes: Partial<Intent>) => Effect.Effect<Intent>
  /**
   * The intent with `changes` written; a completed intent of a session with its answer, the
   * message recorded in that session (none when the session was deleted during the turn).
   */
  readonly finish: (intent: Intent, changes: Partial<Intent>) => Effect.Effect<readonly [Intent, HuddleMessage | undefined]>
  /**
   * An answer recorded, then charged: `record` writes the completed intent, which says `recorded`
   * was charged; then the credits are settled. When the write fails, the credits are released
   * instead (all of them, uninterrupted), so nobody pays for an answer they never got. What the
   * store charged differs from what was recorded only if a reservation was no longer held (a
   * sweep reclaimed it): said, not rewritten.
   */
  readonly recordedThenCharged: <A, E>(
    intentId: string,
    record: Effect.Effect<A, E>,
    recorded: number,
    credits: { readonly settle: Effect.Effect<number>; readonly release: Effect.Effect<unknown> }
  ) => Effect.Effect<A, E>
}

export const make = (ports: { readonly ids: Ids["Type"]; readonly intents: IntentRepository["Type"] }): Records => {
  const { ids, intents } = ports

  const answerOf = answerIn(ids)

  const finish: Records["finish"] = (intent, changes) =>
    Effect.gen(function*() {
      const next = new Intent({ ...intent, ...changes, updated_at: yield* DateTime.now }, { disableValidation: true })
      const message = next.session_id === null || next.status !== "completed" ? undefined : yield* answerOf(next)
      const written = yield* intents.update(next, undefined, message)
      // An answer is not written into a session deleted during the turn: there is none to name.
      return [next, written ? message : undefined] as const
    })

  return {
    finish,
    save: (intent, changes) => Effect.map(finish(intent, changes), ([next]) => next),
    recordedThenCharged: (intentId, record, recorded, credits) =>
      record.pipe(
        Effect.tapErrorCause(() => Effect.uninterruptible(credits.release)),
        Effect.tap(() =>
          Effect.flatMap(credits.settle, (charged) =>
            charged === recorded ? Effect.void : Effect.logWarning("an answer's intent records a charge the ledger did not take").pipe(
              Effect.annotateLogs({ intent: intentId, recorded, charged })
            ))
        )
      )
  }
}
