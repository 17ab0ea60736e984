import { SqlClient } from "@effect/sql"
import { Ids } from "@huddle/domain/Ids"
import { type CreditAccountRef, CreditStore, type NewReservation } from "@huddle/domain/ports/CreditStore"
import { type SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option, Schedule } from "effect"
import { toDate } from "./Rows.js"

/**
 * Closing a reservation must not fail on a passing fault (a pool exhausted by a burst, a dropped
 * connection): the statements are idempotent (they act on `held` rows only), so they are retried
 * for a few seconds. What still fails is left to `releaseExpired`.
 */
const closing = <A>(what: string, reservationId: string) => (effect: Effect.Effect<A, SqlError>) =>
  effect.pipe(
    Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(6)))),
    Effect.tapError((error) =>
      Effect.logWarning(`could not ${what} reservation ${reservationId}; it stays held until it expires`).pipe(
        Effect.annotateLogs("cause", error.message)
      )
    ),
    Effect.orDie
  )

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids = yield* Ids

  const accountWhere = (account: CreditAccountRef) =>
    sql`owner_type = ${account.ownerType} AND owner_id = ${account.ownerId} AND pool = ${account.pool}`

  /**
   * The end of a reservation statement: from the `debited` account (none, if its balance did not
   * cover the amount), the reservation row and its ledger row.
   */
  const holding = (
    { amount, ledgerId, orgId, purpose, reservationId, userId }:
      Omit<NewReservation, "accounts"> & { readonly reservationId: string; readonly ledgerId: string }
  ) =>
    sql`held AS (
      INSERT INTO credit_reservations (id, account_id, user_id, org_id, amount, status, purpose, created_at)
      SELECT ${reservationId}::text, id, ${userId}::text, ${orgId}::text, ${amount}::bigint, 'held', ${purpose}::text, now()
      FROM debited
      RETURNING id, account_id
    ), logged AS (
      INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at)
      SELECT ${ledgerId}::text, account_id, ${-amount}::bigint, 'reserve', id, ${purpose}::text, ${userId}::text, now()
      FROM held
    )`

  /** From one account: none if its balance does not cover the amount. */
  const reserveFrom = (
    account: CreditAccountRef,
    { amount, orgId, purpose, userId }: Omit<NewReservation, "accounts">
  ) =>
    Effect.gen(function*() {
      const reservation = { amount, orgId, purpose, userId, reservationId: yield* ids.next("res"), ledgerId: yield* ids.next("led") }
      const rows = yield* sql<{ id: string }>`
        WITH debited AS (
          UPDATE credit_accounts SET balance = balance - ${amount}
          WHERE ${accountWhere(account)} AND balance >= ${amount}
          RETURNING id
        ), ${holding(reservation)}
        SELECT id FROM held`
      return Option.map(Option.fromNullable(rows[0]), (row) => row.id)
    })

  const release = (reservationId: string) =>
    Effect.gen(function*() {
      const ledgerId = yield* ids.next("led")
      const rows = yield* sql<{ id: string }>`
        WITH closed AS (
          UPDATE credit_reservations SET status = 'released', actual = 0, closed_at = now()
          WHERE id = ${reservationId} AND status = 'held'
          RETURNING id, account_id, amount, user_id, purpose
        ), refunded AS (
          UPDATE credit_accounts a SET balance = a.balance + c.amount
          FROM closed c WHERE a.id = c.account_id
        ), logged AS (
          INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at)
          SELECT ${ledgerId}::text, account_id, amount, 'release', id, purpose, user_id, now() FROM closed
        )
        SELECT id FROM closed`
      return rows.length > 0
    }).pipe(closing("release", reservationId))

  return CreditStore.of({
    grant: ({ account, actorId, amount, reason }) =>
      Effect.gen(function*() {
        const accountId = yield* ids.next("res")
        const ledgerId = yield* ids.next("led")
        const [row] = yield* sql<{ id: string; balance: number }>`
          INSERT INTO credit_accounts (id, owner_type, owner_id, pool, balance)
          VALUES (${accountId}, ${account.ownerType}, ${account.ownerId}, ${account.pool}, ${amount})
          ON CONFLICT (owner_type, owner_id, pool)
          DO UPDATE SET balance = credit_accounts.balance + EXCLUDED.balance
          RETURNING id, balance`
        yield* sql`INSERT INTO credit_ledger (id, account_id, delta, kind, reason, actor_id, created_at)
                   VALUES (${ledgerId}, ${row!.id}, ${amount}, 'grant', ${reason}, ${actorId}, now())`
        return row!.balance
      }).pipe(sql.withTransaction, Effect.orDie),
    balance: (account) =>
      sql<{ balance: number }>`SELECT balance FROM credit_accounts WHERE ${accountWhere(account)}`.pipe(
        Effect.map((rows) => rows[0]?.balance ?? 0),
        Effect.orDie
      ),
    ledgerTotal: (account) =>
      sql<{ total: number }>`
        SELECT COALESCE(SUM(l.delta), 0)::bigint AS total
        FROM credit_ledger l JOIN credit_accounts a ON a.id = l.account_id
        WHERE ${accountWhere(account)}`.pipe(
        Effect.map((rows) => rows[0]?.total ?? 0),
        Effect.orDie
      ),
    // Each statement lands whole or not at all (the conditional debit, the reservation and its
    // ledger row), and the row lock on the account serialises concurrent reservations.
    // Usually one statement: it picks the first account that covers the amount and debits it.
    // When a concurrent reservation drained that account between the pick and the debit, the
    // statement takes nothing; the accounts are then tried one by one, so a payer that exists
    // is never missed.
    reserve: ({ accounts, amount, orgId, purpose, userId }) =>
      Effect.gen(function*() {
        const reservation = { amount, orgId, purpose, userId, reservationId: yield* ids.next("res"), ledgerId: yield* ids.next("led") }
        const wanted = accounts.map((account, rank) =>
          sql`(${account.ownerType}::text, ${account.ownerId}::text, ${account.pool}::text, ${rank}::int)`
        )
        const rows = yield* sql<{ id: string; rank: number }>`
          WITH wanted (owner_type, owner_id, pool, rank) AS (VALUES ${sql.csv(wanted)}),
          candidate AS (
            SELECT a.id, w.rank FROM credit_accounts a JOIN wanted w USING (owner_type, owner_id, pool)
            WHERE a.balance >= ${amount} ORDER BY w.rank LIMIT 1
          ), debited AS (
            UPDATE credit_accounts SET balance = balance - ${amount}
            WHERE id = (SELECT id FROM candidate) AND balance >= ${amount}
            RETURNING id
          ), ${holding(reservation)}
          SELECT held.id, candidate.rank FROM held, candidate`
        const first = rows[0]
        if (first !== undefined) return Option.some({ id: first.id, account: accounts[first.rank]! })
        for (const account of accounts) {
          const one = yield* reserveFrom(account, { amount, orgId, purpose, userId })
          if (Option.isSome(one)) return Option.some({ id: one.value, account })
        }
        return Option.none()
      }).pipe(Effect.orDie),
    settle: (reservationId, actual) =>
      Effect.gen(function*() {
        const ledgerId = yield* ids.next("led")
        const rows = yield* sql<{ charged: number }>`
          WITH closed AS (
            UPDATE credit_reservations SET status = 'settled', actual = LEAST(${actual}::bigint, amount), closed_at = now()
            WHERE id = ${reservationId} AND status = 'held'
            RETURNING id, account_id, amount, actual, user_id, purpose
          ), refunded AS (
            UPDATE credit_accounts a SET balance = a.balance + (c.amount - c.actual)
            FROM closed c WHERE a.id = c.account_id
          ), logged AS (
            INSERT INTO credit_ledger (id, account_id, delta, kind, reservation_id, reason, actor_id, created_at)
            SELECT ${ledgerId}::text, account_id, amount - actual, 'settle', id, purpose, user_id, now() FROM closed
          )
          SELECT actual AS charged FROM closed`
        return Option.fromNullable(rows[0])
      }).pipe(closing("settle", reservationId)),
    release: (reservationId) => release(reservationId),
    releaseExpired: (heldBefore) =>
      Effect.gen(function*() {
        const expired = yield* sql<{ id: string }>`
          SELECT id FROM credit_reservations
          WHERE status = 'held' AND created_at < ${toDate(heldBefore)}
          ORDER BY created_at LIMIT 500`
        let released = 0
        for (const { id } of expired) {
          if (yield* release(id)) released++
        }
        return released
      }).pipe(Effect.orDie),
    orgUsageSince: (orgId, since) =>
      sql<{ used: number }>`
        SELECT COALESCE(SUM(r.actual), 0)::bigint AS used
        FROM credit_reservations r JOIN credit_accounts a ON a.id = r.account_id
        WHERE a.owner_type = 'org' AND a.owner_id = ${orgId} AND r.status = 'settled'
          AND r.closed_at >= ${toDate(since)}`.pipe(
        Effect.map((rows) => rows[0]?.used ?? 0),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(CreditStore, make)
