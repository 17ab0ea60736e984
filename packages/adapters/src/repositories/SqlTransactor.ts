import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Transactor } from "@huddle/domain/ports/Transactor"
import { Effect, Layer } from "effect"

const isSqlError = (error: unknown): error is SqlError => error instanceof SqlError

export const make = Effect.map(SqlClient.SqlClient, (sql) =>
  Transactor.of({
    // A transaction that cannot begin or commit is an infrastructure defect, not a domain error.
    atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(effect).pipe(Effect.catchIf(isSqlError, Effect.die)) as Effect.Effect<A, E, R>
  }))

export const layer = Layer.effect(Transactor, make)
