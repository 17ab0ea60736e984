import * as SqlClient from "@effect/sql/SqlClient"
import { Ids } from "@huddle/domain/shared/Ids"
import {
  type CapPeriod,
  type CreditAccountRef,
  CreditStore,
  type LedgerEntry,
  type NewReservation,
  type ReserveOutcome,
  type Service as CreditStoreService,
  type Spending
} from "@huddle/domain/credits/CreditStore"
import { Instances } from "@huddle/domain/instances/Instances"
import { type SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option, Schedule } from "effect"
import { sqlState } from "../sql/SqlFailure.js"
import { toDate, utc } from "./Rows.js"

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

interface SpendingRow {
  readonly user_id: string
  readonly cap_amount: number | null
  readonly cap_period: CapPeriod | null
  readonly month_spent: number
  readonly total_spent: number
}

const spendingFromRow = (row: SpendingRow | undefined): Spending => ({
  cap: row?.cap_amount == null || row.cap_period === null ? null : { amount: Number(row.cap_amount), period: row.cap_period },
  month: Number(row?.month_spent ?? 0),
  total: Number(row?.total_spent ?? 0)
})

/**
 * The conditions of the revocation rule (decision 0015) as SQL, for the reservation statement and
 * for the read that precedes a reservation from a lease (decision 0021).
 */
export const authorityChecks = (sql: SqlClient.SqlClient) => {
  /** Whether the credential still stands (not revoked; a session also not expired). */
  const credentialOk = (reservation: NewReservation) => {
    const authority = reservation.authority
    if (authority === undefined) return sql`true`
    return authority.via === "api_key"
      ? sql`EXISTS (SELECT 1 FROM api_keys WHERE id = ${authority.credentialId} AND user_id = ${authority.actorId} AND revoked_at IS NULL)`
      : sql`EXISTS (SELECT 1 FROM web_sessions WHERE id = ${authority.credentialId} AND user_id = ${authority.actorId}
                    AND revoked_at IS NULL AND expires_at > now())`
  }

  /** Whether the payer (and the actor) are still active members of the org context. */
  const memberOk = (reservation: NewReservation) => {
    if (reservation.orgId === null) return sql`true`
    const users = [...new Set([reservation.userId, ...(reservation.authority ? [reservation.authority.actorId] : [])])]
    return sql`(SELECT count(*) FROM memberships WHERE org_id = ${reservation.orgId} AND status = 'active'
                AND user_id IN ${sql.in(users)}) = ${users.length}`
  }
  return { credentialOk, memberOk }
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids = yield* Ids
  const instance = (yield* Instances).id
  const { credentialOk, memberOk } = authorityChecks(sql)

  const accountWhere = (account: CreditAccountRef) =>
    sql`owner_type = ${account.ownerType} AND owner_id = ${account.ownerId} AND pool = ${account.pool}`

  /**
   * One statement: checks the authority, picks the first account that covers the amount (an org
   * account only within the payer's cap, as the statement's snapshot sees it), debits it, and
   * writes the reservation, its ledger row and the member's spending. It lands whole or not at
   * all. The cap is checked again on the spending row's latest version as it is updated (under its
   * row lock): a concurrent reservation that took the member past it undoes the whole statement
   * (SQLSTATE HC001). Row locks are taken in one order, the account then the spending row, here
   * and in settle and release, so concurrent statements never deadlock.
   */
  const reserveStatement = (reservation: NewReservation, reservationId: string) =>
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
          SELECT ${credentialOk(reservation)} AS credential_ok, ${memberOk(reservation)} AS member_ok
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
  const reserveOnce = (reservation: NewReservation) =>
    Effect.flatMap(ids.next("res"), (reservationId) =>
      reserveStatement(reservation, reservationId).pipe(
        Effect.tapError((error) =>
          sqlState(error) === capExceeded
            ? Effect.void
            : Effect.forkDaemon(release(reservationId).pipe(Effect.catchAllDefect(() => Effect.void)))
        )
      ))

  const capLeft = (reservation: NewReservation) =>
    reservation.orgId === null
      ? Effect.succeed(null)
      : Effect.map(spending(reservation.orgId, [reservation.userId]), (all) => {
        const mine = all.get(reservation.userId)
        if (mine === undefined || mine.cap === null) return null
        const used = mine.cap.period === "total" ? mine.total : mine.month
        return { ...mine.cap, remaining: Math.max(0, mine.cap.amount - used) }
      })

  const reserve = (reservation: NewReservation): Effect.Effect<ReserveOutcome, SqlError> =>
    Effect.gen(function*() {
      for (let attempt = 0;; attempt++) {
        const row = yield* reserveOnce(reservation).pipe(
          Effect.map((row): ReserveRow | undefined => row),
          Effect.catchIf((error) => sqlState(error) === capExceeded, () => Effect.succeed(undefined))
        )
        // A concurrent reservation of the same member took them to their cap first: the org pool
        // is out for this one (the sources before it could not pay either).
        if (row === undefined) return { _tag: "Insufficient", cap: yield* capLeft(reservation) } as const
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

  /**
   * Gives back the unused part of a closed reservation to its member's spending on the org pool.
   * It reads `refunded`, so the account row is locked before the spending row, the order a
   * reservation takes them in: the sub-statements of a WITH otherwise run in no set order, and
   * two requests taking the rows in opposite orders deadlock under load.
   */
  const uncount = sql`
    uncounted AS (
      UPDATE member_spending s SET
        total_spent = GREATEST(0, s.total_spent - (c.amount - c.actual)),
        month_spent = CASE WHEN s.month_start = c.spend_month THEN GREATEST(0, s.month_spent - (c.amount - c.actual)) ELSE s.month_spent END,
        updated_at = now()
      FROM closed c JOIN refunded r ON r.id = c.account_id
      WHERE c.spend_month IS NOT NULL AND s.org_id = c.org_id AND s.user_id = c.user_id AND c.amount > c.actual
    )`

  const release = (reservationId: string) =>
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
        ), ${uncount}
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
  const split = (reservationId: string, amount: number) =>
    Effect.gen(function*() {
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
        Effect.tapError(() => Effect.forkDaemon(release(childId).pipe(Effect.catchAllDefect(() => Effect.void)))),
        Effect.orDie
      )
      return Option.map(Option.fromNullable(rows[0]), (row) => ({ id: row.id }))
    })

  /**
   * The earmarks of lost instances (decision 0021) go back to their accounts, whole: what their
   * reservations took was not written yet, so it was never charged. Marked `reclaimed`, so that an
   * instance that was only paused finds out at its next batch and discards it rather than charge
   * against credits others may have taken since. The lease rows are locked before the accounts,
   * the order the instance's own batch takes them in.
   */
  const reclaimLeases = (instanceIds: ReadonlyArray<string>) =>
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

  const releaseAll = (heldIds: ReadonlyArray<{ readonly id: string }>) =>
    Effect.reduce(heldIds, 0, (released, { id }) => Effect.map(release(id), (done) => done ? released + 1 : released))

  const spending: CreditStoreService["spending"] = (orgId, userIds) =>
    userIds.length === 0
      ? Effect.succeed(new Map())
      : sql<SpendingRow>`
          SELECT user_id, cap_amount, cap_period, total_spent,
                 CASE WHEN month_start = huddle_month_start(now()) THEN month_spent ELSE 0 END AS month_spent
          FROM member_spending WHERE org_id = ${orgId} AND user_id IN ${sql.in(userIds)}`.pipe(
        Effect.map((rows) => {
          const byUser = new Map(rows.map((row) => [row.user_id, row]))
          return new Map(userIds.map((userId) => [userId, spendingFromRow(byUser.get(userId))]))
        }),
        Effect.orDie
      )

  return CreditStore.of({
    flush: Effect.void,
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
        return Number(row!.balance)
      }).pipe(sql.withTransaction, Effect.orDie),
    balance: (account) =>
      sql<{ balance: number }>`SELECT balance FROM credit_accounts WHERE ${accountWhere(account)}`.pipe(
        Effect.map((rows) => Number(rows[0]?.balance ?? 0)),
        Effect.orDie
      ),
    ledgerTotal: (account) =>
      sql<{ total: number }>`
        SELECT COALESCE(SUM(l.delta), 0)::bigint AS total
        FROM credit_ledger l JOIN credit_accounts a ON a.id = l.account_id
        WHERE ${accountWhere(account)}`.pipe(
        Effect.map((rows) => Number(rows[0]?.total ?? 0)),
        Effect.orDie
      ),
    ledger: (account, { cursor, limit }) =>
      sql<{
        id: string
        delta: number
        kind: LedgerEntry["kind"]
        reservation_id: string | null
        reason: string
        actor_id: string | null
        balance_after: number
        created_at: Date
        input_tokens: string | number | null
        output_tokens: string | number | null
      }>`
        SELECT id, delta, kind, reservation_id, reason, actor_id, created_at, balance_after, input_tokens, output_tokens FROM (
          SELECT l.*, SUM(l.delta) OVER (ORDER BY l.id) AS balance_after
          FROM credit_ledger l JOIN credit_accounts a ON a.id = l.account_id
          WHERE ${accountWhere(account)}
        ) entries
        ${cursor === undefined ? sql`` : sql`WHERE id < ${cursor}`}
        ORDER BY id DESC LIMIT ${limit + 1}`.pipe(
        Effect.map((rows) =>
          rows.map((row): LedgerEntry => ({
            id: row.id,
            delta: Number(row.delta),
            kind: row.kind,
            reservation_id: row.reservation_id,
            reason: row.reason,
            actor_id: row.actor_id,
            balance_after: Number(row.balance_after),
            created_at: utc(row.created_at),
            input_tokens: row.input_tokens === null ? null : Number(row.input_tokens),
            output_tokens: row.output_tokens === null ? null : Number(row.output_tokens)
          }))
        ),
        Effect.orDie
      ),
    reserve: (reservation) => Effect.orDie(reserve(reservation)),
    settle: (reservationId, actual, tokens) =>
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
          ), ${uncount}
          SELECT actual AS charged FROM closed`
        return Option.map(Option.fromNullable(rows[0]), (row) => ({ charged: Number(row.charged) }))
      }).pipe(closing("settle", reservationId)),
    release: (reservationId) => release(reservationId),
    split,
    releaseExpired: (heldBefore) =>
      sql<{ id: string }>`
        SELECT id FROM credit_reservations
        WHERE status = 'held' AND created_at < ${toDate(heldBefore)}
        ORDER BY created_at LIMIT 500`.pipe(Effect.flatMap(releaseAll), Effect.orDie),
    releaseHeldBy: (instanceIds) =>
      instanceIds.length === 0 ? Effect.succeed(0) : reclaimLeases(instanceIds).pipe(
        Effect.zipRight(sql<{ id: string }>`
          SELECT id FROM credit_reservations
          WHERE status = 'held' AND instance_id IN ${sql.in(instanceIds)}
          ORDER BY created_at`),
        Effect.flatMap(releaseAll),
        Effect.orDie
      ),
    orgUsageSince: (orgId, since) =>
      sql<{ used: number }>`
        SELECT COALESCE(SUM(r.actual), 0)::bigint AS used
        FROM credit_reservations r JOIN credit_accounts a ON a.id = r.account_id
        WHERE a.owner_type = 'org' AND a.owner_id = ${orgId} AND r.status = 'settled'
          AND r.closed_at >= ${toDate(since)}`.pipe(
        Effect.map((rows) => Number(rows[0]?.used ?? 0)),
        Effect.orDie
      ),
    setCap: (orgId, userId, cap) =>
      sql<SpendingRow>`
        INSERT INTO member_spending (org_id, user_id, cap_amount, cap_period, month_start, updated_at)
        VALUES (${orgId}, ${userId}, ${cap?.amount ?? null}, ${cap?.period ?? null}, huddle_month_start(now()), now())
        ON CONFLICT (org_id, user_id) DO UPDATE SET
          cap_amount = EXCLUDED.cap_amount, cap_period = EXCLUDED.cap_period, updated_at = EXCLUDED.updated_at
        RETURNING user_id, cap_amount, cap_period, total_spent,
                  CASE WHEN month_start = huddle_month_start(now()) THEN month_spent ELSE 0 END AS month_spent`.pipe(
        Effect.map((rows) => spendingFromRow(rows[0])),
        Effect.orDie
      ),
    spending
  })
})

export const layer = Layer.effect(CreditStore, make)
