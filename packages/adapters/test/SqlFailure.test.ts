/**
 * The one decision behind 503 versus 500 for a storage failure. Real failures from both engines
 * (PGlite's and `pg`'s own error objects) and one row per SQLSTATE class the table names.
 */
import { PGlite } from "@electric-sql/pglite"
import * as PostgresClient from "@huddle/adapters/sql/PostgresClient"
import * as SqlFailure from "@huddle/adapters/sql/SqlFailure"
import { MigrationError } from "@effect/sql/Migrator"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Redacted } from "effect"
import { createServer } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/** What the database sends: `pg` and PGlite both give its fields to their error objects. */
const databaseError = (code: string, message = "from the database") =>
  new SqlError({ message: "Failed to execute statement", cause: Object.assign(new Error(message), { code, severity: "ERROR" }) })

const driverError = (message: string, code?: string) =>
  new SqlError({ message: "Failed to execute statement", cause: Object.assign(new Error(message), code ? { code } : {}) })

const table: ReadonlyArray<readonly [string, unknown, SqlFailure.Verdict]> = [
  ["08006 connection failure", databaseError("08006"), "unavailable"],
  ["08001 cannot connect", databaseError("08001"), "unavailable"],
  ["53300 too many connections", databaseError("53300"), "unavailable"],
  ["53100 disk full", databaseError("53100"), "unavailable"],
  ["57P01 admin shutdown", databaseError("57P01"), "unavailable"],
  ["57P03 cannot connect now (starting)", databaseError("57P03"), "unavailable"],
  ["57014 statement timeout", databaseError("57014"), "unavailable"],
  ["40001 serialization failure", databaseError("40001"), "unavailable"],
  ["40P01 deadlock", databaseError("40P01"), "unavailable"],
  ["55P03 lock not available", databaseError("55P03"), "unavailable"],
  ["58030 I/O error", databaseError("58030"), "unavailable"],
  ["23505 unique violation", databaseError("23505"), "bug"],
  ["23514 check violation", databaseError("23514"), "bug"],
  ["23503 foreign key violation", databaseError("23503"), "bug"],
  ["23502 not null violation", databaseError("23502"), "bug"],
  ["22003 numeric value out of range", databaseError("22003"), "bug"],
  ["22P02 invalid text representation", databaseError("22P02"), "bug"],
  ["42601 syntax error", databaseError("42601"), "bug"],
  ["42P01 undefined table", databaseError("42P01"), "bug"],
  ["42501 insufficient privilege", databaseError("42501"), "bug"],
  ["40002 integrity constraint at commit", databaseError("40002"), "bug"],
  ["XX000 internal error", databaseError("XX000"), "bug"],
  ["P0001 raised by a function", databaseError("P0001"), "bug"],
  // Huddle's own: a reservation past a member's cap; the credit store answers it before any edge.
  ["HC001 spending cap reached", databaseError("HC001"), "bug"],
  ["ECONNREFUSED", driverError("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"), "unavailable"],
  ["ECONNRESET", driverError("read ECONNRESET", "ECONNRESET"), "unavailable"],
  ["EPIPE (five letters, not a SQLSTATE)", driverError("write EPIPE", "EPIPE"), "unavailable"],
  ["pg: connection terminated", driverError("Connection terminated unexpectedly"), "unavailable"],
  ["pg: query read timeout", driverError("Query read timeout"), "unavailable"],
  ["pg-pool: connect timeout", driverError("timeout exceeded when trying to connect"), "unavailable"],
  ["sql-pg: pool cannot hand out a connection", new SqlError({ message: "Failed to acquire connection", cause: new Error("?") }), "unavailable"],
  ["PGlite closed", driverError("PGlite is closed"), "unavailable"],
  ["a driver-side bug (circular parameter)", driverError("circular reference detected while preparing \"x\" for query"), "bug"],
  ["an SqlError without a cause", new SqlError({ message: "Failed to execute statement" }), "bug"],
  ["a migration that cannot run", new MigrationError({ reason: "failed", message: "cannot migrate" }), "unavailable"],
  ["any other defect", new Error("boom"), "bug"],
  ["a tagged non-SQL defect", { _tag: "RedisError", message: "down" }, "bug"],
  ["not an error at all", "a string", "bug"]
]

describe("SqlFailure.classify", () => {
  it.each(table)("%s → %s", (_name, error, verdict) => {
    expect(SqlFailure.classify(error)).toBe(verdict)
  })

  describe("on real failures", () => {
    let db: PGlite
    const pgliteFailure = (statement: string) =>
      db.query(statement).then(
        () => {
          throw new Error(`expected ${statement} to fail`)
        },
        (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })
      )
    beforeAll(async () => {
      db = await PGlite.create()
      await db.exec("CREATE TABLE t (id int PRIMARY KEY, n int CHECK (n > 0), s text)")
      await db.exec("INSERT INTO t VALUES (1, 1, 'a')")
    })
    afterAll(() => db.close())

    it("takes integrity, data and syntax errors from the database for bugs", async () => {
      for (const [statement, state] of [
        ["INSERT INTO t VALUES (1, 1, 'b')", "23505"],
        ["INSERT INTO t VALUES (2, 0, 'b')", "23514"],
        ["INSERT INTO t VALUES (2, 99999999999, 'b')", "22003"],
        ["SELEKT 1", "42601"],
        ["DO $$ BEGIN RAISE EXCEPTION 'cap reached' USING ERRCODE = 'HC001'; END $$", "HC001"]
      ] as const) {
        const failure = await pgliteFailure(statement)
        expect(SqlFailure.sqlState(failure), statement).toBe(state)
        expect(SqlFailure.classify(failure), statement).toBe("bug")
      }
    })

    it("takes a closed embedded database and a refused connection for outages", async () => {
      const closed = await PGlite.create()
      await closed.close()
      const afterClose = await closed.query("SELECT 1").then(
        () => undefined,
        (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })
      )
      expect(SqlFailure.classify(afterClose)).toBe("unavailable")

      // A port that was just free: nothing listens there.
      const port = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, "127.0.0.1", () => {
          const address = probe.address()
          probe.close(() => resolve(typeof address === "object" && address ? address.port : 0))
        })
      })
      const refused = await Effect.runPromise(
        Layer.build(PostgresClient.layer({ url: Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres`) })).pipe(
          Effect.scoped,
          Effect.flip
        )
      )
      expect(SqlFailure.classify(refused)).toBe("unavailable")
    })
  })
})
