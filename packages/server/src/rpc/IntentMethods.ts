/**
 * The params and results of the JSON-RPC intent methods (`POST /v1/rpc`) that a client reads:
 * rpc/Methods.ts decodes and encodes with these, and a client (the console) builds its params
 * and decodes its results with the same ones. The protocol's envelope is JsonRpcWire.ts.
 */
import { Intent, IntentStatus, ListedIntent } from "@huddle/domain/huddle/Intent"
import { Cursor } from "@huddle/domain/shared/Page"
import * as WireString from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import { maxLimit, page } from "../shared/Lists.js"

export { Intent, IntentStatus, ListedIntent }

export const Id = WireString.Id.pipe(Schema.minLength(1)).annotations({ title: "id" })

/** `intent.get`, `intent.approve`, `intent.reject`. */
export const ById = Schema.Struct({ id: Id.annotations({ description: "The intent's id" }) })

/** `intent.list`. */
export const ListParams = Schema.Struct({
  limit: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(1, maxLimit, { message: () => `must be an integer between 1 and ${maxLimit}` }))
      .annotations({ title: "limit", description: `Page size, 1 to ${maxLimit}`, default: 50 }),
    { default: () => 50 }
  ),
  cursor: Schema.optional(Cursor.annotations({ title: "cursor", description: "The next_cursor of the previous page" })),
  status: Schema.optional(IntentStatus.annotations({ description: "Only intents in this status" })),
  org_id: Schema.optional(Id.annotations({
    title: "org_id",
    description:
      "An org the caller administers: its intents, every member's (with status awaiting_review, what awaits its admins' review), instead of the caller's own. A member who is not an admin is refused with FORBIDDEN; for anyone else the org is NOT_FOUND"
  }))
})

/** `intent.list`'s result: each intent with who submitted it. */
export const IntentPage = page(ListedIntent)
