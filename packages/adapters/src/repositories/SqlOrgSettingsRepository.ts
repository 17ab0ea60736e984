import { SqlClient } from "@effect/sql"
import { OrgPolicies } from "@huddle/domain/Policy"
import { OrgSettingsRepository } from "@huddle/domain/ports/OrgSettingsRepository"
import { Preferences } from "@huddle/domain/Preferences"
import { Effect, Layer, Schema } from "effect"

const decodePolicies = Schema.decodeUnknown(OrgPolicies)
const decodePreferences = Schema.decodeUnknown(Preferences)
const json = (value: unknown) => JSON.stringify(value)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return OrgSettingsRepository.of({
    policies: (orgId) =>
      sql<{ policies: unknown }>`SELECT policies FROM org_policies WHERE org_id = ${orgId}`.pipe(
        Effect.flatMap((rows) => decodePolicies(rows[0]?.policies ?? {})),
        Effect.orDie
      ),
    putPolicies: (orgId, policies, by) =>
      Schema.encode(OrgPolicies)(policies).pipe(
        Effect.flatMap((encoded) =>
          sql`INSERT INTO org_policies (org_id, policies, updated_by, updated_at)
              VALUES (${orgId}, ${json(encoded)}::jsonb, ${by}, now())
              ON CONFLICT (org_id) DO UPDATE
              SET policies = EXCLUDED.policies, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`
        ),
        Effect.asVoid,
        Effect.orDie
      ),
    defaults: (orgId) =>
      sql<{ preferences: unknown }>`SELECT preferences FROM org_preferences WHERE org_id = ${orgId}`.pipe(
        Effect.flatMap((rows) => decodePreferences(rows[0]?.preferences ?? {})),
        Effect.orDie
      ),
    putDefaults: (orgId, defaults, by) =>
      Schema.encode(Preferences)(defaults).pipe(
        Effect.flatMap((encoded) =>
          sql`INSERT INTO org_preferences (org_id, preferences, updated_by, updated_at)
              VALUES (${orgId}, ${json(encoded)}::jsonb, ${by}, now())
              ON CONFLICT (org_id) DO UPDATE
              SET preferences = EXCLUDED.preferences, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`
        ),
        Effect.asVoid,
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(OrgSettingsRepository, make)
