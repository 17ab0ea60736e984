/**
 * Giving back what no request will close: reservations held past their expiry, and everything a
 * lost instance held (its open leases, then its held reservations; decisions 0015, 0021). Each
 * release is the same statement a request's release is, so a sweep and a close never both
 * refund one reservation, and several instances may sweep at once.
 */
import type { DateTime } from "effect"
import { Effect } from "effect"
import type { CreditSql } from "./CreditSql.js"
import { toDate } from "../repositories/Rows.js"
import { release } from "./SqlSettlement.js"

/**
 * The earmarks of lost instances (decision 0021) go back to their accounts, whole: what their
 * reservations took was not written yet, so it was never charged. Marked `reclaimed`, so that an
 * instance that was only paused finds out at its next batch and discards it rather than charge
 * against credits others may have taken since. The lease rows are locked before the accounts,
 * the order the instance's own batch takes them in.
 */
const reclaimLeases = ({ sql }: CreditSql, instanceIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    // The rows it moves, locked first in the order a batch locks them (the leases, the accounts,
    // the members' spending), so that the two do not deadlock.
    const open = sql`SELECT account_id, org_id, user_id FROM credit_leases WHERE instance_id IN ${sql.in(instanceIds)} AND status = 'open'`
    yield* sql`SELECT 1 FROM credit_leases WHERE instance_id IN ${sql.in(instanceIds)} AND status = 'open' ORDER BY id FOR UPDATE`
    yield* sql`SELECT 1 FROM credit_accounts WHERE id IN (SELECT account_id FROM (${open}) o) ORDER BY id FOR NO KEY UPDATE`
    yield* sql`SELECT 1 FROM member_spending WHERE (org_id, user_id) IN (SELECT org_id, user_id FROM (${open}) o)
               ORDER BY org_id, user_id FOR NO KEY UPDATE`
    yield* sql`
    WITH reclaimed AS (
      UPDATE credit_leases SET status = 'reclaimed', closed_at = now()
      WHERE instance_id IN ${sql.in(instanceIds)} AND status = 'open'
      RETURNING account_id, amount, org_id, user_id
    ), per_account AS (
      SELECT account_id, SUM(amount)::bigint AS amount FROM reclaimed GROUP BY account_id
    ), unleased AS (
      UPDATE credit_accounts a SET leased = a.leased - p.amount FROM per_account p WHERE a.id = p.account_id
      RETURNING a.id
    ), per_member AS (
      -- After the accounts (it reads what their update returned): the order every statement locks them in.
      SELECT r.org_id, r.user_id, SUM(r.amount)::bigint AS amount
      FROM reclaimed r JOIN unleased u ON u.id = r.account_id
      WHERE r.user_id IS NOT NULL GROUP BY r.org_id, r.user_id
    )
    UPDATE member_spending s SET leased = s.leased - p.amount
    FROM per_member p WHERE s.org_id = p.org_id AND s.user_id = p.user_id`
  }).pipe(sql.withTransaction)

const releaseAll = (context: CreditSql, heldIds: ReadonlyArray<{ readonly id: string }>) =>
  Effect.reduce(heldIds, 0, (released, { id }) => Effect.map(release(context, id), (done) => done ? released + 1 : released))

/** Releases (at most 500 of) the reservations still held that were made before `heldBefore`; how many. */
export const releaseExpired = (context: CreditSql, heldBefore: DateTime.Utc): Effect.Effect<number> =>
  context.sql<{ id: string }>`
    SELECT id FROM credit_reservations
    WHERE status = 'held' AND created_at < ${toDate(heldBefore)}
    ORDER BY created_at LIMIT 500`.pipe(Effect.flatMap((held) => releaseAll(context, held)), Effect.orDie)

/** Reclaims the lost instances' leases, then releases their held reservations; how many. */
export const releaseHeldBy = (context: CreditSql, instanceIds: ReadonlyArray<string>): Effect.Effect<number> =>
  instanceIds.length === 0 ? Effect.succeed(0) : reclaimLeases(context, instanceIds).pipe(
    Effect.zipRight(context.sql<{ id: string }>`
      SELECT id FROM credit_reservations
      WHERE status = 'held' AND instance_id IN ${context.sql.in(instanceIds)}
      ORDER BY created_at`),
    Effect.flatMap((held) => releaseAll(context, held)),
    Effect.orDie
  )
