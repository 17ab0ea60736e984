/**
 * Closing and splitting reservations made from a lease, in memory; the next batch writes them
 * (conditionally, for one already written held). A settle that charges returns only once a batch
 * has written it (decision 0041). What memory no longer has, or a reservation written held while
 * the instance is stopping, goes to the SQL store.
 */
import type { Service as CreditStoreService, TokenUsage } from "@huddle/domain/credits/CreditStore"
import type { Service as IdsService } from "@huddle/domain/shared/Ids"
import { Effect, Option } from "effect"
import { type LeaseLedger, type LocalReservation, mark } from "./LeaseLedger.js"

export interface SettlementDeps {
  readonly ids: IdsService
  readonly ledger: LeaseLedger
  /** The SQL store: for reservations memory does not have. */
  readonly inner: CreditStoreService
  /** Writes this instance's batch (after the one in progress, if any). */
  readonly flush: Effect.Effect<void>
  /** Waits until a batch begun after now is written (or `durableWait` passed). */
  readonly durable: Effect.Effect<void>
}

/** Closes a reservation in memory; the batch writes it (conditionally, if it was written held). */
export const close = (
  ids: IdsService,
  ledger: LeaseLedger,
  reservation: LocalReservation,
  actual: number,
  status: "settled" | "released",
  tokens?: TokenUsage
) =>
  Effect.gen(function*() {
    const closeLedgerId = yield* ids.next("led")
    if (reservation.status !== "held") return Option.none()
    const charged = Math.min(Math.max(0, actual), reservation.amount)
    reservation.status = status
    reservation.actual = charged
    reservation.closedAt = new Date()
    reservation.closeLedgerId = closeLedgerId
    reservation.tokens = tokens ?? null
    // Never part of a batch: it was paid from the current leases, and its refund is back in them
    // at once (the batch writes reserve and close together, or discards both). Otherwise the
    // refund reaches the balance when a batch closes it, and only if the database still has it
    // held (a sweep may have released it meanwhile).
    if (!reservation.attempted) {
      const pot = ledger.pots.get(reservation.pot)
      if (pot !== undefined) pot.free += reservation.amount - charged
    }
    mark(ledger, reservation.id)
    return Option.some(charged)
  })

export const settle = (
  deps: SettlementDeps,
  reservationId: string,
  actual: number,
  tokens?: TokenUsage | undefined
): Effect.Effect<Option.Option<{ readonly charged: number }>> => {
  const { durable, ids, inner, ledger } = deps
  const reservation = ledger.local.get(reservationId)
  if (reservation === undefined) return inner.settle(reservationId, actual, tokens)
  if (ledger.stopped && reservation.written === "held" && !reservation.inFlight) {
    ledger.local.delete(reservationId)
    return inner.settle(reservationId, actual, tokens)
  }
  return Effect.flatMap(close(ids, ledger, reservation, actual, "settled", tokens), (charged) =>
    Option.isSome(charged) && charged.value > 0
      ? Effect.as(durable, Option.some({ charged: charged.value }))
      : Effect.succeed(Option.map(charged, (charged) => ({ charged }))))
}

export const release = ({ ids, inner, ledger }: SettlementDeps, reservationId: string): Effect.Effect<boolean> => {
  const reservation = ledger.local.get(reservationId)
  if (reservation === undefined) return inner.release(reservationId)
  if (ledger.stopped && reservation.written === "held" && !reservation.inFlight) {
    ledger.local.delete(reservationId)
    return inner.release(reservationId)
  }
  return Effect.map(close(ids, ledger, reservation, 0, "released"), Option.isSome)
}

/**
 * An unwritten reservation is split in memory; a written one in the database (after any batch
 * writing it, so that the row exists and holds what memory says).
 */
export const split = (
  deps: SettlementDeps,
  reservationId: string,
  amount: number
): Effect.Effect<Option.Option<{ readonly id: string }>> =>
  Effect.gen(function*() {
    const { flush, ids, inner, ledger } = deps
    const parent = ledger.local.get(reservationId)
    if (parent === undefined) return yield* inner.split(reservationId, amount)
    // Its row may exist (a batch in flight, or one that failed without an answer): write it first.
    if (parent.inFlight || (parent.attempted && parent.written === "none")) yield* flush
    if (parent.status !== "held" || !Number.isSafeInteger(amount) || amount < 1 || parent.amount < amount) return Option.none()
    if (parent.written === "held") {
      const child = yield* inner.split(reservationId, amount)
      if (Option.isSome(child)) parent.amount -= amount
      return child
    }
    if (parent.attempted || parent.written !== "none") return Option.none()
    const id = yield* ids.next("res")
    if (parent.status !== "held" || parent.amount < amount || parent.attempted) return yield* split(deps, reservationId, amount)
    parent.amount -= amount
    ledger.local.set(id, {
      ...parent,
      id,
      amount,
      parentId: parent.id,
      reserveLedger: null,
      createdAt: new Date(),
      written: "none",
      inFlight: false,
      attempted: false
    })
    mark(ledger, id)
    mark(ledger, parent.id)
    return Option.some({ id })
  })
