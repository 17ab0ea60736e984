/**
 * A reservation in one statement (decision 0015): the credential and memberships re-checked, the
 * first account that covers the amount picked (an org pool only within the payer's cap) and
 * debited, and the reservation, its ledger row and the member's spending written, all at once.
 */
import type { SqlError } from "@effect/sql/SqlError"
import type { CapPeriod, NewReservation, ReserveOutcome } from "@huddle/domain/credits/CreditStore"
import { Effect } from "effect"
import { sqlState } from "../sql/SqlFailure.js"
import { credentialOk, memberOk } from "./AuthorityChecks.js"
import type { CreditSql } from "./CreditSql.js"
import { spending } from "./SqlMemberSpending.js"
import { release } from "./SqlSettlement.js"

/**
 * How many times a reservation statement is run again when a concurrent one took the account it
 * picked (between its pick and its debit): each run sees the others' commits, so this only ends
 * early under a storm of reservations on the same accounts.
 */
const raceRetries = 20

/** The SQLSTATE of `huddle_cap_exceeded()` (migration 0007). */
const capExceeded = "HC001"

interface ReserveRow {
  readonly credential_ok: boolean
  readonly member_ok: boolean
  readonly cap_amount: number | null
  readonly cap_period: CapPeriod | null
  readonly cap_remaining: number | null
  readonly held_id: string | null
  readonly rank: number | null
}

/**
 * One statement: checks the authority, picks the first account that covers the amount (an org
 * account only within the payer's cap, as the statement's snapshot sees it), debits it, and
 * writes the reservation, its ledger row and the member's spending. It lands whole or not at
 * all. The cap is checked again on the spending row's latest version as it is updated (under its
 * row lock): a concurrent reservation that took the member past it undoes the whole statement
 * (SQLSTATE HC001). Row locks are taken in one order, the account then the spending row, here
 * and in settle and release, so concurrent statements never deadlock.
 */
const reserveStatement = ({ ids, instance, sql }: CreditSql, reservation: NewReservation, reservationId: string) =>
  Effect.gen(function*() {
    const { accounts, amount, orgId, purpose, userId } = reservation
    const ledgerId = yield* ids.next("led")
    const wanted = accounts.map((account, rank) =>
      sql`(${account.ownerType}::text, ${account.ownerId}::text, ${account.pool}::text, ${rank}::int)`
    )
    const [row] = yield* sql<ReserveRow>`
      WITH wanted (owner_type, owner_id, pool, rank) AS (VALUES ${sql.csv(wanted)}),
      spending AS (
        SELECT cap_amount, cap_period, leased,
               CASE WHEN month_start = huddle_month_start(now()) THEN month_spent ELSE 0 END AS month_spent, total_spent
        FROM member_spending WHERE org_id = ${orgId}::text AND user_id = ${userId}::text
      ),
      authority AS (
        SELECT ${credentialOk(sql, reservation)} AS credential_ok, ${memberOk(sql, reservation)} AS member_ok
      ),
      allowance AS (
        SELECT cap_amount, cap_period,
               CASE cap_period WHEN 'total' THEN cap_amount - total_spent ELSE cap_amount - month_spent END - leased AS remaining
        FROM spending WHERE cap_amount IS NOT NULL
      ),
      candidate AS (
        SELECT a.id, a.owner_type, w.rank FROM credit_accounts a JOIN wanted w USING (owner_type, owner_id, pool)
        WHERE a.balance - a.leased >= ${amount} AND (SELECT credential_ok AND member_ok FROM authority)
          AND (a.owner_type = 'user' OR NOT EXISTS (SELECT 1 FROM allowance WHERE remaining < ${amount}))
        ORDER BY w.rank LIMIT 1
      ), debited AS (
        UPDATE credit_accounts SET balance = balance - ${amount}
        WHERE id = (SELECT id FROM candidate) AND balance - leased >= ${amount}
        RETURNING id, owner_type
      ), held AS (
        INSERT INTO credit_reservations (id, account_id, user_id, org_id, amount, status, purpose, created_at, instance_id, spend_month)
        SELECT ${reservationId}::text, id, ${userId}::text, ${orgId}::text, ${amount}::bigint, 'held', ${purpose}::text, now(),
               ${instance}::text, CASE WHEN owner_type = 'org' THEN huddle_month_start(now()) END
        FROM debited
        RETURNING id, account_id, spend_month
      ), logged AS (
        INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at)
        SELECT ${ledgerId}::text, account_id, ${-amount}::bigint, 'reserve', id, ${purpose}::text, ${userId}::text, now()
        FROM held
      ), counted AS (
        INSERT INTO member_spending (org_id, user_id, month_start, month_spent, total_spent, updated_at)
        SELECT ${orgId}::text, ${userId}::text, spend_month, ${amount}::bigint, ${amount}::bigint, now()
        FROM held WHERE spend_month IS NOT NULL
        ON CONFLICT (org_id, user_id) DO UPDATE SET
          month_spent = CASE
            WHEN member_spending.cap_amount IS NOT NULL AND
                 CASE member_spending.cap_period
                   WHEN 'total' THEN member_spending.total_spent
                   ELSE CASE WHEN member_spending.month_start = EXCLUDED.month_start THEN member_spending.month_spent ELSE 0 END
                 END + member_spending.leased + EXCLUDED.month_spent > member_spending.cap_amount
            THEN huddle_cap_exceeded()
            ELSE CASE WHEN member_spending.month_start = EXCLUDED.month_start THEN member_spending.month_spent ELSE 0 END
                 + EXCLUDED.month_spent
          END,
          month_start = EXCLUDED.month_start,
          total_spent = member_spending.total_spent + EXCLUDED.total_spent,
          updated_at = EXCLUDED.updated_at
      )
      SELECT authority.credential_ok, authority.member_ok,
             allowance.cap_amount, allowance.cap_period, allowance.remaining AS cap_remaining,
             held.id AS held_id, candidate.rank
      FROM authority
      LEFT JOIN allowance ON true
      LEFT JOIN candidate ON true
      LEFT JOIN held ON true`
    return row!
  })

/**
 * When the statement fails, it may still have committed (the connection broke before the
 * answer came back): the reservation, if it exists, is released by its id, which was chosen
 * here, so that no credits stay held for a request that will not run. In the background: the
 * request answers its failure at once.
 */
const reserveOnce = (context: CreditSql, reservation: NewReservation) =>
  Effect.flatMap(context.ids.next("res"), (reservationId) =>
    reserveStatement(context, reservation, reservationId).pipe(
      Effect.tapError((error) =>
        sqlState(error) === capExceeded
          ? Effect.void
          : Effect.forkDaemon(release(context, reservationId).pipe(Effect.catchAllDefect(() => Effect.void)))
      )
    ))

const capLeft = (context: CreditSql, reservation: NewReservation) =>
  reservation.orgId === null
    ? Effect.succeed(null)
    : Effect.map(spending(context.sql, reservation.orgId, [reservation.userId]), (all) => {
      const mine = all.get(reservation.userId)
      if (mine === undefined || mine.cap === null) return null
      const used = mine.cap.period === "total" ? mine.total : mine.month
      return { ...mine.cap, remaining: Math.max(0, mine.cap.amount - used) }
    })

export const reserve = (context: CreditSql, reservation: NewReservation): Effect.Effect<ReserveOutcome, SqlError> =>
  Effect.gen(function*() {
    for (let attempt = 0;; attempt++) {
      const row = yield* reserveOnce(context, reservation).pipe(
        Effect.map((row): ReserveRow | undefined => row),
        Effect.catchIf((error) => sqlState(error) === capExceeded, () => Effect.succeed(undefined))
      )
      // A concurrent reservation of the same member took them to their cap first: the org pool
      // is out for this one (the sources before it could not pay either).
      if (row === undefined) return { _tag: "Insufficient", cap: yield* capLeft(context, reservation) } as const
      if (!row.credential_ok) return { _tag: "Refused", reason: "credential" } as const
      if (!row.member_ok) return { _tag: "Refused", reason: "membership" } as const
      if (row.held_id !== null && row.rank !== null) {
        return { _tag: "Held", id: row.held_id, account: reservation.accounts[row.rank]! } as const
      }
      // A candidate that was not debited lost a race with another reservation: look again.
      if (row.rank === null || attempt >= raceRetries) {
        const cap = row.cap_amount === null || row.cap_period === null || row.cap_remaining === null ? null : {
          amount: Number(row.cap_amount),
          period: row.cap_period,
          remaining: Math.max(0, Number(row.cap_remaining))
        }
        return { _tag: "Insufficient", cap } as const
      }
    }
  })
