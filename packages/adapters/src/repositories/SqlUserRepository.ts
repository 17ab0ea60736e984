import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { UserRepository } from "@huddle/domain/accounts/UserRepository"
import { Effect, Layer, Option, Schema } from "effect"
import { conflictOnDuplicate, UserRow, userRowWith } from "./Rows.js"

const NewUser = Schema.Struct({ user: UserRow, passwordHash: Schema.String })
const UserWithHash = userRowWith({ password_hash: Schema.String })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = SqlSchema.void({
    Request: NewUser,
    execute: ({ passwordHash, user }) =>
      sql`INSERT INTO users (id, email, password_hash, created_at)
          VALUES (${user.id}, ${user.email}, ${passwordHash}, ${user.created_at})`
  })
  const findByEmail = SqlSchema.findOne({
    Request: Schema.String,
    Result: UserWithHash,
    execute: (email) => sql`SELECT id, email, created_at, password_hash FROM users WHERE email = ${email}`
  })
  const findById = SqlSchema.findOne({
    Request: Schema.String,
    Result: UserRow,
    execute: (id) => sql`SELECT id, email, created_at FROM users WHERE id = ${id}`
  })

  return UserRepository.of({
    create: (user, passwordHash) =>
      insert({ user, passwordHash }).pipe(conflictOnDuplicate("An account with this email already exists")),
    findByEmail: (email) =>
      findByEmail(email).pipe(
        Effect.map(Option.map((row) => ({ user: row.value, passwordHash: row.password_hash }))),
        Effect.orDie
      ),
    findById: (id) => Effect.orDie(findById(id)),
    setPasswordHash: (id, passwordHash) =>
      sql`UPDATE users SET password_hash = ${passwordHash} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.effect(UserRepository, make)
