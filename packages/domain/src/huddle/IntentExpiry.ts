/**
 * Intents that no request can still be running are given a final state. A run records its own
 * end on every path (its scope's finalizer, decision 0042), but a process can stall, or lose the
 * database while it writes; the intent would then say `executing` for ever. Every instance
 * sweeps, as it does for reservations and on the same clock: an intent unchanged for longer than
 * any call may run (ReservationExpiry's `after`, above the router's `maxDuration`) is failed.
 * Intents of instances that stopped are failed sooner, by InstanceLiveness.
 */
import { DateTime, Effect, Layer, Schedule } from "effect"
import { ReservationExpiry } from "../credits/ReservationExpiry.js"
import { IntentRepository } from "./IntentRepository.js"

export const expiredError = {
  error: "DEADLINE_EXCEEDED",
  message: "The intent was still running long after any answer could; it was stopped and its credits released"
} as const

/** One sweep; returns how many intents were failed. */
export const sweep = Effect.gen(function*() {
  const intents = yield* IntentRepository
  const { after } = yield* ReservationExpiry
  const now = yield* DateTime.now
  const failed = yield* intents.failRunningBefore(DateTime.subtractDuration(now, after), expiredError)
  if (failed > 0) yield* Effect.logWarning("intents left running were failed").pipe(Effect.annotateLogs("failed", failed))
  return failed
})

/** Sweeps in the background for as long as the layer lives; a failed sweep is logged and retried next time. */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const { every } = yield* ReservationExpiry
  const once = sweep.pipe(Effect.catchAllCause((cause) => Effect.logError("intent sweep failed", cause)))
  yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(every)))
}))
