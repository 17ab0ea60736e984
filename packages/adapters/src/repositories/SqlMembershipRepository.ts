import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { OrgMembership, Role } from "@huddle/domain/orgs/Membership"
import { MembershipRepository } from "@huddle/domain/orgs/MembershipRepository"
import { Effect, Layer, Option, Schema } from "effect"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const listForUser = SqlSchema.findAll({
    Request: Schema.String,
    // The org as one of its members sees it: its columns are the class's own.
    Result: OrgMembership,
    execute: (userId) =>
      sql`SELECT o.id, o.name, o.slug, m.role
          FROM memberships m JOIN organizations o ON o.id = m.org_id
          WHERE m.user_id = ${userId} AND m.status = 'active'
          ORDER BY m.joined_at, o.id`
  })
  const roleOf = SqlSchema.findOne({
    Request: Schema.Struct({ userId: Schema.String, orgId: Schema.String }),
    Result: Schema.Struct({ role: Role }),
    execute: ({ orgId, userId }) =>
      sql`SELECT role FROM memberships WHERE org_id = ${orgId} AND user_id = ${userId} AND status = 'active'`
  })

  return MembershipRepository.of({
    listForUser: (userId) => Effect.orDie(listForUser(userId)),
    roleOf: (userId, orgId) => roleOf({ userId, orgId }).pipe(Effect.map(Option.map((row) => row.role)), Effect.orDie)
  })
})

export const layer = Layer.effect(MembershipRepository, make)
