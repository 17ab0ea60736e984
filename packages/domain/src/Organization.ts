import { Schema } from "effect"
import { Role } from "./Membership.js"
import { Line } from "./WireString.js"

export const OrgName = Line.pipe(
  Schema.compose(Schema.Trim),
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(100, { message: () => "name must be at most 100 characters" })
)

export class Organization extends Schema.Class<Organization>("Organization")({
  id: Schema.String,
  name: Schema.String,
  slug: Schema.String,
  created_at: Schema.DateTimeUtc
}) {}

export const MemberStatus = Schema.Literal("active", "pending")
export type MemberStatus = typeof MemberStatus.Type

/** A member as admins see one: pending invitations have no `user_id` yet. */
export class Member extends Schema.Class<Member>("Member")({
  user_id: Schema.NullOr(Schema.String),
  email: Schema.String,
  role: Role,
  status: MemberStatus,
  invited_at: Schema.DateTimeUtc,
  joined_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/**
 * A URL-friendly slug for a name: lower-case ASCII letters, digits and single hyphens, at most
 * 48 characters; accents are folded, anything else becomes a hyphen. Never empty.
 */
export const slugify = (name: string): string => {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/g, "")
  return slug.length > 0 ? slug : "org"
}
