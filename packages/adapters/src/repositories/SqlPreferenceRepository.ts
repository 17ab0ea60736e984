import * as SqlClient from "@effect/sql/SqlClient"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { PreferenceRepository } from "@huddle/domain/settings/PreferenceRepository"
import { Effect, Layer, Schema } from "effect"

const decode = Schema.decodeUnknown(Preferences)
const encode = Schema.encode(Preferences)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return PreferenceRepository.of({
    get: (userId) =>
      sql<{ preferences: unknown }>`SELECT preferences FROM user_preferences WHERE user_id = ${userId}`.pipe(
        Effect.flatMap((rows) => decode(rows[0]?.preferences ?? {})),
        Effect.orDie
      ),
    put: (userId, preferences) =>
      encode(preferences).pipe(
        Effect.flatMap((encoded) =>
          sql`INSERT INTO user_preferences (user_id, preferences, updated_at)
              VALUES (${userId}, ${JSON.stringify(encoded)}::jsonb, now())
              ON CONFLICT (user_id) DO UPDATE SET preferences = EXCLUDED.preferences, updated_at = EXCLUDED.updated_at`
        ),
        Effect.asVoid,
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(PreferenceRepository, make)
