/**
 * Spend from the ledger: the reservation rows of the range (`reserve`, `settle`, `release`; grants
 * are not spend) grouped by the query's keys, one page of groups in key order (keyset: after the
 * cursor's key), and the totals of every group, read from one snapshot. Credits are the negated
 * sum of the rows' deltas, so the totals are the ledger's own sum over the same rows.
 *
 * The deployment reads `credit_ledger_spend_idx` (created_at, covering the columns read); an org
 * reads its reservations (`credit_reservations_org_idx`) and their rows (`credit_ledger_reservation_idx`).
 * Keys are compared as text in the "C" collation, the same on every engine.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type GroupKey, type SpendPage, type SpendQuery, SpendRow, SpendTotals, type TimeBucket } from "@huddle/domain/spend/SpendQuery"
import { type Service, SpendRepository, type SpendScope } from "@huddle/domain/spend/SpendRepository"
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

const isTime = (key: GroupKey): key is TimeBucket => key === "day" || key === "week" || key === "month"

type Tiers = ReadonlyArray<readonly [name: string, tier: string]>

/** The reason of a chat completion that named `model` (the inverse of the model key's parsing). */
const reasonOf = (model: string) => `chat completion (${model})`

/**
 * Keys fixed to a value each (`[key, its text]`), from the keys whose values are few (model,
 * tier, source): the rows of one group of them, so that the windows of a grouping they lead
 * read only those rows.
 */
type Fixed = ReadonlyArray<readonly [key: GroupKey, value: string]>

/** The most groups of leading keys a grouping pages through one by one (`fewFirst`). */
const maxLeading = 1_000

/** Compares keys as the "C" collation does: by code point (UTF-8's byte order). */
const compareKeys = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] === b[i]) continue
    const [x, y] = [[...a[i]!], [...b[i]!]]
    for (let j = 0; j < Math.min(x.length, y.length); j++) {
      const d = x[j]!.codePointAt(0)! - y[j]!.codePointAt(0)!
      if (d !== 0) return d
    }
    return x.length - y.length
  }
  return a.length - b.length
}

type Numeric = string | number

interface Row {
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
type Sums = typeof SpendTotals.Type

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

type TotalsRow = Pick<Row, "total_credits" | "total_calls" | "total_input_tokens" | "total_output_tokens">

const totalsOf = (row: TotalsRow | undefined): Sums => ({
  credits: Number(row?.total_credits ?? 0),
  calls: Number(row?.total_calls ?? 0),
  input_tokens: Number(row?.total_input_tokens ?? 0),
  output_tokens: Number(row?.total_output_tokens ?? 0)
})

const addSums = (a: Sums, b: Sums): Sums => ({
  credits: a.credits + b.credits,
  calls: a.calls + b.calls,
  input_tokens: a.input_tokens + b.input_tokens,
  output_tokens: a.output_tokens + b.output_tokens
})

const noSums: Sums = { credits: 0, calls: 0, input_tokens: 0, output_tokens: 0 }

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * Each fixed key as a test of a row, the same as its key's value: a model is its reason (or,
   * for none, a reason that names no model), a tier the reasons of its models, a source its pool.
   */
  const fixedRows = (fixed: Fixed, tiers: Tiers) =>
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
  const rowsOf = (scope: SpendScope, from: Date, to: Date, bySource: boolean, members?: readonly [string, string], fixed: Fixed = [], tiers: Tiers = []) => {
    const joined = bySource || fixed.some(([key]) => key === "source")
    const pool = joined ? sql`JOIN credit_accounts a ON a.id = l.account_id` : sql``
    const poolColumn = bySource ? sql`, a.pool` : sql``
    const filters = sql`${
      members === undefined
        ? sql``
        : sql`AND COALESCE(l.actor_id, '') COLLATE "C" >= ${members[0]}::text COLLATE "C"
            AND COALESCE(l.actor_id, '') COLLATE "C" <= ${members[1]}::text COLLATE "C"`
    } ${sql.join(" ", false)(fixedRows(fixed, tiers))}`
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

  /**
   * One statement: the groups of `[from, to)` after the cursor (at most `limit`), and the totals
   * and the number of all its groups.
   */
  const groupsIn = (
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
    const source = rowsOf(scope, from, to, q.groupBy.includes("source"), members, fixed, tiers)
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

  /**
   * A grouping that starts with a period pages through time: its page is made window by window
   * from the cursor's period on (a window's groups all sort after the previous window's), each
   * window sized from the groups per period seen so far, until the page is full. So a page costs
   * the rows of the periods it shows, not every group of the range (a year by day and member is
   * half a million groups). The totals are the windows' when they covered the range, else one
   * pass over the range without grouping. With `fixed` keys (the period after them), only their
   * rows, and no totals.
   */
  const timeFirst = (scope: SpendScope, q: SpendQuery, unit: TimeBucket, tiers: Tiers, fixed: Fixed = []) =>
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
        const window = yield* groupsIn(scope, q, from, to, q.limit + 1 - groups.length, tiers, undefined, fixed)
        groups.push(...window.groups)
        sums = addSums(sums, totalsOf(window.first))
        held += Number(window.first?.total_groups ?? 0)
        seen += periods
        periods = nextSize(periods, q.limit + 1 - groups.length, seen, held)
        from = to
      }
      if ((start === q.from && from >= q.to) || fixed.length > 0) return { totals: sums, groups }
      const { first } = yield* groupsIn(scope, { ...q, groupBy: [], after: undefined }, q.from, q.to, 0, tiers)
      return { totals: totalsOf(first), groups }
    })

  /**
   * A grouping by member and then by period (a year by member and day is half a million groups)
   * pages through the members the same way: one statement gives the totals and the members from
   * the cursor's on in key order with their rows (as many as the page can need: each has a group
   * at least, but for the cursor's, whose may all be behind it), then windows of those members, each as many as the rows the missing groups need at
   * the rate seen so far (a row makes at most one). With `fixed` keys (the member after them), only their rows.
   */
  const memberFirst = (scope: SpendScope, q: SpendQuery, tiers: Tiers, fixed: Fixed = []) =>
    Effect.gen(function*() {
      const cursor = q.after?.[1 + q.groupBy.indexOf("member")]
      const listed = yield* sql<TotalsRow & { readonly member: string | null; readonly n: Numeric | null }>`
        WITH m AS (
          SELECT COALESCE(actor_id, '') COLLATE "C" AS member, COUNT(*) AS n, SUM(delta) AS delta,
                 COUNT(*) FILTER (WHERE kind = 'settle') AS calls,
                 SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens
          FROM (${rowsOf(scope, q.from, q.to, false, undefined, fixed, tiers)}) x GROUP BY 1
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
        const window = yield* groupsIn(scope, q, q.from, q.to, q.limit + 1 - groups.length, tiers, [members[i]!.member!, members[j - 1]!.member!], fixed)
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
  const fewFirst = (scope: SpendScope, q: SpendQuery, lead: number, tiers: Tiers) =>
    Effect.gen(function*() {
      const leading = q.groupBy.slice(0, lead)
      const unit = q.groupBy[lead]!
      const listed = yield* groupsIn(scope, { ...q, groupBy: leading, after: undefined }, q.from, q.to, maxLeading, tiers)
      if (Number(listed.first?.total_groups ?? 0) > maxLeading) {
        const whole = yield* groupsIn(scope, q, q.from, q.to, q.limit + 1, tiers)
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
        const page = isTime(unit) ? yield* timeFirst(scope, rest, unit, tiers, fixed) : yield* memberFirst(scope, rest, tiers, fixed)
        groups.push(...page.groups)
      }
      return { totals: totalsOf(listed.first), groups }
    })

  const query: Service["query"] = (scope, q, tiers) =>
    Effect.gen(function*() {
      // The totals and every window read one snapshot of the ledger.
      yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`
      // JIT compiling costs ~0.1 s per query here and gains nothing on one pass over the rows.
      yield* sql`SET LOCAL jit = off`
      const unit = q.groupBy[0]
      // Where the member or a period first comes (after keys of few values, or first).
      const lead = q.groupBy.findIndex((key) => key === "member" || isTime(key))
      const { groups, totals } = unit !== undefined && isTime(unit)
        ? yield* timeFirst(scope, q, unit, tiers)
        : unit === "member" && q.groupBy.some(isTime)
        ? yield* memberFirst(scope, q, tiers)
        : lead > 0 && q.groupBy.includes("member") && q.groupBy.some(isTime)
        ? yield* fewFirst(scope, q, lead, tiers)
        : yield* groupsIn(scope, q, q.from, q.to, q.limit + 1, tiers).pipe(
          Effect.map(({ first, groups }) => ({ groups, totals: totalsOf(first) }))
        )
      const toRow = (row: Row) => {
        const fields: Record<string, unknown> = {
          credits: Number(row.credits),
          calls: Number(row.calls),
          input_tokens: Number(row.input_tokens),
          output_tokens: Number(row.output_tokens)
        }
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
        totals: new SpendTotals(totals, { disableValidation: true }),
        next: more ? shown[shown.length - 1]!.keys! : null
      } satisfies SpendPage
    }).pipe(sql.withTransaction, Effect.orDie)

  return SpendRepository.of({ query })
})

export const layer = Layer.effect(SpendRepository, make)
