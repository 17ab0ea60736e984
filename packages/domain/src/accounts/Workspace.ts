import { Schema } from "effect"
import { Line } from "../shared/WireString.js"

/**
 * A place for work: memories and a connected repository. Every user has one personal workspace
 * (`owner_id` set); an organization has the workspaces its admins create (`org_id` set), which
 * every member uses. Exactly one of the two is set.
 */
export class Workspace extends Schema.Class<Workspace>("Workspace")({
  id: Schema.String,
  owner_id: Schema.NullOr(Schema.String),
  org_id: Schema.NullOr(Schema.String),
  name: Schema.String,
  personal: Schema.Boolean,
  created_at: Schema.DateTimeUtc
}) {}

export const personalWorkspaceName = "Personal"

/** An org workspace's name, as an admin gives it (trimmed; unique in the org, in any case). */
export const WorkspaceName = Line.pipe(
  Schema.compose(Schema.Trim),
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(100, { message: () => "name must be at most 100 characters" })
)
