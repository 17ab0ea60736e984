import * as SqlClient from "@effect/sql/SqlClient"
import { Conflict } from "@huddle/domain/shared/Errors"
import type { Role } from "@huddle/domain/orgs/Membership"
import { Member, type MemberStatus, Organization } from "@huddle/domain/orgs/Organization"
import { OrganizationRepository } from "@huddle/domain/orgs/OrganizationRepository"
import { Effect, Layer, Option } from "effect"
import { isUniqueViolation, toDate, utc, utcOrNull } from "./Rows.js"

interface MemberRow {
  readonly user_id: string | null
  readonly email: string
  readonly role: Role
  readonly status: MemberStatus
  readonly created_at: Date
  readonly joined_at: Date | null
  readonly cap_amount: number | null
  readonly cap_period: "month" | "total" | null
  readonly month_spent: number | null
  readonly total_spent: number | null
}

const memberFromRow = (row: MemberRow) =>
  new Member({
    user_id: row.user_id,
    email: row.email,
    role: row.role,
    status: row.status,
    invited_at: utc(row.created_at),
    joined_at: utcOrNull(row.joined_at),
    cap: row.cap_amount === null || row.cap_period === null ? null : { amount: Number(row.cap_amount), period: row.cap_period },
    spent: { month: Number(row.month_spent ?? 0), total: Number(row.total_spent ?? 0) }
  }, { disableValidation: true })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A member's spending on the pool and their cap come with them (pending invitations have none).
  const memberColumns = sql`m.user_id, m.email, m.role, m.status, m.created_at, m.joined_at, s.cap_amount, s.cap_period, s.total_spent,
                            CASE WHEN s.month_start = huddle_month_start(now()) THEN s.month_spent ELSE 0 END AS month_spent`
  const membersOf = sql`memberships m LEFT JOIN member_spending s ON s.org_id = m.org_id AND s.user_id = m.user_id`

  return OrganizationRepository.of({
    create: (org, creator) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO organizations (id, name, slug, created_by, created_at)
                   VALUES (${org.id}, ${org.name}, ${org.slug}, ${creator.userId}, ${toDate(org.created_at)})`
        yield* sql`INSERT INTO memberships (org_id, email, user_id, role, status, invited_by, created_at, joined_at)
                   VALUES (${org.id}, ${creator.email}, ${creator.userId}, 'admin', 'active', ${creator.userId},
                           ${toDate(org.created_at)}, ${toDate(org.created_at)})`
      }).pipe(
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(new Conflict({ message: "An organization with this slug exists" }))
            : Effect.die(error))
      ),
    findById: (orgId) =>
      sql<{ id: string; name: string; slug: string; created_at: Date }>`
        SELECT id, name, slug, created_at FROM organizations WHERE id = ${orgId}`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (row) =>
            new Organization({ ...row, created_at: utc(row.created_at) }, { disableValidation: true }))
        ),
        Effect.orDie
      ),
    delete: (orgId) =>
      Effect.gen(function*() {
        // Lets the audit trigger accept this org's rows going with it (and nothing else).
        yield* sql`SELECT set_config('huddle.deleting_org', ${orgId}, true)`
        yield* sql`DELETE FROM credit_accounts WHERE owner_type = 'org' AND owner_id = ${orgId}`
        yield* sql`DELETE FROM organizations WHERE id = ${orgId}`
      }).pipe(sql.withTransaction, Effect.orDie),
    members: (orgId, { cursor, limit }) =>
      sql<MemberRow>`SELECT ${memberColumns} FROM ${membersOf} WHERE m.org_id = ${orgId}
                     ${cursor === undefined ? sql`` : sql`AND m.email > ${cursor}`}
                     ORDER BY m.email LIMIT ${limit + 1}`.pipe(
        Effect.map((rows) => rows.map(memberFromRow)),
        Effect.orDie
      ),
    findMember: (orgId, ref) =>
      sql<MemberRow>`SELECT ${memberColumns} FROM ${membersOf}
                     WHERE m.org_id = ${orgId} AND (m.user_id = ${ref} OR m.email = ${ref.toLowerCase()})`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), memberFromRow)),
        Effect.orDie
      ),
    invite: ({ at, email, invitedBy, orgId, role }) =>
      sql`INSERT INTO memberships (org_id, email, user_id, role, status, invited_by, created_at)
          VALUES (${orgId}, ${email}, NULL, ${role}, 'pending', ${invitedBy}, ${toDate(at)})`.pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(new Conflict({ message: "This email is already a member or invited" }))
            : Effect.die(error))
      ),
    activateInvitations: (email, userId, at) =>
      sql<{ org_id: string }>`UPDATE memberships SET user_id = ${userId}, status = 'active', joined_at = ${toDate(at)}
                              WHERE email = ${email} AND status = 'pending' RETURNING org_id`.pipe(
        Effect.map((rows) => rows.map((row) => row.org_id)),
        Effect.orDie
      ),
    setRole: (orgId, email, role) =>
      sql`UPDATE memberships SET role = ${role} WHERE org_id = ${orgId} AND email = ${email}`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    removeMember: (orgId, email) =>
      sql`DELETE FROM memberships WHERE org_id = ${orgId} AND email = ${email}`.pipe(Effect.asVoid, Effect.orDie),
    lockAdmins: (orgId) =>
      sql<{ user_id: string }>`SELECT user_id FROM memberships
                               WHERE org_id = ${orgId} AND role = 'admin' AND status = 'active'
                               FOR UPDATE`.pipe(
        Effect.map((rows) => rows.length),
        Effect.orDie
      ),
    counts: (orgId) =>
      sql<{ members: number; pending: number }>`
        SELECT count(*) FILTER (WHERE status = 'active')::bigint AS members,
               count(*) FILTER (WHERE status = 'pending')::bigint AS pending
        FROM memberships WHERE org_id = ${orgId}`.pipe(
        Effect.map((rows) => rows[0] ?? { members: 0, pending: 0 }),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(OrganizationRepository, make)
