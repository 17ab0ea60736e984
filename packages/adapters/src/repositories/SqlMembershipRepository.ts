import * as SqlClient from "@effect/sql/SqlClient"
import { OrgMembership, type Role } from "@huddle/domain/orgs/Membership"
import { MembershipRepository } from "@huddle/domain/orgs/MembershipRepository"
import { Effect, Layer, Option } from "effect"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return MembershipRepository.of({
    listForUser: (userId) =>
      sql<{ id: string; name: string; slug: string; role: Role }>`
        SELECT o.id, o.name, o.slug, m.role
        FROM memberships m JOIN organizations o ON o.id = m.org_id
        WHERE m.user_id = ${userId} AND m.status = 'active'
        ORDER BY m.joined_at, o.id`.pipe(
        Effect.map((rows) => rows.map((row) => new OrgMembership(row, { disableValidation: true }))),
        Effect.orDie
      ),
    roleOf: (userId, orgId) =>
      sql<{ role: Role }>`SELECT role FROM memberships
                          WHERE org_id = ${orgId} AND user_id = ${userId} AND status = 'active'`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.role)),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(MembershipRepository, make)
