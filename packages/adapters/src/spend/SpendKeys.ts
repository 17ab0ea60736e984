/**
 * The keys spend is grouped by (decision 0022), each in two steps, from this fixed list only
 * (never from input): what the rows are first grouped by (cheap per row: a truncated time, an id,
 * the reason as it is), then the key's text worked out once per group (the model parsed from the
 * reason, the tier, the source's pool). Keys are compared as text in the "C" collation, the same
 * on every engine.
 */
import type { GroupKey, TimeBucket } from "@huddle/domain/spend/SpendQuery"

export const rawColumn: Record<GroupKey, readonly [alias: string, expression: string]> = {
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

export const keyExpression: Record<GroupKey, string> = {
  day: `to_char(bucket, 'YYYY-MM-DD')`,
  week: `to_char(bucket, 'YYYY-MM-DD')`,
  month: `to_char(bucket, 'YYYY-MM-DD')`,
  model: `COALESCE(model, '')`,
  tier: `COALESCE(tier, '')`,
  member: `COALESCE(actor_id, '')`,
  source: `pool`
}

export const isTime = (key: GroupKey): key is TimeBucket => key === "day" || key === "week" || key === "month"

/** The catalog's models and their tiers, as the query passes them. */
export type Tiers = ReadonlyArray<readonly [name: string, tier: string]>

/** The reason of a chat completion that named `model` (the inverse of the model key's parsing). */
export const reasonOf = (model: string) => `chat completion (${model})`

/**
 * Keys fixed to a value each (`[key, its text]`), from the keys whose values are few (model,
 * tier, source): the rows of one group of them, so that the windows of a grouping they lead
 * read only those rows.
 */
export type Fixed = ReadonlyArray<readonly [key: GroupKey, value: string]>

/** Compares keys as the "C" collation does: by code point (UTF-8's byte order). */
export const compareKeys = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
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
