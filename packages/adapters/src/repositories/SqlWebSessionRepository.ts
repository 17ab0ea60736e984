import * as SqlClient from "@effect/sql/SqlClient"
import { WebSessionRepository } from "@huddle/domain/accounts/WebSessionRepository"
import { Effect, Layer, Option } from "effect"
import { toDate, userFromRow, type UserRow } from "./Rows.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return WebSessionRepository.of({
    create: (session) =>
      sql`INSERT INTO web_sessions (id, user_id, prefix, token_hash, created_at, expires_at)
          VALUES (${session.id}, ${session.userId}, ${session.prefix}, ${session.tokenHash},
                  ${toDate(session.createdAt)}, ${toDate(session.expiresAt)})`.pipe(Effect.asVoid, Effect.orDie),
    findActive: (prefix, now) =>
      sql<UserRow & { id: string; token_hash: string }>`
        SELECT s.id, s.token_hash, u.id AS user_id, u.email AS user_email, u.created_at AS user_created_at
        FROM web_sessions s JOIN users u ON u.id = s.user_id
        WHERE s.prefix = ${prefix} AND s.revoked_at IS NULL AND s.expires_at > ${toDate(now)}`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (row) => ({
            id: row.id,
            tokenHash: row.token_hash,
            user: userFromRow(row)
          }))
        ),
        Effect.orDie
      ),
    revoke: (id, at) =>
      sql`UPDATE web_sessions SET revoked_at = ${toDate(at)} WHERE id = ${id} AND revoked_at IS NULL`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    revokeAllForUser: (userId, at, except) =>
      sql<{ id: string }>`
        UPDATE web_sessions SET revoked_at = ${toDate(at)}
        WHERE user_id = ${userId} AND revoked_at IS NULL AND id <> ${except ?? ""}
        RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie)
  })
})

export const layer = Layer.effect(WebSessionRepository, make)
