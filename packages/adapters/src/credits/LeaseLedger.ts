/**
 * What a leased store keeps in memory between batches (decision 0021): this instance's earmarks
 * (a pot per personal balance, and per member of an org pool, with the leases that earmarked it)
 * and the reservations made from them, until a batch has written them. Mutated only in
 * synchronous sections, so each change is atomic with respect to other fibers.
 */
import type { CreditAccountRef, NewReservation, TokenUsage } from "@huddle/domain/credits/CreditStore"
import { type Deferred, Effect } from "effect"

/** Credits earmarked for this instance on one account (for one member, on an org pool), by the leases that earmarked them. */
export interface Pot {
  readonly accountId: string
  /** The month the member's spending counts in, as the database's clock said at the last take. */
  month: Date | null
  free: number
  /** What its leases earmarked in all. */
  leased: number
  readonly leases: Array<string>
}

export interface LocalReservation {
  readonly id: string
  readonly accountId: string
  readonly account: CreditAccountRef
  /** The pot it was paid from (`potKey`). */
  readonly pot: string
  /** The month its member's spending counts it in (org pools, as the SQL store does); null for a personal balance. */
  readonly spendMonth: Date | null
  readonly userId: string
  readonly orgId: string | null
  readonly purpose: string
  readonly createdAt: Date
  readonly parentId: string | null
  /** The reserve ledger row (none for a part split off another reservation). */
  readonly reserveLedger: { readonly id: string; readonly amount: number } | null
  amount: number
  status: "held" | "settled" | "released"
  actual: number
  closedAt: Date | null
  closeLedgerId: string | null
  /** What a settled call consumed, for its settle row. */
  tokens: TokenUsage | null
  /** What the database has of it. */
  written: "none" | "held" | "closed"
  /** Part of a batch being written. */
  inFlight: boolean
  /** Was part of a batch, written or not (a batch that failed without an answer may have been written). */
  attempted: boolean
}

/** A reservation as its batch found it: memory may change it while the batch is written. */
export type Snapshot = Readonly<Omit<LocalReservation, "pot" | "inFlight" | "attempted">>

const keyOf = (account: CreditAccountRef) => `${account.ownerType}:${account.ownerId}:${account.pool}`

/** A pot per personal balance, and per member of an org pool. */
export const potKey = (account: CreditAccountRef, userId: string) =>
  account.ownerType === "org" ? `${keyOf(account)}:${userId}` : keyOf(account)

export interface LeaseLedger {
  /** This instance's earmarks by `potKey`: a batch takes them all (it closes their leases) and leaves an empty map. */
  pots: Map<string, Pot>
  readonly local: Map<string, LocalReservation>
  /** Reservations changed in memory since the last batch began. */
  dirty: Set<string>
  /** The instance is stopping: reservations and closes of rows written held go to the SQL store. */
  stopped: boolean
  /** Leases of batches that failed: the next batch checks they were not reclaimed before writing what they paid for. */
  carried: Array<string>
  /** Settles waiting for their charge to be written: the next batch answers them. */
  waiters: Array<Deferred.Deferred<void>>
  /** Takes and batches one at a time: a batch closes every open lease of this instance. */
  readonly gate: Effect.Semaphore
  /**
   * Open while there is something for a batch to write or close: the ticks stop while there is
   * not, so that an idle instance is not woken every tick for nothing.
   */
  readonly work: Effect.Latch
  /** Open while a settle waits: the next batch then comes after `commitWindow` rather than a tick. */
  readonly soon: Effect.Latch
}

export const make: Effect.Effect<LeaseLedger> = Effect.gen(function*() {
  const gate = yield* Effect.makeSemaphore(1)
  const work = yield* Effect.makeLatch(false)
  const soon = yield* Effect.makeLatch(false)
  return { pots: new Map(), local: new Map(), dirty: new Set(), stopped: false, carried: [], waiters: [], gate, work, soon }
})

/** Whether a batch has anything to write or close (the leases of a failed batch count: the next closes them). */
export const pending = (ledger: LeaseLedger) => ledger.pots.size > 0 || ledger.dirty.size > 0 || ledger.carried.length > 0

/** A reservation changed in memory: the next batch writes it. */
export const mark = (ledger: LeaseLedger, id: string) => {
  ledger.dirty.add(id)
  ledger.work.unsafeOpen()
}

/** Reserves from this instance's earmark on the account (for the payer, on an org pool), if it covers the amount. */
export const reserveLocally = (
  ledger: LeaseLedger,
  request: NewReservation,
  account: CreditAccountRef,
  reserveLedgerId: string,
  id: string
) => {
  const key = potKey(account, request.userId)
  const pot = ledger.pots.get(key)
  if (pot === undefined || pot.free < request.amount) return false
  pot.free -= request.amount
  const createdAt = new Date()
  ledger.local.set(id, {
    id,
    accountId: pot.accountId,
    account,
    pot: key,
    spendMonth: pot.month,
    userId: request.userId,
    orgId: request.orgId,
    purpose: request.purpose,
    createdAt,
    parentId: null,
    reserveLedger: { id: reserveLedgerId, amount: request.amount },
    amount: request.amount,
    status: "held",
    actual: 0,
    closedAt: null,
    closeLedgerId: null,
    tokens: null,
    written: "none",
    inFlight: false,
    attempted: false
  })
  mark(ledger, id)
  return true
}
