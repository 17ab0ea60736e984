import * as SqlClient from "@effect/sql/SqlClient"
import { Conflict } from "@huddle/domain/shared/Errors"
import { UserRepository } from "@huddle/domain/accounts/UserRepository"
import { Effect, Layer, Option } from "effect"
import { isUniqueViolation, toDate, userFromRow, type UserRow } from "./Rows.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const select = sql`SELECT id AS user_id, email AS user_email, created_at AS user_created_at, password_hash FROM users`

  return UserRepository.of({
    create: (user, passwordHash) =>
      sql`INSERT INTO users (id, email, password_hash, created_at)
          VALUES (${user.id}, ${user.email}, ${passwordHash}, ${toDate(user.created_at)})`.pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(new Conflict({ message: "An account with this email already exists" }))
            : Effect.die(error))
      ),
    findByEmail: (email) =>
      sql<UserRow & { password_hash: string }>`${select} WHERE email = ${email}`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (row) => ({ user: userFromRow(row), passwordHash: row.password_hash }))
        ),
        Effect.orDie
      ),
    findById: (id) =>
      sql<UserRow>`${select} WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), userFromRow)),
        Effect.orDie
      ),
    setPasswordHash: (id, passwordHash) =>
      sql`UPDATE users SET password_hash = ${passwordHash} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.effect(UserRepository, make)
