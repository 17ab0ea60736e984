/**
 * Closing a held reservation in the database (settle: charge at most what it holds and give back
 * the rest; release: give back everything), and carving a part off one (split). Each is one
 * statement that acts on `held` rows only, so it can be run again; a reservation is closed once.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { TokenUsage } from "@huddle/domain/credits/CreditStore"
import { Effect, Option, Schedule } from "effect"
import type { CreditSql } from "./CreditSql.js"

/**
 * Closing a reservation must not fail on a passing fault (a pool exhausted by a burst, a dropped
 * connection): the statements are idempotent (they act on `held` rows only), so they are retried
 * for a few seconds. When the database stays away longer, the request fails (503), and this
 * instance keeps trying in the background, every second, until the database is back: it alone
 * knows the real cost. Only if it dies meanwhile is the reservation left to the other instances
 * (the instance's heartbeat stops) or to `releaseExpired`.
 */
const closing = <A>(what: string, reservationId: string) => (effect: Effect.Effect<A, SqlError>) =>
  effect.pipe(
    Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(6)))),
    Effect.tapError((error) =>
      Effect.logWarning(`could not ${what} reservation ${reservationId} yet; retrying in the background`).pipe(
        Effect.annotateLogs("cause", error.message),
        Effect.zipRight(Effect.forkDaemon(
          effect.pipe(
            Effect.retry(Schedule.spaced("1 second").pipe(Schedule.upTo("30 minutes"))),
            Effect.zipRight(Effect.logInfo(`reservation ${reservationId}: ${what} done after the database came back`)),
            Effect.catchAll((later) =>
              Effect.logWarning(`could not ${what} reservation ${reservationId}; it stays held until it expires`).pipe(
                Effect.annotateLogs("cause", later.message)
              )
            )
          )
        ))
      )
    ),
    Effect.orDie
  )

/**
 * Gives back the unused part of a closed reservation to its member's spending on the org pool.
 * It reads `refunded`, so the account row is locked before the spending row, the order a
 * reservation takes them in: the sub-statements of a WITH otherwise run in no set order, and
 * two requests taking the rows in opposite orders deadlock under load.
 */
const uncount = (sql: SqlClient.SqlClient) =>
  sql`
    uncounted AS (
      UPDATE member_spending s SET
        total_spent = GREATEST(0, s.total_spent - (c.amount - c.actual)),
        month_spent = CASE WHEN s.month_start = c.spend_month THEN GREATEST(0, s.month_spent - (c.amount - c.actual)) ELSE s.month_spent END,
        updated_at = now()
      FROM closed c JOIN refunded r ON r.id = c.account_id
      WHERE c.spend_month IS NOT NULL AND s.org_id = c.org_id AND s.user_id = c.user_id AND c.amount > c.actual
    )`

/** Charges at most what the reservation holds and gives back the rest; none if it was not held. */
export const settle = ({ ids, sql }: CreditSql, reservationId: string, actual: number, tokens?: TokenUsage | undefined) =>
  Effect.gen(function*() {
    const ledgerId = yield* ids.next("led")
    const rows = yield* sql<{ charged: number }>`
      WITH closed AS (
        UPDATE credit_reservations SET status = 'settled', actual = LEAST(${actual}::bigint, amount), closed_at = now()
        WHERE id = ${reservationId} AND status = 'held'
        RETURNING id, account_id, amount, actual, user_id, org_id, spend_month, purpose
      ), refunded AS (
        UPDATE credit_accounts a SET balance = a.balance + (c.amount - c.actual)
        FROM closed c WHERE a.id = c.account_id
        RETURNING a.id
      ), logged AS (
        INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at, input_tokens, output_tokens)
        SELECT ${ledgerId}::text, account_id, amount - actual, 'settle', id, purpose, user_id, now(),
               ${tokens?.inputTokens ?? null}::bigint, ${tokens?.outputTokens ?? null}::bigint FROM closed
      ), ${uncount(sql)}
      SELECT actual AS charged FROM closed`
    return Option.map(Option.fromNullable(rows[0]), (row) => ({ charged: Number(row.charged) }))
  }).pipe(closing("settle", reservationId))

/** Gives back everything the reservation holds; whether it was held. */
export const release = ({ ids, sql }: CreditSql, reservationId: string): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const ledgerId = yield* ids.next("led")
    const rows = yield* sql<{ id: string }>`
      WITH closed AS (
        UPDATE credit_reservations SET status = 'released', actual = 0, closed_at = now()
        WHERE id = ${reservationId} AND status = 'held'
        RETURNING id, account_id, amount, actual, user_id, org_id, spend_month, purpose
      ), refunded AS (
        UPDATE credit_accounts a SET balance = a.balance + c.amount
        FROM closed c WHERE a.id = c.account_id
        RETURNING a.id
      ), logged AS (
        INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at)
        SELECT ${ledgerId}::text, account_id, amount, 'release', id, purpose, user_id, now() FROM closed
      ), ${uncount(sql)}
      SELECT id FROM closed`
    return rows.length > 0
  }).pipe(closing("release", reservationId))

/**
 * One statement: takes `amount` off the parent, if it is held and holds that much (under its row
 * lock, so concurrent splits, settles and releases of it see each other), and writes the child
 * with the parent's account, member, org, purpose and spending month. The child's id is chosen
 * here, so the statement can be run again after a failure that may have committed (a connection
 * broken before the answer came back): a child of that id that exists already is the answer, and
 * nothing more is carved. If it still fails, the child, if it was written, is released in the
 * background (as a failed reservation is): the caller will not use it, the parent keeps the rest.
 */
export const split = (context: CreditSql, reservationId: string, amount: number) =>
  Effect.gen(function*() {
    const { ids, instance, sql } = context
    if (!Number.isSafeInteger(amount) || amount < 1) return Option.none()
    const childId = yield* ids.next("res")
    const statement = sql<{ id: string }>`
      WITH existing AS (
        SELECT id FROM credit_reservations WHERE id = ${childId} AND parent_id = ${reservationId}
      ), parent AS (
        UPDATE credit_reservations SET amount = amount - ${amount}::bigint
        WHERE id = ${reservationId} AND status = 'held' AND amount >= ${amount}::bigint
          AND NOT EXISTS (SELECT 1 FROM existing)
        RETURNING id, account_id, user_id, org_id, purpose, spend_month
      ), child AS (
        INSERT INTO credit_reservations
          (id, account_id, user_id, org_id, amount, status, purpose, created_at, instance_id, spend_month, parent_id)
        SELECT ${childId}::text, account_id, user_id, org_id, ${amount}::bigint, 'held', purpose, now(),
               ${instance}::text, spend_month, id
        FROM parent
        RETURNING id
      )
      SELECT id FROM child UNION ALL SELECT id FROM existing`
    const rows = yield* statement.pipe(
      Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(6)))),
      Effect.tapError(() => Effect.forkDaemon(release(context, childId).pipe(Effect.catchAllDefect(() => Effect.void)))),
      Effect.orDie
    )
    return Option.map(Option.fromNullable(rows[0]), (row) => ({ id: row.id }))
  })
