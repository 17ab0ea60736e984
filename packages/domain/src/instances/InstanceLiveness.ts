/**
 * Each instance heartbeats; what an instance whose heartbeat stopped still held is given back by
 * the others: its credit reservations are released (the ledger records it, so balances stay
 * exact) and its running intents fail. With the defaults, a killed instance's credits are free
 * again within a minute (stale after 30 s, looked for every 10 s).
 *
 * `staleAfter` must stay well above `every`: an instance that misses a few heartbeats (a long
 * pause) and comes back finds its reservations released, so its requests are not charged.
 */
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { CreditStore } from "../credits/CreditStore.js"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"
import { Instances } from "./Instances.js"
import { IntentRepository } from "../huddle/IntentRepository.js"

export interface Settings {
  /** How often this instance heartbeats and looks for lost instances. */
  readonly every: Duration.Duration
  /** How old a heartbeat may be before its instance is taken for lost. */
  readonly staleAfter: Duration.Duration
}

export const defaults: Settings = { every: Duration.seconds(10), staleAfter: Duration.seconds(30) }

export class InstanceLiveness extends Context.Reference<InstanceLiveness>()("@huddle/domain/InstanceLiveness", {
  defaultValue: () => defaults
}) {}

export const lostError = {
  error: "INSTANCE_LOST",
  message: "The server instance running this intent stopped before it finished; its credits were released"
} as const

/** Gives back what lost instances held; returns what was reclaimed. */
export const reclaim = Effect.gen(function*() {
  const instances = yield* Instances
  const store = yield* CreditStore
  const intents = yield* IntentRepository
  const { staleAfter } = yield* InstanceLiveness
  const lost = yield* instances.lost(staleAfter)
  if (lost.length === 0) return { instances: 0, reservations: 0, intents: 0 }
  const reservations = yield* store.releaseHeldBy(lost)
  const metrics = yield* Metrics.Metrics
  metrics.add(Instruments.reservations, { event: "swept" }, reservations)
  const failed = yield* intents.failRunningOn(lost, lostError)
  yield* instances.forget(lost)
  // Instances that stopped cleanly hold nothing: only what was really given back is a warning.
  yield* (reservations + failed > 0 ? Effect.logWarning : Effect.logDebug)("lost instances reclaimed").pipe(
    Effect.annotateLogs({ instances: lost.join(","), reservations_released: reservations, intents_failed: failed })
  )
  return { instances: lost.length, reservations, intents: failed }
})

/** Heartbeats and reclaims in the background for as long as the layer lives; failures are logged and retried. */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const { every } = yield* InstanceLiveness
  const instances = yield* Instances
  // Registered before anything is served: reservations and intents of an instance the others do
  // not know would never be given back by them (only by the reservation expiry).
  yield* instances.heartbeat
  const beat = instances.heartbeat.pipe(Effect.catchAllCause((cause) => Effect.logError("instance heartbeat failed", cause)))
  const look = reclaim.pipe(Effect.catchAllCause((cause) => Effect.logError("reclaiming lost instances failed", cause)))
  yield* Effect.forkScoped(Effect.repeat(Effect.zipRight(beat, look), Schedule.spaced(every)))
}))
