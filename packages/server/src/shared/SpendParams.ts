/** The query parameters of the spend endpoints (operator and org admin): range, grouping, page. */
import { GroupKey, maxRangeDays } from "@huddle/domain/spend/SpendQuery"
import { Schema } from "effect"
import { Instant } from "./Instant.js"
import { ListParams } from "./Lists.js"

const keys = GroupKey.literals.join(", ")
const times: ReadonlyArray<string> = ["day", "week", "month"]

/** `group_by=month,model`: known keys, each once, at most one of day, week and month. */
export const GroupBy = Schema.transform(
  Schema.String.pipe(
    Schema.maxLength(100),
    Schema.filter((text) => {
      const parts = text.split(",").map((part) => part.trim())
      const unknown = parts.find((part) => !(GroupKey.literals as ReadonlyArray<string>).includes(part))
      if (unknown !== undefined) return `unknown key \`${unknown}\` (one or more of ${keys}, comma-separated)`
      if (new Set(parts).size !== parts.length) return "a key is given twice"
      if (parts.filter((part) => times.includes(part)).length > 1) return "at most one of day, week and month"
      return true
    })
  ),
  Schema.Array(GroupKey),
  {
    strict: true,
    decode: (text) => text.split(",").map((part) => part.trim() as GroupKey),
    encode: (list) => list.join(",")
  }
).annotations({ description: `One or more of ${keys}, comma-separated; rows are ordered by these keys` })

const At = (role: string) => Instant(`ISO 8601 date or time, UTC unless an offset is given: ${role}`)

const day = 24 * 60 * 60 * 1000

export const SpendParams = Schema.Struct({
  ...ListParams.fields,
  from: At("the start of the range (inclusive)"),
  to: At("the end of the range (exclusive)"),
  group_by: Schema.optionalWith(GroupBy, { default: () => [] })
}).pipe(
  Schema.filter((params) => {
    const span = params.to.epochMillis - params.from.epochMillis
    if (span <= 0) return { path: ["to"], message: "must be after from" }
    if (span > maxRangeDays * day) return { path: ["to"], message: `the range may cover at most ${maxRangeDays} days` }
    return true
  })
)
export type SpendParams = typeof SpendParams.Type

/** The domain's request from the decoded parameters. */
export const requestOf = (params: SpendParams) => ({
  from: new Date(params.from.epochMillis),
  to: new Date(params.to.epochMillis),
  groupBy: params.group_by,
  limit: params.limit,
  cursor: params.cursor
})
