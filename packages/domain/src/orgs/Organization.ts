import { Schema } from "effect"
import { Role } from "./Membership.js"
import { Line } from "../shared/WireString.js"

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

export const CapPeriod = Schema.Literal("month", "total")

/** An admin's limit on what one member may take from the org's pool: a calendar month's (UTC) or in total. */
export const MemberCap = Schema.Struct({
  amount: Schema.Int.pipe(Schema.between(0, 1_000_000_000_000, { message: () => "amount must be an integer from 0 to 10^12" })),
  period: CapPeriod
})
export type MemberCap = typeof MemberCap.Type

/** What a member took from the org's pool: held for requests running now, and charged. */
export const MemberSpent = Schema.Struct({
  /** In the current calendar month (UTC). */
  month: Schema.Int,
  total: Schema.Int
})

/** A member as admins see one: pending invitations have no `user_id` yet. */
export class Member extends Schema.Class<Member>("Member")({
  user_id: Schema.NullOr(Schema.String),
  email: Schema.String,
  role: Role,
  status: MemberStatus,
  invited_at: Schema.DateTimeUtc,
  joined_at: Schema.NullOr(Schema.DateTimeUtc),
  cap: Schema.NullOr(MemberCap),
  spent: MemberSpent
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
