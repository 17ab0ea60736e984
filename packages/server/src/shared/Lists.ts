/** The list envelope `{ data, next_cursor }` and its query parameters. */
import { Cursor } from "@huddle/domain/shared/Page"
import { Schema } from "effect"

export const maxLimit = 100

export const ListParams = Schema.Struct({
  limit: Schema.optionalWith(
    Schema.NumberFromString.pipe(
      Schema.int({ message: () => "limit must be an integer" }),
      Schema.between(1, maxLimit, { message: () => `limit must be between 1 and ${maxLimit}` })
    ),
    { default: () => 50 }
  ),
  cursor: Schema.optional(Cursor)
})
export type ListParams = typeof ListParams.Type

export const page = <A, I>(item: Schema.Schema<A, I>) =>
  Schema.Struct({ data: Schema.Array(item), next_cursor: Schema.NullOr(Cursor) })
