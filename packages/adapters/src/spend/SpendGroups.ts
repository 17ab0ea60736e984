/**
 * One statement over a range's rows: one page of its groups in key order (keyset: after the
 * cursor's key) and the totals and number of all its groups. Credits are the negated sum of the
 * rows' deltas, so the totals are the ledger's own sum over the same rows.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { GroupKey, SpendQuery, SpendTotals } from "@huddle/domain/spend/SpendQuery"
import type { SpendScope } from "@huddle/domain/spend/SpendRepository"
import { Effect } from "effect"
import { type Fixed, keyExpression, rawColumn, type Tiers } from "./SpendKeys.js"
import { rowsOf } from "./SpendRows.js"

type Numeric = string | number

export interface Row {
  readonly total_credits: Numeric
  readonly total_calls: Numeric
  readonly total_input_tokens: Numeric
  readonly total_output_tokens: Numeric
  readonly total_groups: Numeric
  readonly keys: ReadonlyArray<string> | null
  readonly credits: Numeric | null
  readonly calls: Numeric | null
  readonly input_tokens: Numeric | null
  readonly output_tokens: Numeric | null
}

/** What a range's rows add up to: a page's totals. */
export type Sums = typeof SpendTotals.Type

export type TotalsRow = Pick<Row, "total_credits" | "total_calls" | "total_input_tokens" | "total_output_tokens">

export const totalsOf = (row: TotalsRow | undefined): Sums => ({
  credits: Number(row?.total_credits ?? 0),
  calls: Number(row?.total_calls ?? 0),
  input_tokens: Number(row?.total_input_tokens ?? 0),
  output_tokens: Number(row?.total_output_tokens ?? 0)
})

export const addSums = (a: Sums, b: Sums): Sums => ({
  credits: a.credits + b.credits,
  calls: a.calls + b.calls,
  input_tokens: a.input_tokens + b.input_tokens,
  output_tokens: a.output_tokens + b.output_tokens
})

export const noSums: Sums = { credits: 0, calls: 0, input_tokens: 0, output_tokens: 0 }

/**
 * The groups of `[from, to)` after the cursor (at most `limit`), and the totals and the number of
 * all its groups (on `first`, the first row; absent when the range has no rows).
 */
export const groupsIn = (
  sql: SqlClient.SqlClient,
  scope: SpendScope,
  q: SpendQuery,
  from: Date,
  to: Date,
  limit: number,
  tiers: Tiers,
  members?: readonly [string, string],
  fixed: Fixed = []
) => {
  // A constant first key: with no grouping, the one group still has a key to page after.
  const keys = ["''", ...q.groupBy.map((key) => keyExpression[key])]
  const after = q.after
  const catalog = JSON.stringify(tiers.map(([name, tier]) => ({ name, tier })))
  const source = rowsOf(sql, scope, from, to, q.groupBy.includes("source"), members, fixed, tiers)
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
  return sql<Row>`
    WITH catalog (name, tier) AS (
      SELECT name, tier FROM jsonb_to_recordset(${catalog}::jsonb) AS c (name text, tier text)
    ), raw AS (
      SELECT ${rawList}, SUM(delta) AS delta, COUNT(*) FILTER (WHERE kind = 'settle') AS calls,
             COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens
      FROM (${source}) x GROUP BY ${rawRefs}
    ), spent AS (
      SELECT g.* ${modelColumns} FROM raw g ${model}
    ), grouped AS (
      SELECT ${keyList}, -SUM(delta) AS credits, SUM(calls) AS calls,
             SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens
      FROM spent GROUP BY ${keyRefs}
    ), page AS (
      SELECT * FROM grouped WHERE ${keysetBound} ORDER BY ${keyRefs} LIMIT ${limit}
    )
    SELECT t.total_credits, t.total_calls, t.total_input_tokens, t.total_output_tokens, t.total_groups,
           ${keyArray} AS keys, p.credits, p.calls, p.input_tokens, p.output_tokens
    FROM (SELECT COALESCE(SUM(credits), 0) AS total_credits, COALESCE(SUM(calls), 0) AS total_calls,
                 COALESCE(SUM(input_tokens), 0) AS total_input_tokens, COALESCE(SUM(output_tokens), 0) AS total_output_tokens,
                 COUNT(*) AS total_groups
          FROM grouped) t
    LEFT JOIN page p ON true
    ORDER BY ${orderBy}`.pipe(
    Effect.map((rows) => ({ first: rows[0], groups: rows.filter((row) => row.keys !== null && row.keys[0] !== null) }))
  )
}
