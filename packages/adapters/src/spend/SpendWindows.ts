/**
 * Pages through time or members (decision 0022): a grouping led by a period, or by the member
 * and then a period, can have hundreds of thousands of groups in a year, so its page is made
 * window by window from the cursor's period or member on, each window sized from the groups seen
 * so far, until the page is full. A window's groups all sort after the previous window's, so the
 * page is the same as grouping everything. A grouping led by keys of few values pages through
 * their groups one by one, each by its period or member.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SpendQuery, TimeBucket } from "@huddle/domain/spend/SpendQuery"
import type { SpendScope } from "@huddle/domain/spend/SpendRepository"
import { Effect } from "effect"
import { addSums, groupsIn, noSums, type Row, totalsOf, type TotalsRow } from "./SpendGroups.js"
import { compareKeys, type Fixed, isTime, type Tiers } from "./SpendKeys.js"
import { rowsOf } from "./SpendRows.js"

/** The most groups of leading keys a grouping pages through one by one (`fewFirst`). */
const maxLeading = 1_000

/** The start of the UTC day, ISO week (Monday) or month that holds `at`, moved on by `n` of them. */
const bucketAfter = (unit: TimeBucket, at: Date, n: number): Date => {
  const [y, m, d] = [at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()]
  if (unit === "month") return new Date(Date.UTC(y, m + n, 1))
  if (unit === "week") return new Date(Date.UTC(y, m, d - (at.getUTCDay() + 6) % 7 + 7 * n))
  return new Date(Date.UTC(y, m, d + n))
}

/**
 * Where a time-first page can start: the cursor's period, when it is one (a key that is a date
 * sorts as its date does; anything else leaves the keyset comparison alone to skip).
 */
const startOf = (q: SpendQuery, unit: TimeBucket): Date => {
  const period = q.after?.[1 + q.groupBy.indexOf(unit)]
  const at = period === undefined ? undefined : new Date(`${period}T00:00:00Z`)
  // Only a key that is a date as the query writes it: `2025-02-30` is read as 2 March, and
  // starting there would skip the days between.
  const real = at !== undefined && !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === period
  return real && at.getTime() > q.from.getTime() ? at : q.from
}

/**
 * The next window's size (in periods or in rows): enough for the groups still `missing` at the
 * rate the windows so far held them (`held` groups in `seen`), with a quarter to spare; twice the
 * last when they held none.
 */
const nextSize = (last: number, missing: number, seen: number, held: number) =>
  held === 0 ? last * 2 : Math.max(1, Math.ceil(missing * seen / held * 1.25))

/**
 * A grouping that starts with a period pages through time: its page is made window by window
 * from the cursor's period on (a window's groups all sort after the previous window's), each
 * window sized from the groups per period seen so far, until the page is full. So a page costs
 * the rows of the periods it shows, not every group of the range (a year by day and member is
 * half a million groups). The totals are the windows' when they covered the range, else one
 * pass over the range without grouping. With `fixed` keys (the period after them), only their
 * rows, and no totals.
 */
export const timeFirst = (sql: SqlClient.SqlClient, scope: SpendScope, q: SpendQuery, unit: TimeBucket, tiers: Tiers, fixed: Fixed = []) =>
  Effect.gen(function*() {
    const groups: Array<Row> = []
    const start = startOf(q, unit)
    let from = start
    let periods = 1
    let seen = 0
    // Every group the windows held, the cursor's side of its period included: the rate per
    // period (only those after the cursor would make a page that ends late in a period look
    // like a sparse one, and size the next window for months).
    let held = 0
    let sums = noSums
    while (from < q.to && groups.length <= q.limit) {
      // A window that would cover half of what is left takes all of it: the totals come with it.
      const end = bucketAfter(unit, from, periods)
      const to = (end.getTime() - from.getTime()) * 2 < q.to.getTime() - from.getTime() ? end : q.to
      const window = yield* groupsIn(sql, scope, q, from, to, q.limit + 1 - groups.length, tiers, undefined, fixed)
      groups.push(...window.groups)
      sums = addSums(sums, totalsOf(window.first))
      held += Number(window.first?.total_groups ?? 0)
      seen += periods
      periods = nextSize(periods, q.limit + 1 - groups.length, seen, held)
      from = to
    }
    if ((start === q.from && from >= q.to) || fixed.length > 0) return { totals: sums, groups }
    const { first } = yield* groupsIn(sql, scope, { ...q, groupBy: [], after: undefined }, q.from, q.to, 0, tiers)
    return { totals: totalsOf(first), groups }
  })

/**
 * A grouping by member and then by period (a year by member and day is half a million groups)
 * pages through the members the same way: one statement gives the totals and the members from
 * the cursor's on in key order with their rows (as many as the page can need: each has a group
 * at least, but for the cursor's, whose may all be behind it), then windows of those members, each as many as the rows the missing groups need at
 * the rate seen so far (a row makes at most one). With `fixed` keys (the member after them), only their rows.
 */
export const memberFirst = (sql: SqlClient.SqlClient, scope: SpendScope, q: SpendQuery, tiers: Tiers, fixed: Fixed = []) =>
  Effect.gen(function*() {
    const cursor = q.after?.[1 + q.groupBy.indexOf("member")]
    const listed = yield* sql<TotalsRow & { readonly member: string | null; readonly n: string | number | null }>`
      WITH m AS (
        SELECT COALESCE(actor_id, '') COLLATE "C" AS member, COUNT(*) AS n, SUM(delta) AS delta,
               COUNT(*) FILTER (WHERE kind = 'settle') AS calls,
               SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens
        FROM (${rowsOf(sql, scope, q.from, q.to, false, undefined, fixed, tiers)}) x GROUP BY 1
      )
      SELECT -COALESCE(t.delta, 0) AS total_credits, COALESCE(t.calls, 0) AS total_calls,
             COALESCE(t.input_tokens, 0) AS total_input_tokens, COALESCE(t.output_tokens, 0) AS total_output_tokens, p.member, p.n
      FROM (SELECT SUM(delta) AS delta, SUM(calls) AS calls, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens FROM m) t
      LEFT JOIN (
        SELECT member, n FROM m WHERE ${cursor === undefined ? sql`true` : sql`member >= ${cursor}::text COLLATE "C"`}
        ORDER BY member LIMIT ${q.limit + 2}
      ) p ON true
      ORDER BY p.member`
    const members = listed.filter((m) => m.member !== null)
    const groups: Array<Row> = []
    let i = 0
    let wanted = q.limit + 1
    let seen = 0
    let held = 0
    while (i < members.length && groups.length <= q.limit) {
      let j = i
      let rows = 0
      while (j < members.length && rows < wanted) rows += Number(members[j++]!.n)
      const window = yield* groupsIn(sql, scope, q, q.from, q.to, q.limit + 1 - groups.length, tiers, [members[i]!.member!, members[j - 1]!.member!], fixed)
      groups.push(...window.groups)
      held += Number(window.first?.total_groups ?? 0)
      seen += rows
      wanted = nextSize(rows, q.limit + 1 - groups.length, seen, held)
      i = j
    }
    return { totals: totalsOf(listed[0]), groups }
  })

/**
 * A grouping led by keys of few values (model, tier, source) with a member and a period after
 * them (`source,day,member`: half a million groups in a year) pages through the groups of those
 * leading keys in key order: one statement lists them (and gives the totals), then each, from
 * the cursor's on, is paged by its period or member as above, over its own rows only. A page
 * that runs through leading groups too small to fill it costs a pass for each; more leading
 * groups than `maxLeading` are not "few", and the grouping is grouped whole instead.
 */
export const fewFirst = (sql: SqlClient.SqlClient, scope: SpendScope, q: SpendQuery, lead: number, tiers: Tiers) =>
  Effect.gen(function*() {
    const leading = q.groupBy.slice(0, lead)
    const unit = q.groupBy[lead]!
    const listed = yield* groupsIn(sql, scope, { ...q, groupBy: leading, after: undefined }, q.from, q.to, maxLeading, tiers)
    if (Number(listed.first?.total_groups ?? 0) > maxLeading) {
      const whole = yield* groupsIn(sql, scope, q, q.from, q.to, q.limit + 1, tiers)
      return { totals: totalsOf(whole.first), groups: whole.groups }
    }
    const cursor = q.after?.slice(1, 1 + lead)
    const groups: Array<Row> = []
    for (const group of listed.groups) {
      if (groups.length > q.limit) break
      const values = group.keys!.slice(1)
      const order = cursor === undefined ? 1 : compareKeys(values, cursor)
      if (order < 0) continue
      // The cursor's own leading group continues after it; a later one starts at its beginning.
      const rest = { ...q, limit: q.limit - groups.length, after: order === 0 ? q.after : undefined }
      const fixed: Fixed = leading.map((key, i) => [key, values[i]!])
      const page = isTime(unit) ? yield* timeFirst(sql, scope, rest, unit, tiers, fixed) : yield* memberFirst(sql, scope, rest, tiers, fixed)
      groups.push(...page.groups)
    }
    return { totals: totalsOf(listed.first), groups }
  })
