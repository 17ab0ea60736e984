/**
 * Picks the storage engine: PostgreSQL when a URL is given, otherwise embedded PGlite
 * (persisted under a data directory, or in memory). Migrations are applied on start.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, type Redacted } from "effect"
import { type ChangeFeed } from "../cache/ChangeFeed.js"
import * as PostgresChangeFeed from "../cache/PostgresChangeFeed.js"
import * as Migrations from "./Migrations.js"
import * as PostgresClient from "./PostgresClient.js"

export type Engine =
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted; readonly maxConnections?: number | undefined }
  | { readonly _tag: "Pglite"; readonly dataDir?: string | undefined; readonly loadDataDir?: Blob | undefined }

const migrated = Layer.effectDiscard(Effect.orDie(Migrations.run))

/**
 * PGlite and its client, imported only when the embedded engine is chosen: a server on
 * PostgreSQL never loads them (their JavaScript is resident memory for nothing).
 */
const embedded = (engine: Extract<Engine, { readonly _tag: "Pglite" }>) =>
  Layer.unwrapEffect(
    Effect.promise(() => Promise.all([import("./PgliteClient.js"), import("./PgliteTemplate.js"), import("../cache/PgliteChangeFeed.js")])).pipe(
      Effect.map(([PgliteClient, PgliteTemplate, PgliteChangeFeed]) =>
        PgliteChangeFeed.layer.pipe(Layer.provideMerge(PgliteClient.layer({
          ...engine,
          loadDataDir: engine.loadDataDir ?? (engine.dataDir ? PgliteTemplate.forNewDataDir(engine.dataDir) : undefined)
        })))
      )
    )
  )

/** The client, migrated, and the feed of changed rows that invalidates the caches. */
export const layer = (engine: Engine): Layer.Layer<SqlClient | ChangeFeed> => {
  const client = engine._tag === "Postgres"
    ? Layer.merge(PostgresClient.layer(engine), PostgresChangeFeed.layer({ url: engine.url }))
    : embedded(engine)
  return Layer.provideMerge(migrated, client).pipe(Layer.orDie)
}

export const describe = (engine: Engine): string =>
  engine._tag === "Postgres" ? "postgresql" : engine.dataDir ? `pglite (${engine.dataDir})` : "pglite (in memory)"
