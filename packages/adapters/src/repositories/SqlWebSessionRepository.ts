import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { WebSessionRepository } from "@huddle/domain/accounts/WebSessionRepository"
import { Effect, Layer, Option, Schema } from "effect"
import { Timestamp, toDate, userRowWith } from "./Rows.js"

/** A session to write into `web_sessions` (its token is kept as its hash only). */
const NewWebSession = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  prefix: Schema.String,
  tokenHash: Schema.String,
  createdAt: Timestamp,
  expiresAt: Timestamp
})

/** An active session's user, with the session's own columns (under `session_` names where they would collide). */
const ActiveSessionRow = userRowWith({ session_id: Schema.String, token_hash: Schema.String })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.void({
    Request: NewWebSession,
    execute: (session) =>
      sql`INSERT INTO web_sessions (id, user_id, prefix, token_hash, created_at, expires_at)
          VALUES (${session.id}, ${session.userId}, ${session.prefix}, ${session.tokenHash},
                  ${session.createdAt}, ${session.expiresAt})`
  })
  const findActive = SqlSchema.findOne({
    Request: Schema.Struct({ prefix: Schema.String, now: Timestamp }),
    Result: ActiveSessionRow,
    execute: ({ now, prefix }) =>
      sql`SELECT s.id AS session_id, s.token_hash, u.id, u.email, u.created_at
          FROM web_sessions s JOIN users u ON u.id = s.user_id
          WHERE s.prefix = ${prefix} AND s.revoked_at IS NULL AND s.expires_at > ${now}`
  })

  return WebSessionRepository.of({
    create: (session) => Effect.orDie(insert(session)),
    findActive: (prefix, now) =>
      findActive({ prefix, now }).pipe(
        Effect.map(Option.map((row) => ({ id: row.session_id, tokenHash: row.token_hash, user: row.value }))),
        Effect.orDie
      ),
    // Nothing read: plain statements.
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
