/**
 * Credit accounts and their ledger: minting into an account (a grant, which creates the account
 * when needed), and the reads that must agree with the ledger (a balance, the ledger's sum, an
 * account's rows with running balances, what an org's pools were charged since a time).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { CreditAccountRef, Grant, LedgerEntry } from "@huddle/domain/credits/CreditStore"
import type { DateTime } from "effect"
import { Effect } from "effect"
import { toDate, utc } from "../repositories/Rows.js"
import type { CreditSql } from "./CreditSql.js"

const accountWhere = (sql: SqlClient.SqlClient, account: CreditAccountRef) =>
  sql`owner_type = ${account.ownerType} AND owner_id = ${account.ownerId} AND pool = ${account.pool}`

/** Adds credits, with their ledger row, in one transaction; the new balance. */
export const grant = ({ ids, sql }: CreditSql, { account, actorId, amount, reason }: Grant): Effect.Effect<number> =>
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
  }).pipe(sql.withTransaction, Effect.orDie)

export const balance = (sql: SqlClient.SqlClient, account: CreditAccountRef): Effect.Effect<number> =>
  sql<{ balance: number }>`SELECT balance FROM credit_accounts WHERE ${accountWhere(sql, account)}`.pipe(
    Effect.map((rows) => Number(rows[0]?.balance ?? 0)),
    Effect.orDie
  )

export const ledgerTotal = (sql: SqlClient.SqlClient, account: CreditAccountRef): Effect.Effect<number> =>
  sql<{ total: number }>`
    SELECT COALESCE(SUM(l.delta), 0)::bigint AS total
    FROM credit_ledger l JOIN credit_accounts a ON a.id = l.account_id
    WHERE ${accountWhere(sql, account)}`.pipe(
    Effect.map((rows) => Number(rows[0]?.total ?? 0)),
    Effect.orDie
  )

/** The account's rows, newest first, each with the balance after it; up to `limit + 1` (cursor: a ledger id). */
export const ledger = (
  sql: SqlClient.SqlClient,
  account: CreditAccountRef,
  { cursor, limit }: { readonly limit: number; readonly cursor?: string | undefined }
): Effect.Effect<ReadonlyArray<LedgerEntry>> =>
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
      WHERE ${accountWhere(sql, account)}
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
  )

/** What the org's pools were charged by reservations settled since `since`. */
export const orgUsageSince = (sql: SqlClient.SqlClient, orgId: string, since: DateTime.Utc): Effect.Effect<number> =>
  sql<{ used: number }>`
    SELECT COALESCE(SUM(r.actual), 0)::bigint AS used
    FROM credit_reservations r JOIN credit_accounts a ON a.id = r.account_id
    WHERE a.owner_type = 'org' AND a.owner_id = ${orgId} AND r.status = 'settled'
      AND r.closed_at >= ${toDate(since)}`.pipe(
    Effect.map((rows) => Number(rows[0]?.used ?? 0)),
    Effect.orDie
  )
