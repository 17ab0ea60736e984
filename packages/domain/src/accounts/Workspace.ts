import { Schema } from "effect"

/** A user's place for work: memories and a connected repository. Every user has one personal workspace. */
export class Workspace extends Schema.Class<Workspace>("Workspace")({
  id: Schema.String,
  owner_id: Schema.String,
  name: Schema.String,
  personal: Schema.Boolean,
  created_at: Schema.DateTimeUtc
}) {}

export const personalWorkspaceName = "Personal"
