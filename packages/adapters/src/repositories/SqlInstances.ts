import * as SqlClient from "@effect/sql/SqlClient"
import { Ids } from "@huddle/domain/shared/Ids"
import { Instances } from "@huddle/domain/instances/Instances"
import { Duration, Effect, Layer } from "effect"

/**
 * This instance, known to the others by its heartbeat row (written by the first heartbeat). When
 * the layer is released (a clean stop, with nothing left running) its heartbeat is set to the
 * distant past, so that whatever it might still hold is given back at the others' next look.
 * Times are the database's, so that instances whose clocks disagree still agree on who is late.
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const id = yield* (yield* Ids).next("ins")

  yield* Effect.addFinalizer(() =>
    sql`UPDATE instances SET heartbeat_at = '-infinity' WHERE id = ${id}`.pipe(
      Effect.catchAll((error) => Effect.logWarning("could not deregister this instance").pipe(Effect.annotateLogs("cause", error.message)))
    )
  )

  return Instances.of({
    id,
    heartbeat: sql`INSERT INTO instances (id, started_at, heartbeat_at) VALUES (${id}, now(), now())
                   ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`.pipe(Effect.asVoid, Effect.orDie),
    lost: (staleAfter) =>
      sql<{ id: string }>`
        SELECT id FROM instances
        WHERE id <> ${id} AND heartbeat_at < now() - make_interval(secs => ${Duration.toMillis(staleAfter) / 1000})`.pipe(
        Effect.map((rows) => rows.map((row) => row.id)),
        Effect.orDie
      ),
    forget: (ids) =>
      ids.length === 0 ? Effect.void : sql`DELETE FROM instances WHERE id IN ${sql.in(ids)}`.pipe(Effect.asVoid, Effect.orDie)
  })
})

export const layer = Layer.scoped(Instances, make)
