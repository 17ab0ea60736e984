/**
 * Metered calls left unsettled (`settleAfter`) for their caller to settle together once it has
 * recorded what they answered, or to release when it could not (decision 0027): a council's
 * calls, whose run is one answer.
 */
import { Effect, Scope } from "effect"
import type { Metered } from "./MeteredRun.js"

export interface HeldCalls {
  /** Where the calls' reservations are held: closing it settles every call still held. */
  readonly scope: Scope.Scope
  readonly add: (call: Metered) => void
  /** Settles every call for what it consumed (a call released already stays released); what they were charged in all. */
  readonly settle: Effect.Effect<number>
  /** Releases every call not settled yet, all or none of them interrupted: nothing charged for them. */
  readonly release: Effect.Effect<void>
}

/** Calls held in the current scope. */
export const make: Effect.Effect<HeldCalls, never, Scope.Scope> = Effect.map(Effect.scope, (scope) => {
  const calls: Array<Metered> = []
  return {
    scope,
    add: (call) => void calls.push(call),
    settle: Effect.suspend(() => Effect.reduce(calls, 0, (total, call) => Effect.map(call.settle, (settled) => total + settled.charged))),
    release: Effect.uninterruptible(Effect.suspend(() => Effect.forEach(calls, (call) => call.release, { discard: true })))
  }
})
