import * as SqlClient from "@effect/sql/SqlClient"
import { ApiKey } from "@huddle/domain/identity/ApiKey"
import { ApiKeyRepository } from "@huddle/domain/identity/ApiKeyRepository"
import { DateTime, Effect, Layer, Option } from "effect"
import { toDate, userFromRow, type UserRow, utc, utcOrNull } from "./Rows.js"

interface KeyRow {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly last_four: string
  readonly org_id: string | null
  readonly created_at: Date
  readonly last_used_at: Date | null
}

const keyFromRow = (row: KeyRow) =>
  new ApiKey({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    last_four: row.last_four,
    org_id: row.org_id,
    created_at: utc(row.created_at),
    last_used_at: utcOrNull(row.last_used_at)
  }, { disableValidation: true })

/** `last_used_at` is kept to the minute: a write per request would cost more than it tells. */
const touchResolutionMs = 60_000

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return ApiKeyRepository.of({
    create: ({ key, tokenHash, userId }) =>
      sql`INSERT INTO api_keys (id, user_id, org_id, name, prefix, last_four, token_hash, created_at)
          VALUES (${key.id}, ${userId}, ${key.org_id}, ${key.name}, ${key.prefix}, ${key.last_four},
                  ${tokenHash}, ${toDate(key.created_at)})`.pipe(Effect.asVoid, Effect.orDie),
    listForUser: (userId, { cursor, limit }) =>
      sql<KeyRow>`SELECT id, name, prefix, last_four, org_id, created_at, last_used_at FROM api_keys
                  WHERE user_id = ${userId} AND revoked_at IS NULL
                  ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
                  ORDER BY id DESC LIMIT ${limit + 1}`.pipe(
        Effect.map((rows) => rows.map(keyFromRow)),
        Effect.orDie
      ),
    findActive: (prefix) =>
      sql<UserRow & { id: string; org_id: string | null; token_hash: string }>`
        SELECT k.id, k.org_id, k.token_hash, u.id AS user_id, u.email AS user_email, u.created_at AS user_created_at
        FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.prefix = ${prefix} AND k.revoked_at IS NULL`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (row) => ({
            id: row.id,
            orgId: row.org_id,
            tokenHash: row.token_hash,
            user: userFromRow(row)
          }))
        ),
        Effect.orDie
      ),
    revoke: (userId, id, at) =>
      sql<KeyRow>`UPDATE api_keys SET revoked_at = ${toDate(at)}
          WHERE id = ${id} AND user_id = ${userId} AND revoked_at IS NULL
          RETURNING id, name, prefix, last_four, org_id, created_at, last_used_at`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), keyFromRow)),
        Effect.orDie
      ),
    revokeAll: (userId, at) =>
      sql<KeyRow>`UPDATE api_keys SET revoked_at = ${toDate(at)}
          WHERE user_id = ${userId} AND revoked_at IS NULL
          RETURNING id, name, prefix, last_four, org_id, created_at, last_used_at`.pipe(
        Effect.map((rows) => rows.map(keyFromRow)),
        Effect.orDie
      ),
    revokeBoundTo: (userId, orgId, at) =>
      sql<KeyRow>`UPDATE api_keys SET revoked_at = ${toDate(at)}
          WHERE user_id = ${userId} AND org_id = ${orgId} AND revoked_at IS NULL
          RETURNING id, name, prefix, last_four, org_id, created_at, last_used_at`.pipe(
        Effect.map((rows) => rows.map(keyFromRow)),
        Effect.orDie
      ),
    touch: (id, at) =>
      sql`UPDATE api_keys SET last_used_at = ${toDate(at)}
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${
        toDate(DateTime.subtract(at, { millis: touchResolutionMs }))
      })`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.effect(ApiKeyRepository, make)
