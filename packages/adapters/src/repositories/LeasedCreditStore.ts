/**
 * Credit leases (decision 0021): the `CreditStore` port without a write to the account row per
 * request. For each source of a reservation in turn (the payer's personal balance, then the org's
 * pools), this instance earmarks a block of that account in one transaction (a lease), reserves
 * and settles in memory against it, and writes the reservations and their ledger rows in one
 * transaction per tick, which also closes every lease it holds (what was not used goes back). A
 * lease of an org pool is one member's: its earmark counts against that member's cap while it is
 * held (`member_spending.leased`), so the cap stays exact. Parts of a reservation already written
 * go to the SQL store, as does everything once the instance is stopping.
 *
 * Money stays where the SQL store keeps it: an earmark is not a movement (the credits stay in
 * `balance`, which equals the sum of the ledger), reservations from a lease never exceed it, and a
 * batch is written only while its leases are open. A lost instance's leases are reclaimed whole by
 * the others (its unwritten requests are not charged, as a lost instance's held reservations are
 * released today); a paused one that comes back finds them reclaimed and discards its batch.
 * The revocation rule still holds: a read of the credential and the memberships begun after a
 * reservation from a lease was made confirms it, or it is withdrawn (a read locks nothing and so
 * does not serialise; the reads of reservations asking at the same time go in one round trip,
 * `AuthorityReads`). A settle that charges returns once a batch has written it (decision 0041).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import {
  type Cap,
  type CapPeriod,
  type CreditAccountRef,
  CreditStore,
  type NewReservation,
  type ReserveOutcome,
  type Service as CreditStoreService,
  type TokenUsage
} from "@huddle/domain/credits/CreditStore"
import { Instances } from "@huddle/domain/instances/Instances"
import { Ids } from "@huddle/domain/shared/Ids"
import { Context, Deferred, Duration, Effect, Exit, FiberId, Layer, Option, Schedule } from "effect"
import * as AuthorityReads from "./AuthorityReads.js"
import { make as makeSqlCreditStore } from "./SqlCreditStore.js"

export interface Settings {
  /** Whether reservations are taken from leases (personal balances, and org pools member by member). */
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
  /**
   * A settle that charges is answered only once its charge is written (decision 0041): the batch
   * then comes this long after it rather than a tick later, so that the settles of other requests
   * ending meanwhile share its transaction (a group commit). Only while other reservations are
   * held here (requests that may end soon); otherwise the batch is written at once.
   */
  readonly commitWindow: Duration.Duration
  /**
   * How long a settle waits for its charge to be written (the database unreachable): then it is
   * answered anyway, and the charge is written by a later batch.
   */
  readonly durableWait: Duration.Duration
}

export const defaults: Settings = {
  enabled: true,
  tick: Duration.millis(100),
  blockFactor: 32,
  shortWait: Duration.millis(500),
  commitWindow: Duration.millis(2),
  durableWait: Duration.seconds(5)
}

export class CreditLeases extends Context.Reference<CreditLeases>()("@huddle/adapters/CreditLeases", {
  defaultValue: () => defaults
}) {}

/** Credits earmarked for this instance on one account (for one member, on an org pool), by the leases that earmarked them. */
interface Pot {
  readonly accountId: string
  /** The month the member's spending counts in, as the database's clock said at the last take. */
  month: Date | null
  free: number
  /** What its leases earmarked in all. */
  leased: number
  readonly leases: Array<string>
}

interface LocalReservation {
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

const keyOf = (account: CreditAccountRef) => `${account.ownerType}:${account.ownerId}:${account.pool}`

/** A pot per personal balance, and per member of an org pool. */
const potKey = (account: CreditAccountRef, userId: string) =>
  account.ownerType === "org" ? `${keyOf(account)}:${userId}` : keyOf(account)

/** Why a source could not pay: short (perhaps for a while, if others hold earmarks), or the member's cap. */
interface Short {
  readonly _tag: "Short"
  readonly elsewhere: boolean
  readonly cap: (Cap & { readonly remaining: number }) | null
}

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
  /**
   * Open while there is something for a batch to write or close: the ticks stop while there is
   * not, so that an idle instance is not woken every tick for nothing.
   */
  const work = yield* Effect.makeLatch(false)
  const pending = () => pots.size > 0 || dirty.size > 0 || carried.length > 0
  /** Settles waiting for their charge to be written: the next batch answers them. */
  let waiters: Array<Deferred.Deferred<void>> = []
  /** Open while a settle waits: the next batch then comes after `commitWindow` rather than a tick. */
  const soon = yield* Effect.makeLatch(false)
  /** A reservation changed in memory: the next batch writes it. */
  const mark = (id: string) => {
    dirty.add(id)
    work.unsafeOpen()
  }

  /** The revocation rule's read, one round trip for all the reservations asking at the time. */
  const authorityOk = yield* AuthorityReads.make(sql)

  /**
   * Earmarks between `need` and `want` credits of the account (for the payer, within their cap, on
   * an org pool); none when fewer than `need` are free. One statement (`huddle_take_lease`,
   * migration 0016), which reads what is free under the account's row lock.
   */
  const take = (account: CreditAccountRef, userId: string, need: number, want: number) => {
    // On an org pool the earmark is the payer's, counted against their cap; a personal balance has no member.
    const memberId = account.ownerType === "org" ? userId : null
    return Effect.flatMap(ids.next("res"), (leaseId) =>
      sql<{
        taken: string
        account_id: string | null
        leased_before: string
        member_leased_before: string
        held_elsewhere: boolean
        cap_amount: string | null
        cap_period: CapPeriod | null
        cap_used: string | null
        room: string | null
        month_start: Date
      }>`SELECT * FROM huddle_take_lease(${leaseId}, ${instance}, ${account.ownerType}, ${account.ownerId}, ${account.pool},
                                         ${memberId}, ${need}, ${want})`.pipe(
        Effect.map(([row]) => {
          const taken = Number(row!.taken)
          const accountId = row!.account_id
          const key = potKey(account, userId)
          const own = pots.get(key)
          const ownLeased = own?.leased ?? 0
          const ownFree = own?.free ?? 0
          if (taken > 0 && accountId !== null) {
            const pot = own ?? { accountId, month: null, free: 0, leased: 0, leases: [] }
            pot.free += taken
            pot.leased += taken
            pot.leases.push(leaseId)
            // The database's month: what the member's spending from this pot counts in.
            pot.month = memberId === null ? null : new Date(row!.month_start)
            pots.set(key, pot)
            work.unsafeOpen()
          }
          const memberLeased = Number(row!.member_leased_before)
          const cap = row!.cap_amount === null || row!.cap_period === null ? null : {
            amount: Number(row!.cap_amount),
            period: row!.cap_period,
            // What the member could still take: less what was charged, held, or earmarked elsewhere.
            remaining: Math.max(0, Number(row!.cap_amount) - Number(row!.cap_used ?? 0) - memberLeased + ownFree)
          }
          // What was short, and whether what others hold of it comes back: earmarks come back within
          // a tick (other instances', this instance's for other members or from failed batches);
          // reservations held elsewhere as they close. The cap only by the member's own earmarks.
          const capped = row!.room !== null && Number(row!.room) < need
          const short: Short = {
            _tag: "Short",
            elsewhere: capped
              ? memberLeased - ownLeased > 0
              : row!.held_elsewhere || Number(row!.leased_before) - ownLeased > 0,
            cap
          }
          return { taken, short }
        })
      ))
  }

  /** Reserves from this instance's earmark on the account (for the payer, on an org pool), if it covers the amount. */
  const reserveLocally = (request: NewReservation, account: CreditAccountRef, reserveLedgerId: string, id: string) => {
    const key = potKey(account, request.userId)
    const pot = pots.get(key)
    if (pot === undefined || pot.free < request.amount) return false
    pot.free -= request.amount
    const createdAt = new Date()
    local.set(id, {
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
    mark(id)
    return true
  }

  /**
   * Reserves from a lease of one source, taking or topping one up as needed; waits (until
   * `giveUpAt`) while other instances hold earmarks that may come back. `Short` when it cannot pay.
   */
  const fromSource = (
    request: NewReservation,
    account: CreditAccountRef,
    chosen: { readonly id: string; readonly ledgerId: string },
    giveUpAt: number,
    writeOwn: () => boolean
  ): Effect.Effect<Extract<ReserveOutcome, { _tag: "Held" }> | Short, SqlError> =>
    Effect.gen(function*() {
      const key = potKey(account, request.userId)
      const { id, ledgerId } = chosen
      const held = () => reserveLocally(request, account, ledgerId, id)
      // Under the gate, so that what this instance earmarks is known when deciding to take more.
      const fromLease = gate.withPermits(1)(Effect.suspend(() => {
        if (held()) return Effect.succeed(undefined)
        const need = request.amount - (pots.get(key)?.free ?? 0)
        return Effect.map(
          take(account, request.userId, need, Math.max(need, request.amount * settings.blockFactor)),
          ({ short, taken }) => taken > 0 && held() ? undefined : short
        )
      }))
      for (;;) {
        if (held()) return { _tag: "Held", id, account } as const
        const short = yield* fromLease
        if (short === undefined) return { _tag: "Held", id, account } as const
        // This instance's own refunds may be waiting for its batch: write it, then look again.
        if (writeOwn()) {
          yield* flush
          continue
        }
        // Short on this instance's view: others' earmarks come back within a tick; wait for them
        // rather than fall to the next source (or refuse) while this one could pay.
        if (!short.elsewhere || Date.now() >= giveUpAt) return short
        yield* Effect.sleep(settings.tick)
      }
    })

  /**
   * The revocation rule (decision 0015) with leases (decision 0041): a reservation counts only once
   * a read of the credential and the memberships that *started after it was made in memory* found
   * them standing. A revoke whose answer came before that read began committed before it, so the
   * read sees it and the reservation is given back, charging nothing. A read made only before the
   * reservation is not enough: a request may wait there for a lease (up to `shortWait`) while the
   * revoke is answered.
   */
  const confirmed = (request: NewReservation, held: Extract<ReserveOutcome, { _tag: "Held" }>) =>
    Effect.flatMap(authorityOk(request), (authority): Effect.Effect<ReserveOutcome> => {
      if (authority.credentialOk && authority.memberOk) return Effect.succeed(held)
      const refused = { _tag: "Refused", reason: authority.credentialOk ? "membership" : "credential" } as const
      const reservation = local.get(held.id)
      if (reservation === undefined) return Effect.succeed(refused)
      // Not yet part of a batch: withdrawn, as if never made (the ledger shows nothing of it).
      if (!reservation.attempted && reservation.status === "held") {
        const pot = pots.get(reservation.pot)
        if (pot !== undefined) pot.free += reservation.amount
        local.delete(reservation.id)
        dirty.delete(reservation.id)
        return Effect.succeed(refused)
      }
      return Effect.as(close(reservation, 0, "released"), refused)
    })

  const reserve = (request: NewReservation): Effect.Effect<ReserveOutcome, SqlError> =>
    Effect.gen(function*() {
      const [first] = request.accounts
      if (stopped || first === undefined) return yield* inner.reserve(request)
      const chosen = { id: yield* ids.next("res"), ledgerId: yield* ids.next("led") }
      // This instance's earmark on the first source covers it: reserved at once, then confirmed by
      // one read (the common case under load: one read per request, as before).
      if (reserveLocally(request, first, chosen.ledgerId, chosen.id)) {
        return yield* confirmed(request, { _tag: "Held", id: chosen.id, account: first })
      }
      // Otherwise a first read refuses early and says whether the personal account is settled and
      // short (then no lease of it is taken); a second read confirms the reservation once made.
      const authority = yield* authorityOk(request)
      if (!authority.credentialOk) return { _tag: "Refused", reason: "credential" } as const
      if (!authority.memberOk) return { _tag: "Refused", reason: "membership" } as const
      const giveUpAt = Date.now() + Duration.toMillis(settings.shortWait)
      let ownWritten = false
      const writeOwn = () => {
        if (ownWritten || (dirty.size === 0 && pots.size === 0)) return false
        ownWritten = true
        return true
      }
      let cap: Short["cap"] = null
      for (const account of request.accounts) {
        // Settled and short (nothing earmarked or held anywhere): a lease would take nothing.
        const settledShort = account === first && authority.settledBalance !== undefined &&
          authority.settledBalance < request.amount && !pots.has(potKey(account, request.userId))
        if (settledShort) continue
        const outcome = yield* fromSource(request, account, chosen, giveUpAt, writeOwn)
        if (outcome._tag === "Held") return yield* confirmed(request, outcome)
        // The member's cap on the org pool, as the SQL store reports it when no source could pay.
        if (outcome.cap !== null) cap = outcome.cap
      }
      return { _tag: "Insufficient", cap } as const
    })

  /** Closes a reservation in memory; the batch writes it (conditionally, if it was written held). */
  const close = (reservation: LocalReservation, actual: number, status: "settled" | "released", tokens?: TokenUsage) =>
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
        const pot = pots.get(reservation.pot)
        if (pot !== undefined) pot.free += reservation.amount - charged
      }
      mark(reservation.id)
      return Option.some(charged)
    })

  /**
   * Waits until a batch begun after now is written: the charge just made in memory is then in the
   * database, so the answer it pays for cannot outlive it (an instance killed now has written it).
   */
  const durable = Effect.suspend(() => {
    const written = Deferred.unsafeMake<void>(FiberId.none)
    waiters.push(written)
    soon.unsafeOpen()
    work.unsafeOpen()
    return Deferred.await(written).pipe(
      Effect.timeout(settings.durableWait),
      Effect.catchAll(() => Effect.logWarning("a charge is not written yet; the answer goes out and a later batch writes it"))
    )
  })

  const settle: CreditStoreService["settle"] = (reservationId, actual, tokens) => {
    const reservation = local.get(reservationId)
    if (reservation === undefined) return inner.settle(reservationId, actual, tokens)
    if (stopped && reservation.written === "held" && !reservation.inFlight) {
      local.delete(reservationId)
      return inner.settle(reservationId, actual, tokens)
    }
    return Effect.flatMap(close(reservation, actual, "settled", tokens), (charged) =>
      Option.isSome(charged) && charged.value > 0
        ? Effect.as(durable, Option.some({ charged: charged.value }))
        : Effect.succeed(Option.map(charged, (charged) => ({ charged }))))
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
      mark(id)
      mark(parent.id)
      return Option.some({ id })
    })

  /**
   * Writes what happened in memory since the last batch and closes every open lease of this
   * instance, in one transaction. Idempotent (rows are keyed by ids chosen in memory, balances move
   * by what was really inserted), so a batch that failed without an answer is simply written again.
   */
  const writeBatch = (leases: ReadonlyArray<string>, batch: ReadonlyArray<LocalReservation>, states: ReadonlyArray<Snapshot>) =>
    Effect.gen(function*() {
      const closed = yield* sql<{ id: string; account_id: string; amount: string; org_id: string | null; user_id: string | null }>`
        UPDATE credit_leases SET status = 'closed', closed_at = now()
        WHERE instance_id = ${instance} AND status = 'open'
        RETURNING id, account_id, amount, org_id, user_id`
      // A statement of its own, after the update: one reclaimed while the update waited for its row
      // is seen only by a later snapshot.
      const reclaimed = leases.length === 0 ? [] : yield* sql<{ id: string }>`
        SELECT id FROM credit_leases WHERE id IN ${sql.in(leases)} AND status = 'reclaimed'`
      const moves = new Map<string, { balance: number; leased: number }>()
      const move = (accountId: string, balance: number, leased: number) => {
        const m = moves.get(accountId) ?? { balance: 0, leased: 0 }
        m.balance += balance
        m.leased += leased
        moves.set(accountId, m)
      }
      /** A member's spending on an org pool: earmarks given back, and what their reservations took, by month. */
      const members = new Map<string, { readonly orgId: string; readonly userId: string; leased: number; readonly months: Map<number, number> }>()
      const memberMove = (orgId: string, userId: string, leased: number, month: Date | null, spent: number) => {
        const key = `${orgId}\u0000${userId}`
        const m = members.get(key) ?? { orgId, userId, leased: 0, months: new Map() }
        m.leased += leased
        if (month !== null) m.months.set(month.getTime(), (m.months.get(month.getTime()) ?? 0) + spent)
        members.set(key, m)
      }
      for (const lease of closed) {
        move(lease.account_id, 0, Number(lease.amount))
        if (lease.org_id !== null && lease.user_id !== null) memberMove(lease.org_id, lease.user_id, Number(lease.amount), null, 0)
      }
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
          spend_month: s.spendMonth,
          parent_id: s.parentId
        }))
        const inserted = new Set(
          (yield* sql<{ id: string }>`INSERT INTO credit_reservations ${sql.insert(rows)} ON CONFLICT (id) DO NOTHING RETURNING id`)
            .map((row) => row.id)
        )
        // Already there: written by a batch that failed without an answer; closed below if it is closed now.
        for (const s of fresh) if (!inserted.has(s.id) && s.status !== "held") closingToo.push(s)
        // Counted for its member as the SQL store counts it: what was reserved, less what a close gave back.
        for (const s of fresh) {
          if (!inserted.has(s.id) || s.spendMonth === null) continue
          const refund = s.status === "held" ? 0 : s.amount - s.actual
          memberMove(s.account.ownerId, s.userId, 0, s.spendMonth, (s.reserveLedger?.amount ?? 0) - refund)
        }
        const ledger = fresh.filter((s) => inserted.has(s.id)).flatMap((s) => [
          ...(s.reserveLedger === null ? [] : [{
            id: s.reserveLedger.id,
            account_id: s.accountId,
            delta: -s.reserveLedger.amount,
            kind: "reserve",
            reservation_id: s.id,
            reason: s.purpose,
            actor_id: s.userId,
            created_at: s.createdAt,
            input_tokens: null,
            output_tokens: null
          }]),
          ...(s.status === "held" ? [] : [{
            id: s.closeLedgerId!,
            account_id: s.accountId,
            delta: s.amount - s.actual,
            kind: s.status === "settled" ? "settle" : "release",
            reservation_id: s.id,
            reason: s.purpose,
            actor_id: s.userId,
            created_at: s.closedAt!,
            input_tokens: s.tokens?.inputTokens ?? null,
            output_tokens: s.tokens?.outputTokens ?? null
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
          sql`(${s.id}::text, ${s.status}::text, ${s.actual}::bigint, ${s.closeLedgerId}::text, ${s.closedAt}::timestamptz, ${
            s.tokens?.inputTokens ?? null
          }::bigint, ${s.tokens?.outputTokens ?? null}::bigint)`
        )
        const done = yield* sql<{ account_id: string; delta: string; org_id: string | null; user_id: string; spend_month: Date | null }>`
          WITH v (id, status, actual, ledger_id, closed_at, input_tokens, output_tokens) AS (VALUES ${sql.csv(values)}),
          closed AS (
            UPDATE credit_reservations r SET status = v.status, actual = LEAST(v.actual, r.amount), closed_at = v.closed_at
            FROM v WHERE r.id = v.id AND r.status = 'held'
            RETURNING r.id, r.account_id, r.amount, r.actual, r.purpose, r.user_id, r.org_id, r.spend_month, v.ledger_id, v.status,
                      v.closed_at, v.input_tokens, v.output_tokens
          ), logged AS (
            INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at, input_tokens, output_tokens)
            SELECT ledger_id, account_id, amount - actual, CASE status WHEN 'settled' THEN 'settle' ELSE 'release' END,
                   id, purpose, user_id, closed_at, input_tokens, output_tokens FROM closed
            RETURNING account_id, delta, reservation_id
          )
          SELECT l.account_id, l.delta, c.org_id, c.user_id, c.spend_month FROM logged l JOIN closed c ON c.id = l.reservation_id`
        for (const row of done) {
          move(row.account_id, Number(row.delta), 0)
          // What its member's spending counted beyond the charge goes back, in the month it was counted in.
          if (row.spend_month !== null && row.org_id !== null) memberMove(row.org_id, row.user_id, 0, new Date(row.spend_month), -Number(row.delta))
        }
      }
      if (moves.size > 0) {
        // Rows locked in one order (an UPDATE of several takes them in the plan's), so that two
        // instances' batches over the same accounts (an org's pools) never deadlock.
        if (moves.size > 1) yield* sql`SELECT 1 FROM credit_accounts WHERE id IN ${sql.in([...moves.keys()])} ORDER BY id FOR NO KEY UPDATE`
        const values = [...moves].map(([id, m]) => sql`(${id}::text, ${m.balance}::bigint, ${m.leased}::bigint)`)
        yield* sql`
          UPDATE credit_accounts a SET balance = a.balance + v.balance, leased = a.leased - v.leased
          FROM (VALUES ${sql.csv(values)}) v (id, balance, leased) WHERE a.id = v.id`
      }
      // After the accounts: the order every statement locks them in. One statement per month a
      // member's changes fall in (one, but for a batch across the turn of a month).
      const spendingMoves = [...members.values()]
      if (spendingMoves.length > 1) {
        const keys = spendingMoves.map((m) => sql`(${m.orgId}::text, ${m.userId}::text)`)
        yield* sql`SELECT 1 FROM member_spending WHERE (org_id, user_id) IN (VALUES ${sql.csv(keys)})
                   ORDER BY org_id, user_id FOR NO KEY UPDATE`
      }
      for (let round = 0; spendingMoves.length > 0; round++) {
        const values = spendingMoves.map((m) => {
          const [month, spent] = [...m.months][round] ?? [null, 0]
          const leased = round === 0 ? m.leased : 0
          return sql`(${m.orgId}::text, ${m.userId}::text, ${month === null ? null : new Date(month)}::timestamptz, ${spent}::bigint, ${leased}::bigint)`
        })
        yield* sql`
          UPDATE member_spending s SET
            leased = s.leased - v.leased,
            total_spent = GREATEST(0, s.total_spent + v.spent),
            month_spent = CASE
              WHEN v.month IS NULL THEN s.month_spent
              WHEN s.month_start = v.month THEN GREATEST(0, s.month_spent + v.spent)
              WHEN s.month_start < v.month THEN GREATEST(0, v.spent)
              ELSE s.month_spent
            END,
            month_start = CASE WHEN v.month IS NOT NULL AND s.month_start < v.month THEN v.month ELSE s.month_start END,
            updated_at = now()
          FROM (VALUES ${sql.csv(values)}) v (org_id, user_id, month, spent, leased)
          WHERE s.org_id = v.org_id AND s.user_id = v.user_id`
        for (let i = spendingMoves.length - 1; i >= 0; i--) if (spendingMoves[i]!.months.size <= round + 1) spendingMoves.splice(i, 1)
      }
      return { lost, batch }
    }).pipe(sql.withTransaction)

  interface Snapshot {
    readonly id: string
    readonly accountId: string
    readonly account: CreditAccountRef
    readonly spendMonth: Date | null
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
    readonly tokens: TokenUsage | null
    readonly written: LocalReservation["written"]
  }

  /**
   * One batch (waiting for one in progress first); a failed batch is put back and tried again at
   * the next tick. Not interruptible once begun: a batch stopped half way (the instance stopping
   * while its tick's batch is written) would leave its reservations out of every later batch.
   */
  const flush: Effect.Effect<void> = gate.withPermits(1)(Effect.uninterruptible(Effect.suspend(() => {
    // The settles waiting now are answered by this batch (their closes are in it, or were written).
    const group = waiters
    waiters = []
    soon.unsafeClose()
    const answer = () => {
      for (const written of group) Deferred.unsafeDone(written, Exit.void)
    }
    // Nothing to write or close (the leases of a failed batch count: they are closed by the next).
    if (!pending()) return Effect.sync(answer)
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
            // Still not written: they wait for a later batch.
            waiters = [...group, ...waiters]
            for (const r of batch) {
              r.inFlight = false
              mark(r.id)
            }
          }).pipe(Effect.zipRight(Effect.logWarning("credit batch not written yet; retrying at the next tick").pipe(
            Effect.annotateLogs("cause", error.message)
          ))),
        onSuccess: ({ lost }) =>
          Effect.sync(() => {
            carried = []
            answer()
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
                mark(r.id)
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
  // A batch a tick after there is something to write, then every tick while there still is.
  const idle = Effect.suspend(() => {
    if (pending()) return Effect.void
    work.unsafeClose()
    return work.await
  })
  /** A tick, or sooner when a settle waits for its charge to be written: a window for others to join it, if any may. */
  const untilBatch = Effect.raceFirst(
    Effect.sleep(settings.tick),
    Effect.zipRight(
      soon.await,
      Effect.suspend(() => {
        for (const r of local.values()) if (r.status === "held" && !r.attempted) return Effect.sleep(settings.commitWindow)
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

  const flushed = <A>(read: Effect.Effect<A>) => Effect.zipRight(flush, read)

  return CreditStore.of({
    ...inner,
    flush,
    balance: (account) => flushed(inner.balance(account)),
    ledgerTotal: (account) => flushed(inner.ledgerTotal(account)),
    ledger: (account, page) => flushed(inner.ledger(account, page)),
    reserve: (request) => Effect.orDie(reserve(request)),
    settle,
    release,
    split,
    releaseExpired: (heldBefore) => flushed(inner.releaseExpired(heldBefore)),
    // What members spent is counted by the batch; a new cap governs this instance's next earmark
    // at once (its earmarks go back first) and other instances' within a tick.
    spending: (orgId, userIds) => flushed(inner.spending(orgId, userIds)),
    setCap: (orgId, userId, cap) => flushed(inner.setCap(orgId, userId, cap)),
    orgUsageSince: (orgId, since) => flushed(inner.orgUsageSince(orgId, since)),
    releaseHeldBy: (instanceIds) => inner.releaseHeldBy(instanceIds)
  })
})

export const layer = Layer.scoped(CreditStore, make)
