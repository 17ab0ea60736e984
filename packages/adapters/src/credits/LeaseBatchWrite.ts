/**
 * One batch's transaction (decision 0021): writes what happened in memory since the last batch
 * and closes every open lease of this instance. Idempotent (rows are keyed by ids chosen in
 * memory, balances move by what was really inserted), so a batch that failed without an answer
 * is simply written again. When one of the batch's leases was reclaimed (the instance was taken
 * for lost), its unwritten reservations are dropped: they are not charged.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { CreditSql } from "./CreditSql.js"
import type { Snapshot } from "./LeaseLedger.js"

/** What a batch moves: accounts' balances and earmarks; members' earmarks and spending on org pools, by month. */
interface Moves {
  readonly accounts: Map<string, { balance: number; leased: number }>
  readonly members: Map<string, { readonly orgId: string; readonly userId: string; leased: number; readonly months: Map<number, number> }>
}

const move = (moves: Moves, accountId: string, balance: number, leased: number) => {
  const m = moves.accounts.get(accountId) ?? { balance: 0, leased: 0 }
  m.balance += balance
  m.leased += leased
  moves.accounts.set(accountId, m)
}

/** A member's spending on an org pool: earmarks given back, and what their reservations took, by month. */
const memberMove = (moves: Moves, orgId: string, userId: string, leased: number, month: Date | null, spent: number) => {
  const key = `${orgId}\u0000${userId}`
  const m = moves.members.get(key) ?? { orgId, userId, leased: 0, months: new Map() }
  m.leased += leased
  if (month !== null) m.months.set(month.getTime(), (m.months.get(month.getTime()) ?? 0) + spent)
  moves.members.set(key, m)
}

/**
 * Writes the reservations no batch has written yet, with their ledger rows (a reserve row, and a
 * close row for one closed since). Returns those the database already had (written by a batch
 * that failed without an answer) and that are closed now: they are closed like rows written held.
 */
const writeFresh = ({ instance, sql }: CreditSql, fresh: ReadonlyArray<Snapshot>, moves: Moves) =>
  Effect.gen(function*() {
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
    const closingToo = fresh.filter((s) => !inserted.has(s.id) && s.status !== "held")
    // Counted for its member as the SQL store counts it: what was reserved, less what a close gave back.
    for (const s of fresh) {
      if (!inserted.has(s.id) || s.spendMonth === null) continue
      const refund = s.status === "held" ? 0 : s.amount - s.actual
      memberMove(moves, s.account.ownerId, s.userId, 0, s.spendMonth, (s.reserveLedger?.amount ?? 0) - refund)
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
      for (const row of logged) move(moves, row.account_id, Number(row.delta), 0)
    }
    return closingToo
  })

/** Closes reservations written held: only those the database still has held (a sweep may have released one). */
const closeWritten = (sql: SqlClient.SqlClient, closing: ReadonlyArray<Snapshot>, moves: Moves) =>
  Effect.gen(function*() {
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
      move(moves, row.account_id, Number(row.delta), 0)
      // What its member's spending counted beyond the charge goes back, in the month it was counted in.
      if (row.spend_month !== null && row.org_id !== null) memberMove(moves, row.org_id, row.user_id, 0, new Date(row.spend_month), -Number(row.delta))
    }
  })

/** Moves the accounts, then the members' spending: the order every statement locks them in. */
const applyMoves = (sql: SqlClient.SqlClient, moves: Moves) =>
  Effect.gen(function*() {
    if (moves.accounts.size > 0) {
      // Rows locked in one order (an UPDATE of several takes them in the plan's), so that two
      // instances' batches over the same accounts (an org's pools) never deadlock.
      if (moves.accounts.size > 1) yield* sql`SELECT 1 FROM credit_accounts WHERE id IN ${sql.in([...moves.accounts.keys()])} ORDER BY id FOR NO KEY UPDATE`
      const values = [...moves.accounts].map(([id, m]) => sql`(${id}::text, ${m.balance}::bigint, ${m.leased}::bigint)`)
      yield* sql`
        UPDATE credit_accounts a SET balance = a.balance + v.balance, leased = a.leased - v.leased
        FROM (VALUES ${sql.csv(values)}) v (id, balance, leased) WHERE a.id = v.id`
    }
    // After the accounts: the order every statement locks them in. One statement per month a
    // member's changes fall in (one, but for a batch across the turn of a month).
    const spendingMoves = [...moves.members.values()]
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
  })

/**
 * The batch: `leases` are those it closes that paid for its reservations (this one's and those
 * of failed batches); `states` the reservations as the batch found them. `lost` when one of the
 * leases was reclaimed: the reservations it had not written are then dropped.
 */
export const writeBatch = (context: CreditSql, leases: ReadonlyArray<string>, states: ReadonlyArray<Snapshot>) =>
  Effect.gen(function*() {
    const { instance, sql } = context
    const closed = yield* sql<{ id: string; account_id: string; amount: string; org_id: string | null; user_id: string | null }>`
      UPDATE credit_leases SET status = 'closed', closed_at = now()
      WHERE instance_id = ${instance} AND status = 'open'
      RETURNING id, account_id, amount, org_id, user_id`
    // A statement of its own, after the update: one reclaimed while the update waited for its row
    // is seen only by a later snapshot.
    const reclaimed = leases.length === 0 ? [] : yield* sql<{ id: string }>`
      SELECT id FROM credit_leases WHERE id IN ${sql.in(leases)} AND status = 'reclaimed'`
    const moves: Moves = { accounts: new Map(), members: new Map() }
    for (const lease of closed) {
      move(moves, lease.account_id, 0, Number(lease.amount))
      if (lease.org_id !== null && lease.user_id !== null) memberMove(moves, lease.org_id, lease.user_id, Number(lease.amount), null, 0)
    }
    const fresh = states.filter((s) => s.written === "none")
    const lost = reclaimed.length > 0
    if (lost && fresh.length > 0) {
      yield* Effect.logWarning("this instance's credit leases were reclaimed (it was taken for lost); its unwritten reservations are not charged")
        .pipe(Effect.annotateLogs({ reservations: fresh.length }))
    }
    const closingToo = !lost && fresh.length > 0 ? yield* writeFresh(context, fresh, moves) : []
    // Reservations written held before, closed since: only those the database still has held.
    const closing = [...states.filter((s) => s.written === "held" && s.status !== "held"), ...closingToo]
    if (closing.length > 0) yield* closeWritten(sql, closing, moves)
    yield* applyMoves(sql, moves)
    return { lost }
  }).pipe(context.sql.withTransaction)
