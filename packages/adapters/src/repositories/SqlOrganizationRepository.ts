import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Role } from "@huddle/domain/orgs/Membership"
import { CapPeriod, Member, MemberStatus, Organization } from "@huddle/domain/orgs/Organization"
import { OrganizationRepository } from "@huddle/domain/orgs/OrganizationRepository"
import { Effect, Layer, Schema } from "effect"
import { conflictOnDuplicate, Int8, pageFields, tableRow, Timestamp } from "./Rows.js"

/** A row of `organizations`. */
const OrganizationRow = tableRow(Organization, { created_at: Timestamp })

/**
 * A row of `memberships` with the member's spending on the pool and their cap (`member_spending`;
 * pending invitations have none), as admins see the member.
 */
const MemberRow = Schema.transform(
  Schema.Struct({
    user_id: Schema.NullOr(Schema.String),
    email: Schema.String,
    role: Role,
    status: MemberStatus,
    created_at: Timestamp,
    joined_at: Schema.NullOr(Timestamp),
    cap_amount: Schema.NullOr(Int8),
    cap_period: Schema.NullOr(CapPeriod),
    month_spent: Schema.NullOr(Int8),
    total_spent: Schema.NullOr(Int8)
  }),
  Schema.typeSchema(Member),
  {
    strict: true,
    // The member's shape differs from the row's: the constructor checks it (cap within its bounds).
    decode: (row) =>
      new Member({
        user_id: row.user_id,
        email: row.email,
        role: row.role,
        status: row.status,
        invited_at: row.created_at,
        joined_at: row.joined_at,
        cap: row.cap_amount === null || row.cap_period === null ? null : { amount: row.cap_amount, period: row.cap_period },
        spent: { month: row.month_spent ?? 0, total: row.total_spent ?? 0 }
      }),
    encode: (member) => ({
      user_id: member.user_id,
      email: member.email,
      role: member.role,
      status: member.status,
      created_at: member.invited_at,
      joined_at: member.joined_at,
      cap_amount: member.cap?.amount ?? null,
      cap_period: member.cap?.period ?? null,
      month_spent: member.spent.month,
      total_spent: member.spent.total
    })
  }
)

const Invitation = Schema.Struct({
  orgId: Schema.String,
  email: Schema.String,
  role: Role,
  invitedBy: Schema.String,
  at: Timestamp
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const memberColumns = sql`m.user_id, m.email, m.role, m.status, m.created_at, m.joined_at, s.cap_amount, s.cap_period, s.total_spent,
                            CASE WHEN s.month_start = huddle_month_start(now()) THEN s.month_spent ELSE 0 END AS month_spent`
  const membersOf = sql`memberships m LEFT JOIN member_spending s ON s.org_id = m.org_id AND s.user_id = m.user_id`

  const insert = SqlSchema.void({
    Request: Schema.Struct({ org: OrganizationRow, creator: Schema.Struct({ userId: Schema.String, email: Schema.String }) }),
    execute: ({ creator, org }) =>
      Effect.zipRight(
        sql`INSERT INTO organizations (id, name, slug, created_by, created_at)
            VALUES (${org.id}, ${org.name}, ${org.slug}, ${creator.userId}, ${org.created_at})`,
        sql`INSERT INTO memberships (org_id, email, user_id, role, status, invited_by, created_at, joined_at)
            VALUES (${org.id}, ${creator.email}, ${creator.userId}, 'admin', 'active', ${creator.userId},
                    ${org.created_at}, ${org.created_at})`
      )
  })
  const findById = SqlSchema.findOne({
    Request: Schema.String,
    Result: OrganizationRow,
    execute: (orgId) => sql`SELECT id, name, slug, created_at FROM organizations WHERE id = ${orgId}`
  })
  const members = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: Schema.String, ...pageFields }),
    Result: MemberRow,
    execute: ({ cursor, limit, orgId }) =>
      sql`SELECT ${memberColumns} FROM ${membersOf} WHERE m.org_id = ${orgId}
          ${cursor === undefined ? sql`` : sql`AND m.email > ${cursor}`}
          ORDER BY m.email LIMIT ${limit + 1}`
  })
  const findMember = SqlSchema.findOne({
    Request: Schema.Struct({ orgId: Schema.String, ref: Schema.String }),
    Result: MemberRow,
    execute: ({ orgId, ref }) =>
      sql`SELECT ${memberColumns} FROM ${membersOf}
          WHERE m.org_id = ${orgId} AND (m.user_id = ${ref} OR m.email = ${ref.toLowerCase()})`
  })
  const invite = SqlSchema.void({
    Request: Invitation,
    execute: ({ at, email, invitedBy, orgId, role }) =>
      sql`INSERT INTO memberships (org_id, email, user_id, role, status, invited_by, created_at)
          VALUES (${orgId}, ${email}, NULL, ${role}, 'pending', ${invitedBy}, ${at})`
  })
  const activateInvitations = SqlSchema.findAll({
    Request: Schema.Struct({ email: Schema.String, userId: Schema.String, at: Timestamp }),
    Result: Schema.Struct({ org_id: Schema.String }),
    execute: ({ at, email, userId }) =>
      sql`UPDATE memberships SET user_id = ${userId}, status = 'active', joined_at = ${at}
          WHERE email = ${email} AND status = 'pending' RETURNING org_id`
  })
  const counts = SqlSchema.single({
    Request: Schema.String,
    Result: Schema.Struct({ members: Int8, pending: Int8 }),
    execute: (orgId) =>
      sql`SELECT count(*) FILTER (WHERE status = 'active')::bigint AS members,
                 count(*) FILTER (WHERE status = 'pending')::bigint AS pending
          FROM memberships WHERE org_id = ${orgId}`
  })

  return OrganizationRepository.of({
    create: (org, creator) => insert({ org, creator }).pipe(conflictOnDuplicate("An organization with this slug exists")),
    findById: (orgId) => Effect.orDie(findById(orgId)),
    delete: (orgId) =>
      Effect.gen(function*() {
        // Lets the audit trigger accept this org's rows going with it (and nothing else).
        yield* sql`SELECT set_config('huddle.deleting_org', ${orgId}, true)`
        yield* sql`DELETE FROM credit_accounts WHERE owner_type = 'org' AND owner_id = ${orgId}`
        yield* sql`DELETE FROM organizations WHERE id = ${orgId}`
      }).pipe(sql.withTransaction, Effect.orDie),
    members: (orgId, { cursor, limit }) => Effect.orDie(members({ orgId, cursor, limit })),
    findMember: (orgId, ref) => Effect.orDie(findMember({ orgId, ref })),
    invite: (invitation) => invite(invitation).pipe(conflictOnDuplicate("This email is already a member or invited")),
    activateInvitations: (email, userId, at) =>
      activateInvitations({ email, userId, at }).pipe(Effect.map((rows) => rows.map((row) => row.org_id)), Effect.orDie),
    // Statements that read nothing back (or only how many rows they found).
    setRole: (orgId, email, role) =>
      sql`UPDATE memberships SET role = ${role} WHERE org_id = ${orgId} AND email = ${email}`.pipe(Effect.asVoid, Effect.orDie),
    removeMember: (orgId, email) =>
      sql`DELETE FROM memberships WHERE org_id = ${orgId} AND email = ${email}`.pipe(Effect.asVoid, Effect.orDie),
    lockAdmins: (orgId) =>
      sql`SELECT user_id FROM memberships
          WHERE org_id = ${orgId} AND role = 'admin' AND status = 'active'
          FOR UPDATE`.pipe(Effect.map((rows) => rows.length), Effect.orDie),
    counts: (orgId) => Effect.orDie(counts(orgId))
  })
})

export const layer = Layer.effect(OrganizationRepository, make)
