/**
 * The `CreditStore` port in memory, with the SQL store's contract: a reservation is taken whole
 * from the first account that covers it (an org account only within the payer's cap), or not at
 * all (`Insufficient`); settling charges at most the amount held and gives back the rest;
 * releasing gives back everything; a reservation is closed once; splitting moves part of what a
 * held reservation holds into a new one, leaving balances, ledger and spending as they are. Each
 * operation runs without yielding, so operations are atomic with respect to each other
 * (`InMemoryCreditBooks`).
 *
 * `CreditStoreState` shows what the port does not: the reservations and what they still hold.
 */
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { Context, DateTime, Effect, Layer, Option } from "effect"
import {
  type Books,
  close,
  keyOf,
  log,
  makeBooks,
  monthOf,
  type Refuse,
  reserve,
  type Reservation,
  type ReservationState,
  spendingKey,
  spendingOf,
  split
} from "./InMemoryCreditBooks.js"
import { instanceId } from "./InMemoryPorts.js"

export interface State {
  /** Everything still held by open reservations. */
  readonly held: Effect.Effect<number>
  /** Every reservation, oldest first. */
  readonly reservations: Effect.Effect<ReadonlyArray<ReservationState>>
}

export class CreditStoreState extends Context.Tag("@huddle/testkit/CreditStoreState")<CreditStoreState, State>() {}

export interface Options {
  /** Refuses a reservation as the SQL statement would (a revoked credential, a membership gone); none by default. */
  readonly refuse?: Refuse | undefined
}

const releaseWhere = (books: Books, which: (reservation: Reservation) => boolean) =>
  Effect.map(DateTime.now, (at) =>
    [...books.reservations.values()]
      .filter((reservation) => reservation.status === "held" && which(reservation))
      .filter((reservation) => Option.isSome(close(books, reservation.id, 0, "released", at))).length)

const storeOf = (books: Books, options: Options) => {
  const { balances, ledger, reservations, spendings } = books
  return CreditStore.of({
    flush: Effect.void,
    grant: ({ account, actorId, amount, reason }) =>
      Effect.map(DateTime.now, (at) => {
        const key = keyOf(account)
        const balance = (balances.get(key) ?? 0) + amount
        balances.set(key, balance)
        log(books, key, amount, "grant", null, reason, actorId, at)
        return balance
      }),
    balance: (account) => Effect.sync(() => balances.get(keyOf(account)) ?? 0),
    ledgerTotal: (account) =>
      Effect.sync(() => ledger.filter((entry) => entry.account === keyOf(account)).reduce((sum, entry) => sum + entry.delta, 0)),
    ledger: (account, { cursor, limit }) =>
      Effect.sync(() =>
        ledger
          .filter((entry) => entry.account === keyOf(account) && (cursor === undefined || entry.id < cursor))
          .reverse()
          .slice(0, limit + 1)
          .map(({ account: _, ...entry }) => entry)
      ),
    reserve: (request) => Effect.map(DateTime.now, (at) => reserve(books, options.refuse, request, at)),
    settle: (reservationId, actual, tokens) =>
      Effect.map(DateTime.now, (at) => Option.map(close(books, reservationId, actual, "settled", at, tokens), (charged) => ({ charged }))),
    release: (reservationId) => Effect.map(DateTime.now, (at) => Option.isSome(close(books, reservationId, 0, "released", at))),
    split: (reservationId, amount) => Effect.map(DateTime.now, (at) => split(books, reservationId, amount, at)),
    releaseExpired: (heldBefore) => releaseWhere(books, (reservation) => DateTime.lessThan(reservation.createdAt, heldBefore)),
    releaseHeldBy: (instanceIds) => releaseWhere(books, () => instanceIds.includes(instanceId)),
    orgUsageSince: (orgId, since) =>
      Effect.sync(() =>
        [...reservations.values()]
          .filter((reservation) =>
            reservation.status === "settled" && reservation.account.ownerType === "org" && reservation.account.ownerId === orgId &&
            reservation.closedAt !== null && DateTime.greaterThanOrEqualTo(reservation.closedAt, since)
          )
          .reduce((sum, reservation) => sum + reservation.actual, 0)
      ),
    setCap: (orgId, userId, cap) =>
      Effect.map(DateTime.now, (at) => {
        const key = spendingKey(orgId, userId)
        const row = spendings.get(key) ?? { cap: null, monthStart: monthOf(at), month: 0, total: 0 }
        spendings.set(key, { ...row, cap })
        return spendingOf(spendings.get(key), monthOf(at))
      }),
    spending: (orgId, userIds) =>
      Effect.map(DateTime.now, (at) => new Map(userIds.map((userId) => [userId, spendingOf(spendings.get(spendingKey(orgId, userId)), monthOf(at))])))
  })
}

export const make = (options: Options = {}) =>
  Effect.sync(() => {
    const books = makeBooks()
    const state: State = {
      held: Effect.sync(() =>
        [...books.reservations.values()].filter((reservation) => reservation.status === "held").reduce((sum, reservation) => sum + reservation.amount, 0)
      ),
      reservations: Effect.sync(() => [...books.reservations.values()].map(({ spendMonth: _, ...reservation }) => reservation))
    }
    return { store: storeOf(books, options), state }
  })

/** `CreditStore` and its `CreditStoreState`, empty. */
export const layer = (options: Options = {}): Layer.Layer<CreditStore | CreditStoreState> =>
  Layer.effectContext(
    Effect.map(make(options), ({ state, store }) => Context.make(CreditStore, store).pipe(Context.add(CreditStoreState, state)))
  )
