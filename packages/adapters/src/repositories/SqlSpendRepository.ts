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
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { type GroupKey, type SpendPage, SpendRow, SpendTotals } from "@huddle/domain/spend/SpendQuery"
import { type Service, SpendRepository } from "@huddle/domain/spend/SpendRepository"
import { Effect, Layer } from "effect"

/**
 * Each key in two steps, from this fixed list only (never from input): what the rows are first
 * grouped by (cheap per row: a truncated time, an id, the reason as it is), then the key's text
 * worked out once per group (the model parsed from the reason, the tier, the source's pool).
 */
const rawColumn: Record<GroupKey, readonly [alias: string, expression: string]> = {
  day: ["bucket", `date_trunc('day', created_at AT TIME ZONE 'UTC')`],
  week: ["bucket", `date_trunc('week', created_at AT TIME ZONE 'UTC')`],
  month: ["bucket", `date_trunc('month', created_at AT TIME ZONE 'UTC')`],
  model: ["reason", "reason"],
  tier: ["reason", "reason"],
  member: ["actor_id", "actor_id"],
  // The pool is joined per row (a hash join with the accounts): grouping by account first would
  // make a group per member (thousands) where there are three sources.
  source: ["pool", "pool"]
}
const keyExpression: Record<GroupKey, string> = {
  day: `to_char(bucket, 'YYYY-MM-DD')`,
  week: `to_char(bucket, 'YYYY-MM-DD')`,
  month: `to_char(bucket, 'YYYY-MM-DD')`,
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
      const bySource = q.groupBy.includes("source")
      const pool = bySource ? sql`JOIN credit_accounts a ON a.id = l.account_id` : sql``
      const poolColumn = bySource ? sql`, a.pool` : sql``
      const source: Statement.Fragment = scope._tag === "Deployment"
        ? sql`
          SELECT l.created_at, l.kind, l.delta, l.actor_id, l.reason ${poolColumn}
          FROM credit_ledger l ${pool}
          WHERE l.kind <> 'grant' AND l.created_at >= ${q.from} AND l.created_at < ${q.to}`
        : sql`
          SELECT l.created_at, l.kind, l.delta, l.actor_id, l.reason ${poolColumn}
          FROM credit_reservations r
          JOIN credit_ledger l ON l.reservation_id = r.id ${pool}
          WHERE r.org_id = ${scope.orgId} AND r.org_id IS NOT NULL AND r.created_at < ${q.to}
            AND l.kind <> 'grant' AND l.created_at >= ${q.from} AND l.created_at < ${q.to}`
      const raw = new Map(q.groupBy.map((key) => rawColumn[key]))
      const rawList = sql.literal([...[...raw].map(([alias, expression]) => `${expression} AS ${alias}`), "''::text AS k"].join(", "))
      const rawRefs = sql.literal([...raw.keys(), "k"].join(", "))
      const needs = (...keys: ReadonlyArray<GroupKey>) => keys.some((key) => q.groupBy.includes(key))
      const model = needs("model", "tier")
        ? sql`LEFT JOIN LATERAL (SELECT substring(g.reason FROM '^chat completion \\((.*)\\)$') AS model) m ON true
              LEFT JOIN catalog c ON c.name = m.model`
        : sql``
      const modelColumns = needs("model", "tier") ? sql`, m.model, c.tier` : sql``
      const keyList = sql.literal(keys.map((key, i) => `${key} COLLATE "C" AS k${i}`).join(", "))
      const keyRefs = sql.literal(keys.map((_, i) => `k${i}`).join(", "))
      const keyArray = sql.literal(`ARRAY[${keys.map((_, i) => `k${i}`).join(", ")}]::text[]`)
      const orderBy = sql.literal(keys.map((_, i) => `p.k${i}`).join(", "))
      // The cursor's keys are parameters, bound one by one.
      const keysetBound = after === undefined
        ? sql`true`
        : sql`(${keyRefs}) > (${sql.csv(after.map((value) => sql`${value}::text COLLATE "C"`))})`
      // JIT compiling costs ~0.1 s per query here and gains nothing on one pass over the rows.
      yield* sql`SET LOCAL jit = off`
      const rows = yield* sql<Row>`
        WITH catalog (name, tier) AS (
          SELECT name, tier FROM jsonb_to_recordset(${catalog}::jsonb) AS c (name text, tier text)
        ), raw AS (
          SELECT ${rawList}, SUM(delta) AS delta, COUNT(*) FILTER (WHERE kind = 'settle') AS calls
          FROM (${source}) x GROUP BY ${rawRefs}
        ), spent AS (
          SELECT g.* ${modelColumns} FROM raw g ${model}
        ), grouped AS (
          SELECT ${keyList}, -SUM(delta) AS credits, SUM(calls) AS calls
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
    }).pipe(sql.withTransaction, Effect.orDie)

  return SpendRepository.of({ query })
})

export const layer = Layer.effect(SpendRepository, make)
