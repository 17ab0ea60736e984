/**
 * What a spend query asks and answers, as schemas: the single source of the wire shapes, their
 * validation and the OpenAPI document. Spend is read from the credit ledger's reservation rows
 * (`reserve`, `settle`, `release`): credits are what those rows took from balances, net.
 */
import { Schema } from "effect"
import { Cursor } from "../shared/Page.js"

export const TimeBucket = Schema.Literal("day", "week", "month")
export type TimeBucket = typeof TimeBucket.Type

export const Dimension = Schema.Literal("model", "tier", "member", "source")
export type Dimension = typeof Dimension.Type

export const GroupKey = Schema.Literal(...TimeBucket.literals, ...Dimension.literals)
export type GroupKey = typeof GroupKey.Type

/** The tokens the settled model calls were charged for (none are recorded for ledger rows before they were kept). */
const Usage = Schema.Struct({
  input_tokens: Schema.Int.annotations({ description: "Input tokens of the settled model calls (as charged: reported by the model, else estimated)" }),
  output_tokens: Schema.Int.annotations({ description: "Output tokens of the settled model calls (as charged)" })
})

/** Who paid: a member's personal balance, or one balance of an org's pool. */
export const PayingSource = Schema.Literal("personal", "subscription", "addon")
export type PayingSource = typeof PayingSource.Type

/** The longest range one query may cover (a leap year). */
export const maxRangeDays = 366

export interface SpendQuery {
  /** Inclusive. */
  readonly from: Date
  /** Exclusive. */
  readonly to: Date
  readonly groupBy: ReadonlyArray<GroupKey>
  readonly limit: number
  /** The keys of the last row of the previous page (its `next_cursor`, decoded by `keysOf`). */
  readonly after?: ReadonlyArray<string> | undefined
}

/**
 * A page's position: the keys of its last row, a constant first and one per grouping key, as a
 * JSON array (the wire cursor wraps it). A position made for another grouping is refused.
 */
export const positionOf = (keys: ReadonlyArray<string>): string => JSON.stringify(keys)
export const keysOf = (position: string, groupBy: ReadonlyArray<GroupKey>): ReadonlyArray<string> | undefined => {
  try {
    const keys: unknown = JSON.parse(position)
    // No key holds a NUL (the database refuses text with one).
    return Array.isArray(keys) && keys.length === groupBy.length + 1 && keys.every((key) => typeof key === "string" && !key.includes("\u0000"))
      ? keys
      : undefined
  } catch {
    return undefined
  }
}

export class SpendRow extends Schema.Class<SpendRow>("SpendRow")({
  period: Schema.optional(Schema.String.annotations({ description: "Start of the day, ISO week (Monday) or month, UTC (`YYYY-MM-DD`)" })),
  model: Schema.optional(Schema.NullOr(Schema.String).annotations({
    description: "The model (or tier) the request named; null for runs that are not chat completions (huddle intents)"
  })),
  tier: Schema.optional(Schema.NullOr(Schema.String).annotations({ description: "The catalog tier of that model; null when unknown" })),
  member: Schema.optional(Schema.String.annotations({ description: "The id of the member who paid or spent" })),
  source: Schema.optional(PayingSource),
  credits: Schema.Int.annotations({ description: "Credits taken, net of what was returned (held reservations count until closed)" }),
  calls: Schema.Int.annotations({ description: "Reservations settled (charged calls or runs)" }),
  ...Usage.fields
}) {}

export class SpendTotals extends Schema.Class<SpendTotals>("SpendTotals")({
  credits: Schema.Int,
  calls: Schema.Int,
  ...Usage.fields
}) {}

/** The repository's answer: a page of groups, and the totals of the whole range. */
export interface SpendPage {
  readonly rows: ReadonlyArray<SpendRow>
  readonly totals: SpendTotals
  /** The keys of the last row, when another page follows. */
  readonly next: ReadonlyArray<string> | null
}

/** What a caller asks: the range, the grouping, and a page (`cursor`: a previous `next_cursor`, decoded). */
export interface SpendRequest {
  readonly from: Date
  readonly to: Date
  readonly groupBy: ReadonlyArray<GroupKey>
  readonly limit: number
  readonly cursor?: string | undefined
}

export class SpendReport extends Schema.Class<SpendReport>("SpendReport")({
  from: Schema.String.annotations({ description: "The start of the range (inclusive), ISO 8601" }),
  to: Schema.String.annotations({ description: "The end of the range (exclusive), ISO 8601" }),
  group_by: Schema.Array(GroupKey),
  totals: SpendTotals.annotations({ description: "Of the whole range and every group, not only this page" }),
  data: Schema.Array(SpendRow),
  next_cursor: Schema.NullOr(Cursor)
}) {}
