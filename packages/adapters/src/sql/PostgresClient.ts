/**
 * `@effect/sql-pg` against a PostgreSQL server, with BIGINT read as JS numbers (as on PGlite).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { ConfigError } from "effect/ConfigError"
import { Duration, Layer, type Redacted } from "effect"
import pg from "pg"

const INT8 = 20

export interface Options {
  readonly url: Redacted.Redacted
  readonly maxConnections?: number | undefined
}

export const layer = (options: Options): Layer.Layer<SqlClient.SqlClient, SqlError | ConfigError> =>
  PgClient.layer({
    url: options.url,
    maxConnections: options.maxConnections ?? 10,
    connectTimeout: Duration.seconds(5),
    applicationName: "huddle",
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8 && format !== "binary" ? Number : pg.types.getTypeParser(oid, format as "text")) as any
    }
  })
