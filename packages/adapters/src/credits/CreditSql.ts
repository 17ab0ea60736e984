/**
 * What the credit statements need, passed to each of them: the SQL client, the ids that key the
 * rows they write (chosen before a statement runs, so that it can be run again), and this
 * instance's id (recorded on the reservations and leases it holds, for the liveness sweep).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Instances } from "@huddle/domain/instances/Instances"
import { Ids, type Service as IdsService } from "@huddle/domain/shared/Ids"
import { Effect } from "effect"

export interface CreditSql {
  readonly sql: SqlClient.SqlClient
  readonly ids: IdsService
  readonly instance: string
}

export const make: Effect.Effect<CreditSql, never, SqlClient.SqlClient | Ids | Instances> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids = yield* Ids
  const instance = (yield* Instances).id
  return { sql, ids, instance }
})
