/**
 * Reservations whose request can no longer close them are given back. A request closes its own
 * reservation on every path, but a process can die mid-request, or lose the database for longer
 * than the close retries; the credits would then stay held for ever. Every instance sweeps
 * periodically (and once at start) for reservations older than any call may run.
 *
 * `after` must stay above the router's `maxDuration` plus the close retries, so that a running
 * call is never swept: a swept reservation is released in full, so the user is never charged
 * for a call whose settlement was lost.
 */
import { Context, DateTime, Duration, Effect, Layer, Schedule } from "effect"
import { CreditStore } from "./CreditStore.js"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"

export interface Settings {
  /** Age after which a reservation still held is released. */
  readonly after: Duration.Duration
  /** How often each instance looks. */
  readonly every: Duration.Duration
}

export const defaults: Settings = { after: Duration.minutes(30), every: Duration.minutes(1) }

export class ReservationExpiry extends Context.Reference<ReservationExpiry>()("@huddle/domain/ReservationExpiry", {
  defaultValue: () => defaults
}) {}

/** One sweep; returns how many reservations were released. */
export const sweep = Effect.gen(function*() {
  const store = yield* CreditStore
  const { after } = yield* ReservationExpiry
  const now = yield* DateTime.now
  const released = yield* store.releaseExpired(DateTime.subtractDuration(now, after))
  const metrics = yield* Metrics.Metrics
  metrics.add(Instruments.reservations, { event: "swept" }, released)
  if (released > 0) {
    yield* Effect.logWarning("expired credit reservations released").pipe(Effect.annotateLogs("released", released))
  }
  return released
})

/** Sweeps in the background for as long as the layer lives; a failed sweep is logged and retried next time. */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const { every } = yield* ReservationExpiry
  const once = sweep.pipe(Effect.catchAllCause((cause) => Effect.logError("credit reservation sweep failed", cause)))
  yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(every)))
}))
