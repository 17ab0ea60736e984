/**
 * When a leased store's batch is written (decisions 0021, 0028, 0041): a tick after there is
 * something to write, then every tick while there still is, none while idle; sooner when a settle
 * waits for its charge (a group commit: a `commitWindow` for the settles ending meanwhile, only
 * while other reservations may end soon); and twice as the instance stops. And what a batch,
 * written or failed, leaves in memory.
 */
import type { Duration, Scope } from "effect"
import { Deferred, Effect, Exit, FiberId, Schedule } from "effect"
import type { CreditSql } from "./CreditSql.js"
import { writeBatch } from "./LeaseBatchWrite.js"
import { type LeaseLedger, type LocalReservation, mark, pending, type Snapshot } from "./LeaseLedger.js"

export interface Batches {
  /**
   * One batch (waiting for one in progress first); a failed batch is put back and tried again at
   * the next tick.
   */
  readonly flush: Effect.Effect<void>
  /**
   * Waits until a batch begun after now is written: the charge just made in memory is then in the
   * database, so the answer it pays for cannot outlive it (an instance killed now has written it).
   */
  readonly durable: Effect.Effect<void>
}

export interface BatchSettings {
  readonly tick: Duration.Duration
  readonly commitWindow: Duration.Duration
  readonly durableWait: Duration.Duration
}

/** Not written (or not known to be): everything in it is written again by a later batch. */
const notWritten = (
  ledger: LeaseLedger,
  leaseIds: ReadonlyArray<string>,
  group: ReadonlyArray<Deferred.Deferred<void>>,
  batch: ReadonlyArray<LocalReservation>
) => {
  // The leases' free credits are not used again (a lease still open is closed, whole, by the
  // next batch, since nothing more is taken from it).
  ledger.carried = [...leaseIds]
  // Still not written: they wait for a later batch.
  ledger.waiters = [...group, ...ledger.waiters]
  for (const r of batch) {
    r.inFlight = false
    mark(ledger, r.id)
  }
}

/** Written: memory keeps only what is still held, or changed while the batch was written. */
const written = (ledger: LeaseLedger, lost: boolean, batch: ReadonlyArray<LocalReservation>, states: ReadonlyArray<Snapshot>) => {
  states.forEach((state, i) => {
    const r = batch[i]!
    r.inFlight = false
    if (lost && state.written === "none") {
      ledger.local.delete(r.id)
      return
    }
    r.written = state.status === "held" ? "held" : "closed"
    if (r.status !== state.status || r.amount !== state.amount) {
      // Changed while the batch was written: a close (written conditionally next time).
      mark(ledger, r.id)
      if (r.written === "closed") ledger.local.delete(r.id)
    } else if (r.written === "closed") {
      ledger.local.delete(r.id)
    }
  })
}

/**
 * Not interruptible once begun: a batch stopped half way (the instance stopping while its tick's
 * batch is written) would leave its reservations out of every later batch.
 */
const flushOf = (context: CreditSql, ledger: LeaseLedger): Effect.Effect<void> =>
  ledger.gate.withPermits(1)(Effect.uninterruptible(Effect.suspend(() => {
    // The settles waiting now are answered by this batch (their closes are in it, or were written).
    const group = ledger.waiters
    ledger.waiters = []
    ledger.soon.unsafeClose()
    const answer = () => {
      for (const written of group) Deferred.unsafeDone(written, Exit.void)
    }
    // Nothing to write or close (the leases of a failed batch count: they are closed by the next).
    if (!pending(ledger)) return Effect.sync(answer)
    // Swap in fresh state: reservations from here on take new leases (after this batch).
    const leaseIds = [...ledger.carried, ...[...ledger.pots.values()].flatMap((pot) => pot.leases)]
    ledger.pots = new Map()
    const batchIds = ledger.dirty
    ledger.dirty = new Set()
    const batch = [...batchIds].flatMap((id) => {
      const reservation = ledger.local.get(id)
      return reservation === undefined ? [] : [reservation]
    })
    const states: Array<Snapshot> = batch.map((r) => ({ ...r }))
    for (const r of batch) {
      r.inFlight = true
      r.attempted = true
    }
    return writeBatch(context, leaseIds, states).pipe(
      Effect.retry(Schedule.exponential("20 millis").pipe(Schedule.intersect(Schedule.recurs(3)))),
      Effect.matchEffect({
        onFailure: (error) =>
          Effect.sync(() => notWritten(ledger, leaseIds, group, batch)).pipe(
            Effect.zipRight(Effect.logWarning("credit batch not written yet; retrying at the next tick").pipe(
              Effect.annotateLogs("cause", error.message)
            ))
          ),
        onSuccess: ({ lost }) =>
          Effect.sync(() => {
            ledger.carried = []
            answer()
            written(ledger, lost, batch, states)
          })
      })
    )
  })))

/** Starts the batches of this scope: they stop with it, after a last one. */
export const make = (context: CreditSql, ledger: LeaseLedger, settings: BatchSettings): Effect.Effect<Batches, never, Scope.Scope> =>
  Effect.gen(function*() {
    const flush = flushOf(context, ledger)
    const durable = Effect.suspend(() => {
      const written = Deferred.unsafeMake<void>(FiberId.none)
      ledger.waiters.push(written)
      ledger.soon.unsafeOpen()
      ledger.work.unsafeOpen()
      return Deferred.await(written).pipe(
        Effect.timeout(settings.durableWait),
        Effect.catchAll(() => Effect.logWarning("a charge is not written yet; the answer goes out and a later batch writes it"))
      )
    })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        ledger.stopped = true
      }).pipe(Effect.zipRight(flush), Effect.zipRight(flush))
    )
    // A batch a tick after there is something to write, then every tick while there still is.
    const idle = Effect.suspend(() => {
      if (pending(ledger)) return Effect.void
      ledger.work.unsafeClose()
      return ledger.work.await
    })
    /** A tick, or sooner when a settle waits for its charge to be written: a window for others to join it, if any may. */
    const untilBatch = Effect.raceFirst(
      Effect.sleep(settings.tick),
      Effect.zipRight(
        ledger.soon.await,
        Effect.suspend(() => {
          for (const r of ledger.local.values()) if (r.status === "held" && !r.attempted) return Effect.sleep(settings.commitWindow)
          return Effect.void
        })
      )
    )
    yield* Effect.forkScoped(Effect.forever(
      idle.pipe(
        Effect.zipRight(untilBatch),
        Effect.zipRight(flush),
        Effect.catchAllCause((cause) => Effect.logError("credit batch failed", cause))
      )
    ))
    return { flush, durable }
  })
