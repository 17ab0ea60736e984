import { Schema } from "effect"
import { Text } from "../shared/WireString.js"

/** Who a memory is for: its author alone, a workspace (its owner), or every member of an org. */
export const MemoryScope = Schema.Literal("personal", "workspace", "org")
export type MemoryScope = typeof MemoryScope.Type

export const maxContentLength = 8000

/** What a memory says: free-form text, trimmed, 1 to 8000 characters. */
export const MemoryContent = Text.pipe(
  Schema.compose(Schema.Trim),
  Schema.minLength(1, { message: () => "content must not be empty" }),
  Schema.maxLength(maxContentLength, { message: () => `content must be at most ${maxContentLength} characters` })
)

export class Memory extends Schema.Class<Memory>("Memory")({
  id: Schema.String,
  scope: MemoryScope,
  content: Schema.String,
  /** Set exactly when the scope is `org`. */
  org_id: Schema.NullOr(Schema.String),
  /** Set exactly when the scope is `workspace`. */
  workspace_id: Schema.NullOr(Schema.String),
  author_id: Schema.String,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}
