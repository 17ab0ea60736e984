/**
 * Members' spending on their org's pools (`member_spending`) and the caps admins set on it
 * (decision 0015). The reservation statement, the closes and the lease batches move it; this reads
 * it and sets caps. A month's spending counts only in its calendar month (UTC, the database's).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Cap, CapPeriod, Service as CreditStoreService, Spending } from "@huddle/domain/credits/CreditStore"
import { Effect } from "effect"

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

/** What each member spent (none spent: zero and no cap). */
export const spending = (sql: SqlClient.SqlClient, orgId: string, userIds: ReadonlyArray<string>): ReturnType<CreditStoreService["spending"]> =>
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

/** Sets (or, with null, lifts) a member's cap; what they spent stays. */
export const setCap = (sql: SqlClient.SqlClient, orgId: string, userId: string, cap: Cap | null): Effect.Effect<Spending> =>
  sql<SpendingRow>`
    INSERT INTO member_spending (org_id, user_id, cap_amount, cap_period, month_start, updated_at)
    VALUES (${orgId}, ${userId}, ${cap?.amount ?? null}, ${cap?.period ?? null}, huddle_month_start(now()), now())
    ON CONFLICT (org_id, user_id) DO UPDATE SET
      cap_amount = EXCLUDED.cap_amount, cap_period = EXCLUDED.cap_period, updated_at = EXCLUDED.updated_at
    RETURNING user_id, cap_amount, cap_period, total_spent,
              CASE WHEN month_start = huddle_month_start(now()) THEN month_spent ELSE 0 END AS month_spent`.pipe(
    Effect.map((rows) => spendingFromRow(rows[0])),
    Effect.orDie
  )
