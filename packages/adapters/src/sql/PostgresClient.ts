/**
 * `@effect/sql-pg` against a PostgreSQL server, with BIGINT read as JS numbers (as on PGlite).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { ConfigError } from "effect/ConfigError"
import { Duration, Layer, Redacted } from "effect"
import pg from "pg"

const INT8 = 20

export interface Options {
  readonly url: Redacted.Redacted
  readonly maxConnections?: number | undefined
}

/** How long a new connection may take before the attempt fails (and the request gets a 503). */
export const connectTimeout = Duration.seconds(3)

/**
 * How long a query may go unanswered on an open connection before the client gives up on it: a
 * database (or network) that stops answering must not hold requests for the minutes TCP takes
 * to notice. Far above any query Huddle makes; `query_timeout` in the URL overrides it.
 */
export const queryTimeout = Duration.seconds(10)

/** The URL with `pg`'s client-side `query_timeout` (milliseconds) unless the URL sets one. */
const withQueryTimeout = (url: Redacted.Redacted): Redacted.Redacted => {
  const value = Redacted.value(url)
  let parsed: URL
  try {
    parsed = new URL(value)
  } catch {
    return url
  }
  if (parsed.searchParams.has("query_timeout")) return url
  parsed.searchParams.set("query_timeout", String(Duration.toMillis(queryTimeout)))
  return Redacted.make(parsed.toString())
}

export const layer = (options: Options): Layer.Layer<SqlClient.SqlClient, SqlError | ConfigError> =>
  PgClient.layer({
    url: withQueryTimeout(options.url),
    maxConnections: options.maxConnections ?? 10,
    connectTimeout,
    applicationName: "huddle",
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8 && format !== "binary" ? Number : pg.types.getTypeParser(oid, format as "text")) as any
    }
  })
