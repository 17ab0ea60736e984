/**
 * The ledger rows spend adds up: a range's reservation rows (`reserve`, `settle`, `release`;
 * grants are not spend) of the deployment, or of an org's reservations. The deployment reads
 * `credit_ledger_spend_idx` (created_at, covering the columns read); an org reads its
 * reservations (`credit_reservations_org_idx`) and their rows (`credit_ledger_reservation_idx`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SpendScope } from "@huddle/domain/spend/SpendRepository"
import { type Fixed, reasonOf, type Tiers } from "./SpendKeys.js"

/**
 * Each fixed key as a test of a row, the same as its key's value: a model is its reason (or,
 * for none, a reason that names no model), a tier the reasons of its models, a source its pool.
 */
const fixedRows = (sql: SqlClient.SqlClient, fixed: Fixed, tiers: Tiers) =>
  fixed.map(([key, value]) => {
    switch (key) {
      case "source":
        return sql`AND a.pool = ${value}`
      case "model":
        return value === ""
          ? sql`AND (l.reason = ${reasonOf("")} OR l.reason NOT LIKE 'chat completion (%)')`
          : sql`AND l.reason = ${reasonOf(value)}`
      case "tier": {
        const reasons = tiers.filter(([, tier]) => value === "" || tier === value).map(([name]) => reasonOf(name))
        if (reasons.length === 0) return value === "" ? sql`` : sql`AND false`
        return value === "" ? sql`AND l.reason NOT IN ${sql.in(reasons)}` : sql`AND l.reason IN ${sql.in(reasons)}`
      }
      default:
        return sql`AND false`
    }
  })

/** The range's reservation rows (of `members`, the first and last in key order, when given; of the `fixed` keys' values). */
export const rowsOf = (
  sql: SqlClient.SqlClient,
  scope: SpendScope,
  from: Date,
  to: Date,
  bySource: boolean,
  members?: readonly [string, string],
  fixed: Fixed = [],
  tiers: Tiers = []
) => {
  const joined = bySource || fixed.some(([key]) => key === "source")
  const pool = joined ? sql`JOIN credit_accounts a ON a.id = l.account_id` : sql``
  const poolColumn = bySource ? sql`, a.pool` : sql``
  const filters = sql`${
    members === undefined
      ? sql``
      : sql`AND COALESCE(l.actor_id, '') COLLATE "C" >= ${members[0]}::text COLLATE "C"
          AND COALESCE(l.actor_id, '') COLLATE "C" <= ${members[1]}::text COLLATE "C"`
  } ${sql.join(" ", false)(fixedRows(sql, fixed, tiers))}`
  return scope._tag === "Deployment"
    ? sql`
      SELECT l.created_at, l.kind, l.delta, l.actor_id, l.reason, l.input_tokens, l.output_tokens ${poolColumn}
      FROM credit_ledger l ${pool}
      WHERE l.kind <> 'grant' AND l.created_at >= ${from} AND l.created_at < ${to} ${filters}`
    : sql`
      SELECT l.created_at, l.kind, l.delta, l.actor_id, l.reason, l.input_tokens, l.output_tokens ${poolColumn}
      FROM credit_reservations r
      JOIN credit_ledger l ON l.reservation_id = r.id ${pool}
      WHERE r.org_id = ${scope.orgId} AND r.org_id IS NOT NULL AND r.created_at < ${to}
        AND l.kind <> 'grant' AND l.created_at >= ${from} AND l.created_at < ${to} ${filters}`
}
