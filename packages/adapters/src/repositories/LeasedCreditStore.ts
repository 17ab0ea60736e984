/**
 * Credit leases (decision 0021): the `CreditStore` port without a write to the account row per
 * request. For a reservation whose first source is the payer's personal balance, this instance
 * earmarks a block of that balance in one statement (a lease), reserves and settles in memory
 * against it, and writes the reservations and their ledger rows in one transaction per tick, which
 * also closes every lease it holds (what was not used goes back). Everything else (org pools, with
 * their per-member caps; parts of a reservation already written) goes to the SQL store as before.
 *
 * Money stays where the SQL store keeps it: an earmark is not a movement (the credits stay in
 * `balance`, which equals the sum of the ledger), reservations from a lease never exceed it, and a
 * batch is written only while its leases are open. A lost instance's leases are reclaimed whole by
 * the others (its unwritten requests are not charged, as a lost instance's held reservations are
 * released today); a paused one that comes back finds them reclaimed and discards its batch.
 * The revocation rule still holds: a read of the credential and the memberships precedes every
 * reservation from a lease (a read locks nothing and so does not serialise; the reads of
 * reservations asking at the same time go in one round trip, `AuthorityReads`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import {
  type CreditAccountRef,
  CreditStore,
  type NewReservation,
  type ReserveOutcome,
  type Service as CreditStoreService
} from "@huddle/domain/credits/CreditStore"
import { Instances } from "@huddle/domain/credits/Instances"
import { Ids } from "@huddle/domain/shared/Ids"
import { Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import * as AuthorityReads from "./AuthorityReads.js"
import { make as makeSqlCreditStore } from "./SqlCreditStore.js"

export interface Settings {
  /** Whether reservations from personal balances are taken from leases. */
  readonly enabled: boolean
  /** How often the batch is written and the leases closed: the longest a credit stays earmarked. */
  readonly tick: Duration.Duration
  /** A lease takes this many times the reservation that needed it (or what is left, if less). */
  readonly blockFactor: number
  /**
   * How long a reservation waits for other instances to give back their earmarks (they do at each
   * of their ticks) before its personal balance counts as short: the next source pays, or 402.
   */
  readonly shortWait: Duration.Duration
}

export const defaults: Settings = { enabled: true, tick: Duration.millis(20), blockFactor: 32, shortWait: Duration.millis(500) }

export class CreditLeases extends Context.Reference<CreditLeases>()("@huddle/adapters/CreditLeases", {
  defaultValue: () => defaults
}) {}

/** Credits earmarked for this instance on one account, by the leases that earmarked them. */
interface Pot {
  readonly accountId: string
  free: number
  /** What its leases earmarked in all. */
  leased: number
  readonly leases: Array<string>
}

interface LocalReservation {
  readonly id: string
  readonly accountId: string
  readonly account: CreditAccountRef
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
  /** What the database has of it. */
  written: "none" | "held" | "closed"
  /** Part of a batch being written. */
  inFlight: boolean
  /** Was part of a batch, written or not (a batch that failed without an answer may have been written). */
  attempted: boolean
}

const keyOf = (account: CreditAccountRef) => `${account.ownerType}:${account.ownerId}:${account.pool}`

export const make = Effect.gen(function*() {
  const inner = yield* makeSqlCreditStore
  const settings = yield* CreditLeases
  if (!settings.enabled) return inner
  const sql = yield* SqlClient.SqlClient
  const ids = yield* Ids
  const instance = (yield* Instances).id

  // Mutated only in synchronous sections, so each change is atomic with respect to other fibers.
  let pots = new Map<string, Pot>()
  const local = new Map<string, LocalReservation>()
  let dirty = new Set<string>()
  let stopped = false
  /** Leases of batches that failed: the next batch checks they were not reclaimed before writing what they paid for. */
  let carried: Array<string> = []
  /** Takes and batches one at a time: a batch closes every open lease of this instance. */
  const gate = yield* Effect.makeSemaphore(1)

  /** The revocation rule's read, one round trip for all the reservations asking at the time. */
  const authorityOk = yield* AuthorityReads.make(sql)

  /**
   * Earmarks between `need` and `want` credits of the account; none when fewer than `need` are
   * free. A transaction that locks the account row first, so that what is free is read from its
   * latest version.
   */
  const take = (account: CreditAccountRef, need: number, want: number) =>
    Effect.gen(function*() {
      const [row] = yield* sql<{ id: string; balance: string; leased: string }>`
        SELECT id, balance, leased FROM credit_accounts
        WHERE owner_type = ${account.ownerType} AND owner_id = ${account.ownerId} AND pool = ${account.pool}
        FOR UPDATE`
      if (row === undefined) return { taken: 0, accountId: null, leasedBefore: 0, heldElsewhere: false, leaseId: null }
      const taken = Math.min(Number(row.balance) - Number(row.leased), want)
      if (taken < need) {
        // Held on other instances: closed there perhaps, the refund waiting for their next batch.
        const [elsewhere] = yield* sql<{ held: boolean }>`
          SELECT EXISTS (SELECT 1 FROM credit_reservations WHERE account_id = ${row.id} AND status = 'held'
                         AND instance_id IS DISTINCT FROM ${instance}) AS held`
        return { taken: 0, accountId: row.id, leasedBefore: Number(row.leased), heldElsewhere: elsewhere!.held, leaseId: null }
      }
      const leaseId = yield* ids.next("res")
      yield* sql`UPDATE credit_accounts SET leased = leased + ${taken} WHERE id = ${row.id}`
      yield* sql`INSERT INTO credit_leases (id, account_id, instance_id, amount, status, created_at)
                 VALUES (${leaseId}, ${row.id}, ${instance}, ${taken}, 'open', now())`
      return { taken, accountId: row.id, leasedBefore: Number(row.leased), heldElsewhere: false, leaseId }
    }).pipe(
      sql.withTransaction,
      Effect.map(({ accountId, heldElsewhere, leaseId, leasedBefore, taken }) => {
        const mine = pots.get(keyOf(account))
        if (leaseId !== null && accountId !== null) {
          const pot = mine ?? { accountId, free: 0, leased: 0, leases: [] }
          pot.free += taken
          pot.leased += taken
          pot.leases.push(leaseId)
          pots.set(keyOf(account), pot)
        }
        // Earmarks held by other instances (or by this one's failed batches): given back within a tick.
        return { taken, elsewhere: heldElsewhere || leasedBefore - (mine?.leased ?? 0) > 0 }
      })
    )

  /** Reserves from this instance's earmark on the account, if it covers the amount. */
  const reserveLocally = (request: NewReservation, account: CreditAccountRef, reserveLedgerId: string, id: string) => {
    const pot = pots.get(keyOf(account))
    if (pot === undefined || pot.free < request.amount) return false
    pot.free -= request.amount
    local.set(id, {
      id,
      accountId: pot.accountId,
      account,
      userId: request.userId,
      orgId: request.orgId,
      purpose: request.purpose,
      createdAt: new Date(),
      parentId: null,
      reserveLedger: { id: reserveLedgerId, amount: request.amount },
      amount: request.amount,
      status: "held",
      actual: 0,
      closedAt: null,
      closeLedgerId: null,
      written: "none",
      inFlight: false,
      attempted: false
    })
    dirty.add(id)
    return true
  }

  const reserve = (request: NewReservation): Effect.Effect<ReserveOutcome, SqlError> =>
    Effect.gen(function*() {
      const [personal, ...rest] = request.accounts
      if (stopped || personal === undefined || personal.ownerType !== "user") return yield* inner.reserve(request)
      const authority = yield* authorityOk(request)
      if (!authority.credentialOk) return { _tag: "Refused", reason: "credential" } as const
      if (!authority.memberOk) return { _tag: "Refused", reason: "membership" } as const
      // Settled and short (nothing earmarked or held anywhere): the lease would take nothing.
      if (authority.settledBalance !== undefined && authority.settledBalance < request.amount && !pots.has(keyOf(personal))) {
        return rest.length === 0 ? { _tag: "Insufficient", cap: null } as const : yield* inner.reserve({ ...request, accounts: rest })
      }
      const id = yield* ids.next("res")
      const ledgerId = yield* ids.next("led")
      const held = () => reserveLocally(request, personal, ledgerId, id)
      // Under the gate, so that what this instance earmarks is known when deciding to take more.
      const fromLease = gate.withPermits(1)(Effect.suspend(() => {
        if (held()) return Effect.succeed("held" as const)
        const need = request.amount - (pots.get(keyOf(personal))?.free ?? 0)
        return Effect.map(
          take(personal, need, Math.max(need, request.amount * settings.blockFactor)),
          ({ elsewhere, taken }) => taken > 0 && held() ? "held" as const : elsewhere ? "wait" as const : "short" as const
        )
      }))
      const giveUpAt = Date.now() + Duration.toMillis(settings.shortWait)
      let ownWritten = false
      for (;;) {
        if (held()) return { _tag: "Held", id, account: personal } as const
        const outcome = yield* fromLease
        if (outcome === "held") return { _tag: "Held", id, account: personal } as const
        // This instance's own refunds may be waiting for its batch: write it, then look again.
        if (!ownWritten && (dirty.size > 0 || pots.size > 0)) {
          ownWritten = true
          yield* flush
          continue
        }
        // Short on this instance's view: others' earmarks come back within a tick; wait for them
        // rather than fall to the next source (or refuse) while the personal balance could pay.
        if (outcome === "short" || Date.now() >= giveUpAt) break
        yield* Effect.sleep(settings.tick)
      }
      if (rest.length === 0) return { _tag: "Insufficient", cap: null } as const
      return yield* inner.reserve({ ...request, accounts: rest })
    })

  /** Closes a reservation in memory; the batch writes it (conditionally, if it was written held). */
  const close = (reservation: LocalReservation, actual: number, status: "settled" | "released") =>
    Effect.gen(function*() {
      const closeLedgerId = yield* ids.next("led")
      if (reservation.status !== "held") return Option.none()
      const charged = Math.min(Math.max(0, actual), reservation.amount)
      reservation.status = status
      reservation.actual = charged
      reservation.closedAt = new Date()
      reservation.closeLedgerId = closeLedgerId
      // Never part of a batch: it was paid from the current leases, and its refund is back in them
      // at once (the batch writes reserve and close together, or discards both). Otherwise the
      // refund reaches the balance when a batch closes it, and only if the database still has it
      // held (a sweep may have released it meanwhile).
      if (!reservation.attempted) {
        const pot = pots.get(keyOf(reservation.account))
        if (pot !== undefined) pot.free += reservation.amount - charged
      }
      dirty.add(reservation.id)
      return Option.some(charged)
    })

  const settle: CreditStoreService["settle"] = (reservationId, actual) => {
    const reservation = local.get(reservationId)
    if (reservation === undefined) return inner.settle(reservationId, actual)
    if (stopped && reservation.written === "held" && !reservation.inFlight) {
      local.delete(reservationId)
      return inner.settle(reservationId, actual)
    }
    return Effect.map(close(reservation, actual, "settled"), Option.map((charged) => ({ charged })))
  }

  const release: CreditStoreService["release"] = (reservationId) => {
    const reservation = local.get(reservationId)
    if (reservation === undefined) return inner.release(reservationId)
    if (stopped && reservation.written === "held" && !reservation.inFlight) {
      local.delete(reservationId)
      return inner.release(reservationId)
    }
    return Effect.map(close(reservation, 0, "released"), Option.isSome)
  }

  /**
   * An unwritten reservation is split in memory; a written one in the database (after any batch
   * writing it, so that the row exists and holds what memory says).
   */
  const split: CreditStoreService["split"] = (reservationId, amount) =>
    Effect.gen(function*() {
      const parent = local.get(reservationId)
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
      if (parent.status !== "held" || parent.amount < amount || parent.attempted) return yield* split(reservationId, amount)
      parent.amount -= amount
      local.set(id, {
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
      dirty.add(id)
      dirty.add(parent.id)
      return Option.some({ id })
    })

  /**
   * Writes what happened in memory since the last batch and closes every open lease of this
   * instance, in one transaction. Idempotent (rows are keyed by ids chosen in memory, balances move
   * by what was really inserted), so a batch that failed without an answer is simply written again.
   */
  const writeBatch = (leases: ReadonlyArray<string>, batch: ReadonlyArray<LocalReservation>, states: ReadonlyArray<Snapshot>) =>
    Effect.gen(function*() {
      const closed = yield* sql<{ id: string; account_id: string; amount: string }>`
        UPDATE credit_leases SET status = 'closed', closed_at = now()
        WHERE instance_id = ${instance} AND status = 'open'
        RETURNING id, account_id, amount`
      const reclaimed = leases.length === 0 ? [] : yield* sql<{ id: string }>`
        SELECT id FROM credit_leases WHERE id IN ${sql.in(leases)} AND status = 'reclaimed'`
      const moves = new Map<string, { balance: number; leased: number }>()
      const move = (accountId: string, balance: number, leased: number) => {
        const m = moves.get(accountId) ?? { balance: 0, leased: 0 }
        m.balance += balance
        m.leased += leased
        moves.set(accountId, m)
      }
      for (const lease of closed) move(lease.account_id, 0, Number(lease.amount))
      const fresh = states.filter((s) => s.written === "none")
      const closingToo: Array<Snapshot> = []
      const lost = reclaimed.length > 0
      if (lost && fresh.length > 0) {
        yield* Effect.logWarning("this instance's credit leases were reclaimed (it was taken for lost); its unwritten reservations are not charged")
          .pipe(Effect.annotateLogs({ reservations: fresh.length }))
      }
      if (!lost && fresh.length > 0) {
        const rows = fresh.map((s) => ({
          id: s.id,
          account_id: s.accountId,
          user_id: s.userId,
          org_id: s.orgId,
          amount: s.amount,
          status: s.status,
          actual: s.status === "held" ? null : s.actual,
          purpose: s.purpose,
          created_at: s.createdAt,
          closed_at: s.closedAt,
          instance_id: instance,
          spend_month: null,
          parent_id: s.parentId
        }))
        const inserted = new Set(
          (yield* sql<{ id: string }>`INSERT INTO credit_reservations ${sql.insert(rows)} ON CONFLICT (id) DO NOTHING RETURNING id`)
            .map((row) => row.id)
        )
        // Already there: written by a batch that failed without an answer; closed below if it is closed now.
        for (const s of fresh) if (!inserted.has(s.id) && s.status !== "held") closingToo.push(s)
        const ledger = fresh.filter((s) => inserted.has(s.id)).flatMap((s) => [
          ...(s.reserveLedger === null ? [] : [{
            id: s.reserveLedger.id,
            account_id: s.accountId,
            delta: -s.reserveLedger.amount,
            kind: "reserve",
            reservation_id: s.id,
            reason: s.purpose,
            actor_id: s.userId,
            created_at: s.createdAt
          }]),
          ...(s.status === "held" ? [] : [{
            id: s.closeLedgerId!,
            account_id: s.accountId,
            delta: s.amount - s.actual,
            kind: s.status === "settled" ? "settle" : "release",
            reservation_id: s.id,
            reason: s.purpose,
            actor_id: s.userId,
            created_at: s.closedAt!
          }])
        ])
        if (ledger.length > 0) {
          const logged = yield* sql<{ account_id: string; delta: string }>`
            INSERT INTO credit_ledger ${sql.insert(ledger)} ON CONFLICT (id) DO NOTHING RETURNING account_id, delta`
          for (const row of logged) move(row.account_id, Number(row.delta), 0)
        }
      }
      // Reservations written held before, closed since: only those the database still has held.
      const closing = [...states.filter((s) => s.written === "held" && s.status !== "held"), ...closingToo]
      if (closing.length > 0) {
        const values = closing.map((s) =>
          sql`(${s.id}::text, ${s.status}::text, ${s.actual}::bigint, ${s.closeLedgerId}::text, ${s.closedAt}::timestamptz)`
        )
        const done = yield* sql<{ account_id: string; delta: string }>`
          WITH v (id, status, actual, ledger_id, closed_at) AS (VALUES ${sql.csv(values)}),
          closed AS (
            UPDATE credit_reservations r SET status = v.status, actual = LEAST(v.actual, r.amount), closed_at = v.closed_at
            FROM v WHERE r.id = v.id AND r.status = 'held'
            RETURNING r.id, r.account_id, r.amount, r.actual, r.purpose, r.user_id, v.ledger_id, v.status, v.closed_at
          )
          INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at)
          SELECT ledger_id, account_id, amount - actual, CASE status WHEN 'settled' THEN 'settle' ELSE 'release' END,
                 id, purpose, user_id, closed_at FROM closed
          RETURNING account_id, delta`
        for (const row of done) move(row.account_id, Number(row.delta), 0)
      }
      if (moves.size > 0) {
        const values = [...moves].map(([id, m]) => sql`(${id}::text, ${m.balance}::bigint, ${m.leased}::bigint)`)
        yield* sql`
          UPDATE credit_accounts a SET balance = a.balance + v.balance, leased = a.leased - v.leased
          FROM (VALUES ${sql.csv(values)}) v (id, balance, leased) WHERE a.id = v.id`
      }
      return { lost, batch }
    }).pipe(sql.withTransaction)

  interface Snapshot {
    readonly id: string
    readonly accountId: string
    readonly userId: string
    readonly orgId: string | null
    readonly purpose: string
    readonly createdAt: Date
    readonly parentId: string | null
    readonly reserveLedger: LocalReservation["reserveLedger"]
    readonly amount: number
    readonly status: LocalReservation["status"]
    readonly actual: number
    readonly closedAt: Date | null
    readonly closeLedgerId: string | null
    readonly written: LocalReservation["written"]
  }

  /**
   * One batch (waiting for one in progress first); a failed batch is put back and tried again at
   * the next tick. Not interruptible once begun: a batch stopped half way (the instance stopping
   * while its tick's batch is written) would leave its reservations out of every later batch.
   */
  const flush: Effect.Effect<void> = gate.withPermits(1)(Effect.uninterruptible(Effect.suspend(() => {
    if (pots.size === 0 && dirty.size === 0) return Effect.void
    // Swap in fresh state: reservations from here on take new leases (after this batch).
    const leaseIds = [...carried, ...[...pots.values()].flatMap((pot) => pot.leases)]
    pots = new Map()
    const batchIds = dirty
    dirty = new Set()
    const batch = [...batchIds].flatMap((id) => {
      const reservation = local.get(id)
      return reservation === undefined ? [] : [reservation]
    })
    const states: Array<Snapshot> = batch.map((r) => ({ ...r }))
    for (const r of batch) {
      r.inFlight = true
      r.attempted = true
    }
    return writeBatch(leaseIds, batch, states).pipe(
      Effect.retry(Schedule.exponential("20 millis").pipe(Schedule.intersect(Schedule.recurs(3)))),
      Effect.matchEffect({
        onFailure: (error) =>
          Effect.sync(() => {
            // Not written (or not known to be): the rows are written again next time, and the
            // leases' free credits are not used again (a lease still open is closed, whole, by the
            // next batch, since nothing more is taken from it).
            carried = leaseIds
            for (const r of batch) {
              r.inFlight = false
              dirty.add(r.id)
            }
          }).pipe(Effect.zipRight(Effect.logWarning("credit batch not written yet; retrying at the next tick").pipe(
            Effect.annotateLogs("cause", error.message)
          ))),
        onSuccess: ({ lost }) =>
          Effect.sync(() => {
            carried = []
            states.forEach((state, i) => {
              const r = batch[i]!
              r.inFlight = false
              if (lost && state.written === "none") {
                local.delete(r.id)
                return
              }
              r.written = state.status === "held" ? "held" : "closed"
              if (r.status !== state.status || r.amount !== state.amount) {
                // Changed while the batch was written: a close (written conditionally next time).
                dirty.add(r.id)
                if (r.written === "closed") local.delete(r.id)
              } else if (r.written === "closed") {
                local.delete(r.id)
              }
            })
          })
      })
    )
  })))

  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      stopped = true
    }).pipe(Effect.zipRight(flush), Effect.zipRight(flush))
  )
  yield* Effect.forkScoped(Effect.repeat(
    flush.pipe(Effect.catchAllCause((cause) => Effect.logError("credit batch failed", cause))),
    Schedule.spaced(settings.tick)
  ))

  const flushed = <A>(read: Effect.Effect<A>) => Effect.zipRight(flush, read)

  return CreditStore.of({
    ...inner,
    balance: (account) => flushed(inner.balance(account)),
    ledgerTotal: (account) => flushed(inner.ledgerTotal(account)),
    ledger: (account, page) => flushed(inner.ledger(account, page)),
    reserve: (request) => Effect.orDie(reserve(request)),
    settle,
    release,
    split,
    releaseExpired: (heldBefore) => flushed(inner.releaseExpired(heldBefore)),
    releaseHeldBy: (instanceIds) => inner.releaseHeldBy(instanceIds)
  })
})

export const layer = Layer.scoped(CreditStore, make)
