/**
 * Spend from the ledger in one statement: the reservation rows of the range (`reserve`, `settle`,
 * `release`; grants are not spend) grouped by the query's keys, one page of groups in key order
 * (keyset: after the cursor's key), and the totals of every group. Credits are the negated sum of
 * the rows' deltas, so the totals are the ledger's own sum over the same rows.
 *
 * The deployment reads `credit_ledger_spend_idx` (created_at, covering the columns read); an org
 * reads its reservations (`credit_reservations_org_idx`) and their rows (`credit_ledger_reservation_idx`).
 * Keys are compared as text in the "C" collation, the same on every engine.
 */
import { SqlClient } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { type GroupKey, type SpendPage, SpendRow, SpendTotals } from "@huddle/domain/spend/SpendQuery"
import { type Service, SpendRepository } from "@huddle/domain/spend/SpendRepository"
import { Effect, Layer } from "effect"

/** Each key's expression over the `spent` rows, from this fixed list only (never from input). */
const keyExpression: Record<GroupKey, string> = {
  day: `to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`,
  week: `to_char(date_trunc('week', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`,
  month: `to_char(date_trunc('month', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`,
  model: `COALESCE(model, '')`,
  tier: `COALESCE(tier, '')`,
  member: `COALESCE(actor_id, '')`,
  source: `pool`
}

const isTime = (key: GroupKey) => key === "day" || key === "week" || key === "month"

interface Row {
  readonly total_credits: string | number
  readonly total_calls: string | number
  readonly keys: ReadonlyArray<string> | null
  readonly credits: string | number | null
  readonly calls: string | number | null
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const query: Service["query"] = (scope, q, tiers) =>
    Effect.gen(function*() {
      // A constant first key: with no grouping, the one group still has a key to page after.
      const keys = ["''", ...q.groupBy.map((key) => keyExpression[key])]
      const after = q.after
      const catalog = JSON.stringify(tiers.map(([name, tier]) => ({ name, tier })))
      const source: Statement.Fragment = scope._tag === "Deployment"
        ? sql`
          SELECT l.created_at, l.kind, l.delta, l.actor_id, l.reason, a.pool
          FROM credit_ledger l JOIN credit_accounts a ON a.id = l.account_id
          WHERE l.kind <> 'grant' AND l.created_at >= ${q.from} AND l.created_at < ${q.to}`
        : sql`
          SELECT l.created_at, l.kind, l.delta, l.actor_id, l.reason, a.pool
          FROM credit_reservations r
          JOIN credit_ledger l ON l.reservation_id = r.id
          JOIN credit_accounts a ON a.id = l.account_id
          WHERE r.org_id = ${scope.orgId} AND r.org_id IS NOT NULL AND r.created_at < ${q.to}
            AND l.kind <> 'grant' AND l.created_at >= ${q.from} AND l.created_at < ${q.to}`
      const keyList = sql.literal(keys.map((key, i) => `${key} COLLATE "C" AS k${i}`).join(", "))
      const keyRefs = sql.literal(keys.map((_, i) => `k${i}`).join(", "))
      const keyArray = sql.literal(`ARRAY[${keys.map((_, i) => `k${i}`).join(", ")}]::text[]`)
      const orderBy = sql.literal(keys.map((_, i) => `p.k${i}`).join(", "))
      // The cursor's keys are parameters, bound one by one.
      const keysetBound = after === undefined
        ? sql`true`
        : sql`(${keyRefs}) > (${sql.csv(after.map((value) => sql`${value}::text COLLATE "C"`))})`
      const rows = yield* sql<Row>`
        WITH catalog (name, tier) AS (
          SELECT name, tier FROM jsonb_to_recordset(${catalog}::jsonb) AS c (name text, tier text)
        ), spent AS (
          SELECT s.*, c.tier FROM (
            SELECT x.*, substring(x.reason FROM '^chat completion \\((.*)\\)$') AS model FROM (${source}) x
          ) s LEFT JOIN catalog c ON c.name = s.model
        ), grouped AS (
          SELECT ${keyList}, -SUM(delta) AS credits, COUNT(*) FILTER (WHERE kind = 'settle') AS calls
          FROM spent GROUP BY ${keyRefs}
        ), page AS (
          SELECT * FROM grouped WHERE ${keysetBound} ORDER BY ${keyRefs} LIMIT ${q.limit + 1}
        )
        SELECT t.total_credits, t.total_calls, ${keyArray} AS keys, p.credits, p.calls
        FROM (SELECT COALESCE(SUM(credits), 0) AS total_credits, COALESCE(SUM(calls), 0) AS total_calls FROM grouped) t
        LEFT JOIN page p ON true
        ORDER BY ${orderBy}`
      const totals = new SpendTotals({ credits: Number(rows[0]?.total_credits ?? 0), calls: Number(rows[0]?.total_calls ?? 0) }, {
        disableValidation: true
      })
      const groups = rows.filter((row) => row.keys !== null && row.keys[0] !== null)
      const toRow = (row: Row) => {
        const fields: Record<string, unknown> = { credits: Number(row.credits), calls: Number(row.calls) }
        q.groupBy.forEach((key, i) => {
          const value = row.keys![i + 1]!
          if (isTime(key)) fields["period"] = value
          else if (key === "model" || key === "tier") fields[key] = value === "" ? null : value
          else fields[key] = value
        })
        return new SpendRow(fields as SpendRow, { disableValidation: true })
      }
      const more = groups.length > q.limit
      const shown = groups.slice(0, q.limit)
      return {
        rows: shown.map(toRow),
        totals,
        next: more ? shown[shown.length - 1]!.keys! : null
      } satisfies SpendPage
    }).pipe(Effect.orDie)

  return SpendRepository.of({ query })
})

export const layer = Layer.effect(SpendRepository, make)
