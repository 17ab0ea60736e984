/**
 * Repository connections and their snapshots in SQL, shared by every instance. The lease is two
 * columns of the connection row, taken and given back by single conditional UPDATEs (atomic on
 * both engines; a lease held by a dead instance lapses at its expiry, by the database's clock).
 * Storing a run applies the delta in one transaction, after checking, under a row lock, that the
 * lease is still the job's.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { IndexChanges, IndexProgress, RepositoryConnection } from "@huddle/domain/grounding/RepositoryConnection"
import { type Lease, RepositoryStore } from "@huddle/domain/grounding/RepositoryStore"
import { Duration, Effect, Layer, Option } from "effect"
import { toDate, utc, utcOrNull } from "../repositories/Rows.js"
import { applyDelta, readCounts, readFile, readSnapshot } from "./SqlSnapshotRows.js"

interface ConnectionRow {
  readonly id: string
  readonly workspace_id: string
  readonly source: "path" | "git"
  readonly location: string
  readonly status: "pending" | "indexing" | "ready" | "failed"
  readonly error: string | null
  readonly seen: number
  readonly indexed: number
  readonly skipped: number
  readonly added: number | null
  readonly changed: number | null
  readonly removed: number | null
  readonly index_version: number
  readonly requested: number
  readonly served: number
  readonly connected_by: string | null
  readonly connected_at: Date
  readonly started_at: Date | null
  readonly finished_at: Date | null
}

const fromRow = (row: ConnectionRow) =>
  new RepositoryConnection({
    id: row.id,
    workspace_id: row.workspace_id,
    source: row.source,
    location: row.location,
    status: row.status,
    error: row.error,
    progress: new IndexProgress({ seen: row.seen, indexed: row.indexed, skipped: row.skipped }, { disableValidation: true }),
    changes: row.added === null
      ? null
      : new IndexChanges({ added: row.added, changed: row.changed ?? 0, removed: row.removed ?? 0 }, { disableValidation: true }),
    index_version: row.index_version,
    requested: row.requested,
    served: row.served,
    connected_by: row.connected_by,
    connected_at: utc(row.connected_at),
    started_at: utcOrNull(row.started_at),
    finished_at: utcOrNull(row.finished_at)
  }, { disableValidation: true })

const seconds = (duration: Duration.Duration) => Duration.toMillis(duration) / 1000

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`id, workspace_id, source, location, status, error, seen, indexed, skipped, added, changed, removed,
                      index_version, requested, served, connected_by, connected_at, started_at, finished_at`

  const one = (rows: ReadonlyArray<ConnectionRow>) => Option.map(Option.fromNullable(rows[0]), fromRow)
  const held = (lease: Lease) => sql`id = ${lease.repositoryId} AND lease_holder = ${lease.holder}`
  const expiry = (lease: Lease) => sql`now() + make_interval(secs => ${seconds(lease.duration)})`
  const touched = (rows: ReadonlyArray<unknown>) => rows.length > 0

  return RepositoryStore.of({
    connect: (connection) =>
      sql.withTransaction(
        Effect.zipRight(
          sql`DELETE FROM repositories WHERE workspace_id = ${connection.workspace_id}`,
          sql`INSERT INTO repositories (id, workspace_id, source, location, status, requested, served, connected_by, connected_at)
              VALUES (${connection.id}, ${connection.workspace_id}, ${connection.source}, ${connection.location},
                      ${connection.status}, ${connection.requested}, ${connection.served}, ${connection.connected_by},
                      ${toDate(connection.connected_at)})`
        )
      ).pipe(Effect.asVoid, Effect.orDie),
    disconnect: (workspaceId) =>
      sql`DELETE FROM repositories WHERE workspace_id = ${workspaceId} RETURNING id`.pipe(Effect.map(touched), Effect.orDie),
    find: (workspaceId) =>
      sql<ConnectionRow>`SELECT ${columns} FROM repositories WHERE workspace_id = ${workspaceId}`.pipe(Effect.map(one), Effect.orDie),
    findById: (repositoryId) =>
      sql<ConnectionRow>`SELECT ${columns} FROM repositories WHERE id = ${repositoryId}`.pipe(Effect.map(one), Effect.orDie),
    findMany: (workspaceIds) =>
      workspaceIds.length === 0
        ? Effect.succeed([])
        : sql<ConnectionRow>`SELECT ${columns} FROM repositories WHERE workspace_id IN ${sql.in(workspaceIds)}`.pipe(
          Effect.map((rows) => rows.map(fromRow)),
          Effect.orDie
        ),
    requestIndex: (workspaceId) =>
      sql<ConnectionRow>`
        UPDATE repositories SET requested = requested + 1,
          status = CASE WHEN status = 'indexing' AND lease_expires_at > now() THEN 'indexing' ELSE 'pending' END
        WHERE workspace_id = ${workspaceId} RETURNING ${columns}`.pipe(Effect.map(one), Effect.orDie),
    waiting: sql<{ id: string }>`
      SELECT id FROM repositories WHERE requested > served AND (lease_holder IS NULL OR lease_expires_at < now())
      ORDER BY id`.pipe(Effect.map((rows) => rows.map((row) => row.id)), Effect.orDie),
    ids: sql<{ id: string }>`SELECT id FROM repositories`.pipe(Effect.map((rows) => rows.map((row) => row.id)), Effect.orDie),

    claim: (lease) =>
      sql<ConnectionRow>`
        UPDATE repositories SET lease_holder = ${lease.holder}, lease_expires_at = ${expiry(lease)}
        WHERE id = ${lease.repositoryId} AND requested > served
          AND (lease_holder IS NULL OR lease_expires_at < now() OR lease_holder = ${lease.holder})
        RETURNING ${columns}`.pipe(Effect.map(one), Effect.orDie),
    renew: (lease) =>
      sql`UPDATE repositories SET lease_expires_at = ${expiry(lease)} WHERE ${held(lease)} RETURNING id`.pipe(
        Effect.map(touched),
        Effect.orDie
      ),
    releaseIfIdle: (lease) =>
      sql`UPDATE repositories SET lease_holder = NULL, lease_expires_at = NULL
          WHERE ${held(lease)} AND requested <= served RETURNING id`.pipe(Effect.map(touched), Effect.orDie),
    release: (lease) =>
      sql`UPDATE repositories SET lease_holder = NULL, lease_expires_at = NULL WHERE ${held(lease)}`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),

    started: (lease, at) =>
      sql`UPDATE repositories SET status = 'indexing', error = NULL, seen = 0, indexed = 0, skipped = 0, started_at = ${toDate(at)}
          WHERE ${held(lease)} RETURNING id`.pipe(Effect.map(touched), Effect.orDie),
    progress: (lease, progress) =>
      sql`UPDATE repositories SET seen = ${progress.seen}, indexed = ${progress.indexed}, skipped = ${progress.skipped}
          WHERE ${held(lease)}`.pipe(Effect.asVoid, Effect.orDie),
    store: (lease, run) =>
      sql.withTransaction(
        Effect.gen(function*() {
          const locked = yield* sql<{ index_version: number }>`
            SELECT index_version FROM repositories WHERE ${held(lease)} FOR UPDATE`
          if (locked[0] === undefined) return false
          const version = locked[0].index_version + 1
          yield* applyDelta(sql, lease.repositoryId, version, run.delta)
          yield* sql`
            UPDATE repositories SET status = 'ready', error = NULL, index_version = ${version}, served = ${run.served},
              seen = ${run.progress.seen}, indexed = ${run.progress.indexed}, skipped = ${run.progress.skipped},
              added = ${run.changes.added}, changed = ${run.changes.changed}, removed = ${run.changes.removed},
              finished_at = ${toDate(run.at)}
            WHERE id = ${lease.repositoryId}`
          return true
        })
      ).pipe(Effect.orDie),
    failed: (lease, run) =>
      sql`UPDATE repositories SET status = 'failed', error = ${run.error}, served = ${run.served}, finished_at = ${toDate(run.at)}
          WHERE ${held(lease)} RETURNING id`.pipe(Effect.map(touched), Effect.orDie),

    snapshot: (repositoryId) => readSnapshot(sql, repositoryId).pipe(Effect.orDie),
    counts: (repositoryId) => readCounts(sql, repositoryId).pipe(Effect.orDie),
    file: (repositoryId, path, range) => readFile(sql, repositoryId, path, range).pipe(Effect.orDie)
  })
})

export const layer = Layer.effect(RepositoryStore, make)
