import * as SqlClient from "@effect/sql/SqlClient"
import { OrgPolicies } from "@huddle/domain/settings/Policy"
import { OrgSettingsRepository } from "@huddle/domain/orgs/OrgSettingsRepository"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { Effect, Layer, Schema } from "effect"

/**
 * One org's settings document in a jsonb column, one row per org (an org without a row has the
 * schema's empty document). Table and column are literals fixed in code, escaped as identifiers.
 */
const jsonbSettings = <A, I>(
  sql: SqlClient.SqlClient,
  table: "org_policies" | "org_preferences",
  column: "policies" | "preferences",
  schema: Schema.Schema<A, I>
) => {
  const decode = Schema.decodeUnknown(schema)
  const encode = Schema.encode(schema)
  return {
    get: (orgId: string): Effect.Effect<A> =>
      sql<{ settings: unknown }>`SELECT ${sql(column)} AS settings FROM ${sql(table)} WHERE org_id = ${orgId}`.pipe(
        Effect.flatMap((rows) => decode(rows[0]?.settings ?? {})),
        Effect.orDie
      ),
    put: (orgId: string, settings: A, by: string): Effect.Effect<void> =>
      encode(settings).pipe(
        Effect.flatMap((encoded) =>
          sql`INSERT INTO ${sql(table)} (org_id, ${sql(column)}, updated_by, updated_at)
              VALUES (${orgId}, ${JSON.stringify(encoded)}::jsonb, ${by}, now())
              ON CONFLICT (org_id) DO UPDATE
              SET ${sql(column)} = EXCLUDED.${sql(column)}, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`
        ),
        Effect.asVoid,
        Effect.orDie
      )
  }
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const policies = jsonbSettings(sql, "org_policies", "policies", OrgPolicies)
  const defaults = jsonbSettings(sql, "org_preferences", "preferences", Preferences)

  return OrgSettingsRepository.of({
    policies: policies.get,
    putPolicies: policies.put,
    defaults: defaults.get,
    putDefaults: defaults.put
  })
})

export const layer = Layer.effect(OrgSettingsRepository, make)
