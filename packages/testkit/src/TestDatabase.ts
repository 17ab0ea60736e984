/**
 * Fresh databases for tests. PGlite starts from a migrated template (migrations run once per
 * test run, see `globalSetup`); PostgreSQL (when `TEST_DATABASE_URL` is set) gets a new,
 * uniquely named database per call, dropped again by `drop`.
 */
import { readFileSync } from "node:fs"
import { randomBytes } from "node:crypto"
import { PGlite } from "@electric-sql/pglite"
import { Database } from "@huddle/adapters"
import * as PgliteTemplate from "@huddle/adapters/sql/PgliteTemplate"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import pg from "pg"

export type EngineName = "pglite" | "postgres"

/**
 * The engines a contract suite (`*.contract.test.ts`) runs on: `HUDDLE_TEST_ENGINES` when set
 * (`npm run test:postgres` sets `postgres`), otherwise PGlite, plus PostgreSQL when
 * `TEST_DATABASE_URL` is set.
 */
export const availableEngines = (): ReadonlyArray<EngineName> => {
  const named = process.env.HUDDLE_TEST_ENGINES
  if (named) return named.split(",").map((name) => name.trim()).filter((name): name is EngineName => name === "pglite" || name === "postgres")
  return process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"]
}

export const templateEnvVar = "HUDDLE_TEST_TEMPLATE"

/** A migrated PGlite data directory as a tarball (the same template the server ships). */
export const buildTemplate = (): Promise<Blob> =>
  PgliteTemplate.dump.pipe(
    Effect.map((bytes) => new Blob([bytes])),
    Effect.orDie,
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.runPromise
  )

let template: Promise<Blob> | undefined

const loadTemplate = (): Promise<Blob> => {
  if (!template) {
    const path = process.env[templateEnvVar]
    template = path ? Promise.resolve(new Blob([readFileSync(path)])) : buildTemplate()
  }
  return template
}

export interface FreshDatabase {
  readonly engine: Database.Engine
  /** Removes what `fresh` created (a PostgreSQL database); nothing for PGlite. */
  readonly drop: () => Promise<void>
}

const adminUrl = () => {
  const url = process.env.TEST_DATABASE_URL
  if (!url) throw new Error("TEST_DATABASE_URL is not set")
  return url
}

const withAdmin = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: adminUrl() })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** The template with `setupSql` run on it, as a new tarball. */
const templateWith = async (setupSql: string): Promise<Blob> => {
  const db = await PGlite.create({ loadDataDir: await loadTemplate() })
  try {
    await db.exec(setupSql)
    return await db.dumpDataDir("none")
  } finally {
    await db.close()
  }
}

/**
 * A fresh, migrated database. `setupSql` runs on it before it is handed out: a test can give the
 * schema something the code does not expect (a constraint it breaks, say) to provoke a defect.
 */
export const fresh = async (engine: EngineName = "pglite", setupSql?: string): Promise<FreshDatabase> => {
  if (engine === "pglite") {
    const loadDataDir = setupSql === undefined ? await loadTemplate() : await templateWith(setupSql)
    return { engine: { _tag: "Pglite", loadDataDir }, drop: async () => {} }
  }
  const name = `huddle_test_${randomBytes(6).toString("hex")}`
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(adminUrl())
  url.pathname = `/${name}`
  if (setupSql !== undefined) {
    // The setup needs the tables: the database layer migrates as it starts.
    await Effect.runPromise(
      Effect.void.pipe(
        Effect.provide(Database.layer({ _tag: "Postgres", url: Redacted.make(url.toString()) })),
        Logger.withMinimumLogLevel(LogLevel.Warning)
      )
    )
    const client = new pg.Client({ connectionString: url.toString() })
    await client.connect()
    try {
      await client.query(setupSql)
    } finally {
      await client.end()
    }
  }
  return {
    engine: { _tag: "Postgres", url: Redacted.make(url.toString()) },
    drop: () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)
  }
}

/** A database layer over a fresh database, for tests below the HTTP level. */
export const layer = (engine: EngineName = "pglite") =>
  Layer.unwrapScoped(
    Effect.acquireRelease(Effect.promise(() => fresh(engine)), (db) => Effect.promise(() => db.drop())).pipe(
      Effect.map((db) => Database.layer(db.engine))
    )
  )
