/**
 * The books behind the in-memory `CreditStore`: balances, the ledger, the reservations and the
 * members' spending, and the operations that move them (reserve, close, split), each synchronous,
 * so atomic with respect to the others. They follow the SQL store's statements.
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
import { DateTime, Option } from "effect"

export const keyOf = (account: CreditAccountRef) => `${account.ownerType}:${account.ownerId}:${account.pool}`

/** The calendar month (UTC) of a time, as the SQL store's `huddle_month_start` gives it. */
export const monthOf = (at: DateTime.Utc) => {
  const date = DateTime.toDateUtc(at)
  return `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, "0")}`
}

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

export interface MemberSpending {
  cap: Cap | null
  monthStart: string
  month: number
  total: number
}

export interface Reservation extends ReservationState {
  /** The month the org pool's spending was counted in; null for a personal account. */
  readonly spendMonth: string | null
}

export interface Books {
  readonly balances: Map<string, number>
  readonly ledger: Array<LedgerEntry & { readonly account: string }>
  readonly reservations: Map<string, Reservation>
  readonly spendings: Map<string, MemberSpending>
  readonly nextId: (kind: "led" | "res") => string
}

export const makeBooks = (): Books => {
  let sequence = 0
  return {
    balances: new Map(),
    ledger: [],
    reservations: new Map(),
    spendings: new Map(),
    nextId: (kind) => `${kind}_${String(++sequence).padStart(10, "0")}`
  }
}

export const spendingKey = (orgId: string, userId: string) => `${orgId}:${userId}`

export const spendingOf = (row: MemberSpending | undefined, month: string): Spending => ({
  cap: row?.cap ?? null,
  month: row !== undefined && row.monthStart === month ? row.month : 0,
  total: row?.total ?? 0
})

export const log = (
  books: Books,
  account: string,
  delta: number,
  kind: LedgerEntry["kind"],
  reservationId: string | null,
  reason: string,
  actorId: string | null,
  at: DateTime.Utc,
  tokens?: TokenUsage
) =>
  books.ledger.push({
    account,
    id: books.nextId("led"),
    delta,
    kind,
    reservation_id: reservationId,
    reason,
    actor_id: actorId,
    balance_after: books.balances.get(account) ?? 0,
    created_at: at,
    input_tokens: tokens?.inputTokens ?? null,
    output_tokens: tokens?.outputTokens ?? null
  })

/** Closes a held reservation, charging `actual` (at most the amount); none if it was not held. */
export const close = (
  books: Books,
  id: string,
  actual: number,
  status: "settled" | "released",
  at: DateTime.Utc,
  tokens?: TokenUsage
): Option.Option<number> => {
  const { balances, reservations, spendings } = books
  const reservation = reservations.get(id)
  if (reservation === undefined || reservation.status !== "held") return Option.none()
  const charged = Math.min(actual, reservation.amount)
  const refund = reservation.amount - charged
  const account = keyOf(reservation.account)
  balances.set(account, (balances.get(account) ?? 0) + refund)
  reservations.set(id, { ...reservation, status, actual: charged, closedAt: at, tokens: tokens ?? null })
  log(books, account, refund, status === "settled" ? "settle" : "release", id, reservation.purpose, reservation.userId, at, tokens)
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

/** Refuses a reservation as the SQL statement would (a revoked credential, a membership gone). */
export type Refuse = (authority: Authority | undefined, reservation: NewReservation) => "credential" | "membership" | null

export const reserve = (books: Books, refuse: Refuse | undefined, request: NewReservation, at: DateTime.Utc): ReserveOutcome => {
  const { balances, reservations, spendings } = books
  const refused = refuse?.(request.authority, request) ?? null
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
  const id = books.nextId("res")
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
  log(books, keyOf(account), -request.amount, "reserve", id, request.purpose, request.userId, at)
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

export const split = (books: Books, parentId: string, amount: number, at: DateTime.Utc): Option.Option<{ readonly id: string }> => {
  const parent = books.reservations.get(parentId)
  if (parent === undefined || parent.status !== "held" || !Number.isSafeInteger(amount) || amount < 1 || parent.amount < amount) {
    return Option.none()
  }
  const id = books.nextId("res")
  books.reservations.set(parentId, { ...parent, amount: parent.amount - amount })
  books.reservations.set(id, { ...parent, id, amount, createdAt: at, parentId })
  return Option.some({ id })
}
