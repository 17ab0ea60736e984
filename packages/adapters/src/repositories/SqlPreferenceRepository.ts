import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { PreferenceRepository } from "@huddle/domain/settings/PreferenceRepository"
import { Effect, Layer, Option, Schema } from "effect"
import { Jsonb } from "./Rows.js"

/** A row of `user_preferences`: the user's document. */
const PreferencesRow = Schema.Struct({ preferences: Jsonb(Preferences) })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A user without a row has the empty document's preferences (decoded once).
  const none = yield* Effect.orDie(Schema.decodeUnknown(Preferences)({}))

  const find = SqlSchema.findOne({
    Request: Schema.String,
    Result: PreferencesRow,
    execute: (userId) => sql`SELECT preferences FROM user_preferences WHERE user_id = ${userId}`
  })
  const upsert = SqlSchema.void({
    Request: Schema.Struct({ userId: Schema.String, preferences: Schema.parseJson(Preferences) }),
    execute: ({ preferences, userId }) =>
      sql`INSERT INTO user_preferences (user_id, preferences, updated_at)
          VALUES (${userId}, ${preferences}::jsonb, now())
          ON CONFLICT (user_id) DO UPDATE SET preferences = EXCLUDED.preferences, updated_at = EXCLUDED.updated_at`
  })

  return PreferenceRepository.of({
    get: (userId) =>
      find(userId).pipe(Effect.map(Option.match({ onNone: () => none, onSome: (row) => row.preferences })), Effect.orDie),
    put: (userId, preferences) => Effect.orDie(upsert({ userId, preferences }))
  })
})

export const layer = Layer.effect(PreferenceRepository, make)
