/**
 * The `CreditStore` port in memory, with the SQL store's contract: a reservation is taken whole
 * from the first account that covers it (an org account only within the payer's cap), or not at
 * all (`Insufficient`); settling charges at most the amount held and gives back the rest;
 * releasing gives back everything; a reservation is closed once; splitting moves part of what a
 * held reservation holds into a new one, leaving balances, ledger and spending as they are. Each
 * operation runs without yielding, so operations are atomic with respect to each other.
 *
 * `CreditStoreState` shows what the port does not: the reservations and what they still hold.
 */
import type {
  Authority,
  Cap,
  CreditAccountRef,
  LedgerEntry,
  NewReservation,
  ReserveOutcome,
  Spending,
  TokenUsage
} from "@huddle/domain/credits/CreditStore"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { Context, DateTime, Effect, Layer, Option } from "effect"
import { instanceId } from "./InMemoryPorts.js"

export interface ReservationState {
  readonly id: string
  readonly account: CreditAccountRef
  readonly userId: string
  readonly orgId: string | null
  /** What it holds (or held, once closed): less than it was made with once parts were split off. */
  readonly amount: number
  readonly status: "held" | "settled" | "released"
  /** What was charged; 0 until settled. */
  readonly actual: number
  readonly purpose: string
  readonly createdAt: DateTime.Utc
  readonly closedAt: DateTime.Utc | null
  /** The reservation it was split off from, if any. */
  readonly parentId: string | null
  /** The tokens settling recorded (a model call's); null otherwise. */
  readonly tokens: TokenUsage | null
}

export interface State {
  /** Everything still held by open reservations. */
  readonly held: Effect.Effect<number>
  /** Every reservation, oldest first. */
  readonly reservations: Effect.Effect<ReadonlyArray<ReservationState>>
}

export class CreditStoreState extends Context.Tag("@huddle/testkit/CreditStoreState")<CreditStoreState, State>() {}

export interface Options {
  /** Refuses a reservation as the SQL statement would (a revoked credential, a membership gone); none by default. */
  readonly refuse?: ((authority: Authority | undefined, reservation: NewReservation) => "credential" | "membership" | null) | undefined
}

const keyOf = (account: CreditAccountRef) => `${account.ownerType}:${account.ownerId}:${account.pool}`

/** The calendar month (UTC) of a time, as the SQL store's `huddle_month_start` gives it. */
const monthOf = (at: DateTime.Utc) => {
  const date = DateTime.toDateUtc(at)
  return `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, "0")}`
}

interface MemberSpending {
  cap: Cap | null
  monthStart: string
  month: number
  total: number
}

interface Reservation extends ReservationState {
  /** The month the org pool's spending was counted in; null for a personal account. */
  readonly spendMonth: string | null
}

export const make = (options: Options = {}) =>
  Effect.sync(() => {
    const balances = new Map<string, number>()
    const ledger: Array<LedgerEntry & { readonly account: string }> = []
    const reservations = new Map<string, Reservation>()
    const spendings = new Map<string, MemberSpending>()
    let sequence = 0
    const nextId = (kind: "led" | "res") => `${kind}_${String(++sequence).padStart(10, "0")}`

    const spendingKey = (orgId: string, userId: string) => `${orgId}:${userId}`

    const spendingOf = (row: MemberSpending | undefined, month: string): Spending => ({
      cap: row?.cap ?? null,
      month: row !== undefined && row.monthStart === month ? row.month : 0,
      total: row?.total ?? 0
    })

    const log = (
      account: string,
      delta: number,
      kind: LedgerEntry["kind"],
      reservationId: string | null,
      reason: string,
      actorId: string | null,
      at: DateTime.Utc,
      tokens?: TokenUsage
    ) =>
      ledger.push({
        account,
        id: nextId("led"),
        delta,
        kind,
        reservation_id: reservationId,
        reason,
        actor_id: actorId,
        balance_after: balances.get(account) ?? 0,
        created_at: at,
        input_tokens: tokens?.inputTokens ?? null,
        output_tokens: tokens?.outputTokens ?? null
      })

    /** Closes a held reservation, charging `actual` (at most the amount); none if it was not held. */
    const close = (
      id: string,
      actual: number,
      status: "settled" | "released",
      at: DateTime.Utc,
      tokens?: TokenUsage
    ): Option.Option<number> => {
      const reservation = reservations.get(id)
      if (reservation === undefined || reservation.status !== "held") return Option.none()
      const charged = Math.min(actual, reservation.amount)
      const refund = reservation.amount - charged
      const account = keyOf(reservation.account)
      balances.set(account, (balances.get(account) ?? 0) + refund)
      reservations.set(id, { ...reservation, status, actual: charged, closedAt: at, tokens: tokens ?? null })
      log(account, refund, status === "settled" ? "settle" : "release", id, reservation.purpose, reservation.userId, at, tokens)
      // The unused part no longer counts against the member's cap on the org pool.
      if (reservation.spendMonth !== null && refund > 0) {
        const spending = spendings.get(spendingKey(reservation.orgId!, reservation.userId))
        if (spending !== undefined) {
          spending.total = Math.max(0, spending.total - refund)
          if (spending.monthStart === reservation.spendMonth) spending.month = Math.max(0, spending.month - refund)
        }
      }
      return Option.some(charged)
    }

    const reserve = (request: NewReservation, at: DateTime.Utc): ReserveOutcome => {
      const refused = options.refuse?.(request.authority, request) ?? null
      if (refused !== null) return { _tag: "Refused", reason: refused }
      const month = monthOf(at)
      const spending = request.orgId === null ? undefined : spendings.get(spendingKey(request.orgId, request.userId))
      const used = spendingOf(spending, month)
      const allowance = used.cap === null
        ? null
        : { ...used.cap, remaining: used.cap.amount - (used.cap.period === "total" ? used.total : used.month) }
      const rank = request.accounts.findIndex((account) =>
        balances.has(keyOf(account)) && balances.get(keyOf(account))! >= request.amount &&
        (account.ownerType === "user" || allowance === null || allowance.remaining >= request.amount)
      )
      if (rank < 0) {
        return { _tag: "Insufficient", cap: allowance === null ? null : { ...allowance, remaining: Math.max(0, allowance.remaining) } }
      }
      const account = request.accounts[rank]!
      const id = nextId("res")
      balances.set(keyOf(account), balances.get(keyOf(account))! - request.amount)
      const fromOrg = account.ownerType === "org" && request.orgId !== null
      reservations.set(id, {
        id,
        account,
        userId: request.userId,
        orgId: request.orgId,
        amount: request.amount,
        status: "held",
        actual: 0,
        purpose: request.purpose,
        createdAt: at,
        closedAt: null,
        parentId: null,
        tokens: null,
        spendMonth: fromOrg ? month : null
      })
      log(keyOf(account), -request.amount, "reserve", id, request.purpose, request.userId, at)
      if (fromOrg) {
        const key = spendingKey(request.orgId!, request.userId)
        const row = spendings.get(key) ?? { cap: null, monthStart: month, month: 0, total: 0 }
        spendings.set(key, {
          ...row,
          monthStart: month,
          month: (row.monthStart === month ? row.month : 0) + request.amount,
          total: row.total + request.amount
        })
      }
      return { _tag: "Held", id, account }
    }

    const split = (parentId: string, amount: number, at: DateTime.Utc): Option.Option<{ readonly id: string }> => {
      const parent = reservations.get(parentId)
      if (parent === undefined || parent.status !== "held" || !Number.isSafeInteger(amount) || amount < 1 || parent.amount < amount) {
        return Option.none()
      }
      const id = nextId("res")
      reservations.set(parentId, { ...parent, amount: parent.amount - amount })
      reservations.set(id, { ...parent, id, amount, createdAt: at, parentId })
      return Option.some({ id })
    }

    const releaseWhere = (which: (reservation: Reservation) => boolean) =>
      Effect.map(DateTime.now, (at) =>
        [...reservations.values()]
          .filter((reservation) => reservation.status === "held" && which(reservation))
          .filter((reservation) => Option.isSome(close(reservation.id, 0, "released", at))).length)

    const store = CreditStore.of({
      flush: Effect.void,
      grant: ({ account, actorId, amount, reason }) =>
        Effect.map(DateTime.now, (at) => {
          const key = keyOf(account)
          const balance = (balances.get(key) ?? 0) + amount
          balances.set(key, balance)
          log(key, amount, "grant", null, reason, actorId, at)
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
      reserve: (request) => Effect.map(DateTime.now, (at) => reserve(request, at)),
      settle: (reservationId, actual, tokens) =>
        Effect.map(DateTime.now, (at) => Option.map(close(reservationId, actual, "settled", at, tokens), (charged) => ({ charged }))),
      release: (reservationId) => Effect.map(DateTime.now, (at) => Option.isSome(close(reservationId, 0, "released", at))),
      split: (reservationId, amount) => Effect.map(DateTime.now, (at) => split(reservationId, amount, at)),
      releaseExpired: (heldBefore) => releaseWhere((reservation) => DateTime.lessThan(reservation.createdAt, heldBefore)),
      releaseHeldBy: (instanceIds) => releaseWhere(() => instanceIds.includes(instanceId)),
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

    const state: State = {
      held: Effect.sync(() =>
        [...reservations.values()].filter((reservation) => reservation.status === "held").reduce((sum, reservation) => sum + reservation.amount, 0)
      ),
      reservations: Effect.sync(() => [...reservations.values()].map(({ spendMonth: _, ...reservation }) => reservation))
    }
    return { store, state }
  })

/** `CreditStore` and its `CreditStoreState`, empty. */
export const layer = (options: Options = {}): Layer.Layer<CreditStore | CreditStoreState> =>
  Layer.effectContext(
    Effect.map(make(options), ({ state, store }) => Context.make(CreditStore, store).pipe(Context.add(CreditStoreState, state)))
  )
