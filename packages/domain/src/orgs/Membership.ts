import { Schema } from "effect"

export const Role = Schema.Literal("admin", "member")
export type Role = typeof Role.Type

/** An organization as seen by one of its members: with the member's role in it. */
export class OrgMembership extends Schema.Class<OrgMembership>("OrgMembership")({
  id: Schema.String,
  name: Schema.String,
  slug: Schema.String,
  role: Role
}) {}
