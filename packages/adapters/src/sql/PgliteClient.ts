/**
 * An `@effect/sql` client over PGlite (PostgreSQL in WebAssembly, in-process). It compiles
 * statements exactly as `@effect/sql-pg` does, so repositories run unchanged on both engines.
 * PGlite has one backend: a semaphore gives it to one statement or one whole transaction at a
 * time, so that statements of different fibers never interleave inside a transaction.
 */
import { PGlite, types } from "@electric-sql/pglite"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { makeCompiler } from "@effect/sql-pg/PgClient"
import { Context, Effect, Layer, Stream } from "effect"
import * as DataDirLock from "./DataDirLock.js"

export interface Options {
  /** A directory to persist into; in memory when absent. */
  readonly dataDir?: string | undefined
  /** A `dumpDataDir` tarball to start from (a migrated template, for fast tests). */
  readonly loadDataDir?: Blob | undefined
}

/** The PGlite instance behind the client, for dumping a template or closing early. */
export class Pglite extends Context.Tag("@huddle/adapters/Pglite")<Pglite, PGlite>() {}

/** BIGINT columns (credits, counts) as JS numbers, as the PostgreSQL client is configured too. */
export const parsers = { [types.INT8]: (value: string) => Number(value) }

const failure = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

export const make = (options: Options) =>
  Effect.gen(function*() {
    // Before it opens, so that no second process ever writes to it; released after it closes.
    if (options.dataDir) yield* DataDirLock.hold(options.dataDir)
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          PGlite.create({
            ...(options.dataDir ? { dataDir: options.dataDir } : {}),
            ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
            parsers
          }),
        catch: (cause) => new SqlError({ cause, message: "Failed to open the embedded database" })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const backend = yield* Effect.makeSemaphore(1)

    const query = (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") =>
      Effect.tryPromise({ try: () => db.query<any>(sql, params as Array<unknown>, rowMode ? { rowMode } : {}), catch: failure })

    const execute: Connection["execute"] = (sql, params, transformRows) =>
      Effect.map(query(sql, params), (result) => transformRows ? transformRows(result.rows) : result.rows)

    const connection: Connection = {
      execute,
      executeRaw: (sql, params) => query(sql, params),
      executeValues: (sql, params) => Effect.map(query(sql, params, "array"), (result) => result.rows),
      // Parameterless unprepared statements may hold several commands (migrations).
      executeUnprepared: (sql, params, transformRows) =>
        params.length > 0
          ? execute(sql, params, transformRows)
          : Effect.tryPromise({ try: () => db.exec(sql), catch: failure }).pipe(
            Effect.map((results) => {
              const rows = (results.at(-1)?.rows ?? []) as ReadonlyArray<any>
              return transformRows ? transformRows(rows) : rows
            })
          ),
      executeStream: (sql, params, transformRows) => Stream.fromIterableEffect(execute(sql, params, transformRows))
    }

    const acquirer = Effect.acquireRelease(backend.take(1), () => backend.release(1)).pipe(Effect.as(connection))

    const client = yield* SqlClient.make({
      acquirer,
      transactionAcquirer: acquirer,
      compiler: makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"], ["db.engine", "pglite"]]
    })
    return { client, db }
  })

/** Provides `SqlClient` (and the raw `Pglite`) for the lifetime of the layer. */
export const layer = (options: Options): Layer.Layer<SqlClient.SqlClient | Pglite, SqlError> =>
  Layer.scopedContext(
    make(options).pipe(
      Effect.map(({ client, db }) => Context.make(SqlClient.SqlClient, client).pipe(Context.add(Pglite, db)))
    )
  ).pipe(Layer.provide(Reactivity.layer))
