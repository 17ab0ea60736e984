/**
 * Request headers shared by endpoint groups: the organization a call acts in, by the OpenAI
 * name or Huddle's own. Kept apart from any one group so that groups do not import each other.
 */
import { Id } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"

export const OrgHeaders = Schema.Struct({
  "openai-organization": Schema.optional(Id),
  "huddle-organization": Schema.optional(Id)
})

/** The org a request's headers ask for: Huddle's header wins over OpenAI's. */
export const orgAsked = (headers: typeof OrgHeaders.Type): string | undefined =>
  headers["huddle-organization"] ?? headers["openai-organization"]
