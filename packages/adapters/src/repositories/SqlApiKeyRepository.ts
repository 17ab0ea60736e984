import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { ApiKey } from "@huddle/domain/identity/ApiKey"
import { ApiKeyRepository } from "@huddle/domain/identity/ApiKeyRepository"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { pageFields, tableRow, Timestamp, toDate, userRowWith } from "./Rows.js"

/** A row of `api_keys`, as its owner sees it (never the token's hash). */
const ApiKeyRow = tableRow(ApiKey, { created_at: Timestamp, last_used_at: Schema.NullOr(Timestamp) })

/** An active key's user, with the key's own columns (under `key_` names where they would collide). */
const ActiveKeyRow = userRowWith({ key_id: Schema.String, org_id: Schema.NullOr(Schema.String), token_hash: Schema.String })

/** A revocation: of one key (`id`), of the keys bound to an org (`orgId`), or of every key of the user. */
const Revocation = Schema.Struct({
  userId: Schema.String,
  at: Timestamp,
  id: Schema.optional(Schema.String),
  orgId: Schema.optional(Schema.String)
})

/** `last_used_at` is kept to the minute: a write per request would cost more than it tells. */
const touchResolutionMs = 60_000

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const keyColumns = sql`id, name, prefix, last_four, org_id, created_at, last_used_at`

  const insert = SqlSchema.void({
    Request: Schema.Struct({ key: ApiKeyRow, userId: Schema.String, tokenHash: Schema.String }),
    execute: ({ key, tokenHash, userId }) =>
      sql`INSERT INTO api_keys (id, user_id, org_id, name, prefix, last_four, token_hash, created_at)
          VALUES (${key.id}, ${userId}, ${key.org_id}, ${key.name}, ${key.prefix}, ${key.last_four},
                  ${tokenHash}, ${key.created_at})`
  })
  const listForUser = SqlSchema.findAll({
    Request: Schema.Struct({ userId: Schema.String, ...pageFields }),
    Result: ApiKeyRow,
    execute: ({ cursor, limit, userId }) =>
      sql`SELECT ${keyColumns} FROM api_keys
          WHERE user_id = ${userId} AND revoked_at IS NULL
          ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
          ORDER BY id DESC LIMIT ${limit + 1}`
  })
  const findActive = SqlSchema.findOne({
    Request: Schema.String,
    Result: ActiveKeyRow,
    execute: (prefix) =>
      sql`SELECT k.id AS key_id, k.org_id, k.token_hash, u.id, u.email, u.created_at
          FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE k.prefix = ${prefix} AND k.revoked_at IS NULL`
  })
  const revoke = SqlSchema.findAll({
    Request: Revocation,
    Result: ApiKeyRow,
    execute: ({ at, id, orgId, userId }) =>
      sql`UPDATE api_keys SET revoked_at = ${at}
          WHERE user_id = ${userId} AND revoked_at IS NULL
          ${id === undefined ? sql`` : sql`AND id = ${id}`}
          ${orgId === undefined ? sql`` : sql`AND org_id = ${orgId}`}
          RETURNING ${keyColumns}`
  })

  return ApiKeyRepository.of({
    create: (key) => Effect.orDie(insert(key)),
    listForUser: (userId, { cursor, limit }) => Effect.orDie(listForUser({ userId, cursor, limit })),
    findActive: (prefix) =>
      findActive(prefix).pipe(
        Effect.map(Option.map((row) => ({ id: row.key_id, orgId: row.org_id, tokenHash: row.token_hash, user: row.value }))),
        Effect.orDie
      ),
    revoke: (userId, id, at) => revoke({ userId, id, at }).pipe(Effect.map((keys) => Option.fromNullable(keys[0])), Effect.orDie),
    revokeAll: (userId, at) => Effect.orDie(revoke({ userId, at })),
    revokeBoundTo: (userId, orgId, at) => Effect.orDie(revoke({ userId, orgId, at })),
    // Nothing read: a plain statement.
    touch: (id, at) =>
      sql`UPDATE api_keys SET last_used_at = ${toDate(at)}
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${
        toDate(DateTime.subtract(at, { millis: touchResolutionMs }))
      })`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.effect(ApiKeyRepository, make)
