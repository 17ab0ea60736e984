import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Transactor } from "@huddle/domain/shared/Transactor"
import { Effect, Layer } from "effect"
import { ChangeFeed } from "../cache/ChangeFeed.js"

const isSqlError = (error: unknown): error is SqlError => error instanceof SqlError

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const feed = yield* ChangeFeed
  return Transactor.of({
    // A transaction that cannot begin or commit is an infrastructure defect, not a domain error.
    // Whatever it wrote, this instance's caches forget what they hold once it has ended.
    atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(effect).pipe(
        Effect.catchIf(isSqlError, Effect.die),
        Effect.ensuring(Effect.sync(() => feed.wrote()))
      ) as Effect.Effect<A, E, R>
  })
})

export const layer = Layer.effect(Transactor, make)
