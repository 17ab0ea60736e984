/**
 * A migrated, empty PGlite data directory, built once at install time (`npm install` runs
 * `bin/buildPgliteTemplate`). A first start on a new data directory loads it instead of running
 * initdb and every migration, which takes several seconds off the first start.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { MigrationError } from "@effect/sql/Migrator"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { lockName } from "./DataDirLock.js"
import * as Migrations from "./Migrations.js"
import * as PgliteClient from "./PgliteClient.js"

/** Where the build puts the template: beside the compiled adapters. */
export const defaultPath = fileURLToPath(new URL("../pglite-template.tar", import.meta.url))

/** Migrates an in-memory PGlite and returns its data directory as a tarball. */
export const dump: Effect.Effect<Buffer, SqlError | MigrationError> = Effect.gen(function*() {
  const db = yield* PgliteClient.Pglite
  yield* Migrations.run
  const tarball = yield* Effect.promise(() => db.dumpDataDir("none"))
  return Buffer.from(yield* Effect.promise(() => tarball.arrayBuffer()))
}).pipe(Effect.provide(PgliteClient.layer({})), Effect.scoped)

/** Writes the template to `path`; returns its size in bytes. */
export const build = (path: string = defaultPath) =>
  Effect.flatMap(dump, (bytes) => Effect.sync(() => {
    writeFileSync(path, bytes)
    return bytes.length
  }))

/** Empty but for the lock of the process about to open it (`DataDirLock`). */
const isEmptyDir = (dir: string) => !existsSync(dir) || readdirSync(dir).every((name) => name.startsWith(lockName))

/** The template to start a new data directory from, when there is one and the directory is new. */
export const forNewDataDir = (dataDir: string, path: string = defaultPath): Blob | undefined =>
  isEmptyDir(dataDir) && existsSync(path) ? new Blob([readFileSync(path)]) : undefined
