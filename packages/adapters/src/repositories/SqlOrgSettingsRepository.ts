import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { OrgPolicies } from "@huddle/domain/settings/Policy"
import { OrgSettingsRepository } from "@huddle/domain/orgs/OrgSettingsRepository"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { Effect, Layer, Option, Schema } from "effect"
import { Jsonb } from "./Rows.js"

/**
 * One org's settings document in a jsonb column, one row per org (an org without a row has the
 * schema's empty document, decoded once). Table and column are literals fixed in code, escaped
 * as identifiers.
 */
const jsonbSettings = <A, I>(
  sql: SqlClient.SqlClient,
  table: "org_policies" | "org_preferences",
  column: "policies" | "preferences",
  schema: Schema.Schema<A, I>
) =>
  Effect.gen(function*() {
    const none = yield* Effect.orDie(Schema.decodeUnknown(schema)({}))
    const find = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ settings: Jsonb(schema) }),
      execute: (orgId) => sql`SELECT ${sql(column)} AS settings FROM ${sql(table)} WHERE org_id = ${orgId}`
    })
    const upsert = SqlSchema.void({
      Request: Schema.Struct({ orgId: Schema.String, settings: Schema.parseJson(schema), by: Schema.String }),
      execute: ({ by, orgId, settings }) =>
        sql`INSERT INTO ${sql(table)} (org_id, ${sql(column)}, updated_by, updated_at)
            VALUES (${orgId}, ${settings}::jsonb, ${by}, now())
            ON CONFLICT (org_id) DO UPDATE
            SET ${sql(column)} = EXCLUDED.${sql(column)}, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`
    })
    return {
      get: (orgId: string): Effect.Effect<A> =>
        find(orgId).pipe(Effect.map(Option.match({ onNone: () => none, onSome: (row) => row.settings })), Effect.orDie),
      put: (orgId: string, settings: A, by: string): Effect.Effect<void> => Effect.orDie(upsert({ orgId, settings, by }))
    }
  })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const policies = yield* jsonbSettings(sql, "org_policies", "policies", OrgPolicies)
  const defaults = yield* jsonbSettings(sql, "org_preferences", "preferences", Preferences)

  return OrgSettingsRepository.of({
    policies: policies.get,
    putPolicies: policies.put,
    defaults: defaults.get,
    putDefaults: defaults.put
  })
})

export const layer = Layer.effect(OrgSettingsRepository, make)
