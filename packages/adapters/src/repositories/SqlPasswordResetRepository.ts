import * as SqlClient from "@effect/sql/SqlClient"
import { PasswordResetRepository } from "@huddle/domain/accounts/PasswordResetRepository"
import type { UserId } from "@huddle/domain/identity/User"
import { Effect, Layer, Option } from "effect"
import { toDate } from "./Rows.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return PasswordResetRepository.of({
    create: (reset) =>
      sql.withTransaction(Effect.zipRight(
        sql`UPDATE password_resets SET used_at = ${toDate(reset.createdAt)} WHERE user_id = ${reset.userId} AND used_at IS NULL`,
        sql`INSERT INTO password_resets (id, user_id, prefix, token_hash, created_at, expires_at)
            VALUES (${reset.id}, ${reset.userId}, ${reset.prefix}, ${reset.tokenHash},
                    ${toDate(reset.createdAt)}, ${toDate(reset.expiresAt)})`
      )).pipe(Effect.asVoid, Effect.orDie),
    findPending: (prefix, now) =>
      sql<{ id: string; user_id: string; token_hash: string }>`
        SELECT id, user_id, token_hash FROM password_resets
        WHERE prefix = ${prefix} AND used_at IS NULL AND expires_at > ${toDate(now)}`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (row) => ({ id: row.id, userId: row.user_id as UserId, tokenHash: row.token_hash }))
        ),
        Effect.orDie
      ),
    consume: (id, at) =>
      sql<{ id: string }>`UPDATE password_resets SET used_at = ${toDate(at)} WHERE id = ${id} AND used_at IS NULL RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(PasswordResetRepository, make)
