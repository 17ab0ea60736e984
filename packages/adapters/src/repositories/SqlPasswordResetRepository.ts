import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { PasswordResetRepository } from "@huddle/domain/accounts/PasswordResetRepository"
import { UserId } from "@huddle/domain/identity/User"
import { Effect, Layer, Option, Schema } from "effect"
import { Timestamp, toDate } from "./Rows.js"

/** A reset to write into `password_resets` (its token is kept as its hash only). */
const NewReset = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  prefix: Schema.String,
  tokenHash: Schema.String,
  createdAt: Timestamp,
  expiresAt: Timestamp
})

/** A pending reset's row: whose it is, and the hash to check a token against. */
const PendingRow = Schema.Struct({ id: Schema.String, user_id: UserId, token_hash: Schema.String })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // A new reset replaces the user's pending ones.
  const insert = SqlSchema.void({
    Request: NewReset,
    execute: (reset) =>
      sql.withTransaction(Effect.zipRight(
        sql`UPDATE password_resets SET used_at = ${reset.createdAt} WHERE user_id = ${reset.userId} AND used_at IS NULL`,
        sql`INSERT INTO password_resets (id, user_id, prefix, token_hash, created_at, expires_at)
            VALUES (${reset.id}, ${reset.userId}, ${reset.prefix}, ${reset.tokenHash}, ${reset.createdAt}, ${reset.expiresAt})`
      ))
  })
  const findPending = SqlSchema.findOne({
    Request: Schema.Struct({ prefix: Schema.String, now: Timestamp }),
    Result: PendingRow,
    execute: ({ now, prefix }) =>
      sql`SELECT id, user_id, token_hash FROM password_resets
          WHERE prefix = ${prefix} AND used_at IS NULL AND expires_at > ${now}`
  })

  return PasswordResetRepository.of({
    create: (reset) => Effect.orDie(insert(reset)),
    findPending: (prefix, now) =>
      findPending({ prefix, now }).pipe(
        Effect.map(Option.map((row) => ({ id: row.id, userId: row.user_id, tokenHash: row.token_hash }))),
        Effect.orDie
      ),
    // Whether this call used it: nothing read but that a row matched.
    consume: (id, at) =>
      sql`UPDATE password_resets SET used_at = ${toDate(at)} WHERE id = ${id} AND used_at IS NULL RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(PasswordResetRepository, make)
