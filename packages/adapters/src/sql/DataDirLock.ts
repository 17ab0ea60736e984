/**
 * One process at a time on an embedded data directory. PGlite is a whole PostgreSQL inside the
 * process, and two of them on one directory overwrite each other's writes: a charge lost from the
 * ledger, a directory that no longer opens. Before the database opens, the process takes
 * `huddle.lock` in the directory (made exclusively, holding its pid and a token of its own) and
 * keeps its time fresh while it lives; the file goes when the database has closed.
 *
 * A lock is its holder's while its time is fresh, whatever pids say: pids do not tell a dead
 * process from a live one in another container on the same volume. A killed process's lock goes
 * stale `staleMs` after its last refresh, and the next start waits for that rather than refusing.
 * A stale lock is replaced only if it is still the one read, and whoever replaced it checks a
 * moment later that it is still theirs, so that processes taking it over together do not both
 * hold it. (`proper-lockfile` does the same with a directory, but loads `signal-exit`, whose
 * SIGTERM handler kills the process once the runtime's own handler has run: a clean stop became
 * a kill.)
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

export const lockName = "huddle.lock"

/** A lock not refreshed for this long is a dead process's; it is refreshed four times as often. */
const staleMs = 10_000
const refreshMs = 2_500
/** How long a process that took or replaced the lock waits before it checks the lock is still its own. */
const settleMs = 50

/** A refusal of ours: its message says it all (no cause to chain after it). */
class Refused extends Error {}

/** The directories this process holds (a second open within the process is refused too). */
const held = new Set<string>()

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

const read = (file: string) => {
  try {
    return readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

/** One try: taken (to be checked), or held by someone whose lock is fresh (its content). */
const tryTake = (file: string, mine: string): { readonly taken: true } | { readonly taken: false; readonly owner: string } => {
  try {
    writeFileSync(file, mine, { flag: "wx" })
    return { taken: true }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
  }
  const owner = read(file) ?? ""
  let age: number
  try {
    age = Date.now() - statSync(file).mtimeMs
  } catch {
    return { taken: false, owner } // gone meanwhile: the next try creates it
  }
  if (age < staleMs) return { taken: false, owner }
  // Stale: replaced, unless it changed since it was read (someone else replaced it first).
  const next = `${file}.${randomBytes(6).toString("hex")}`
  writeFileSync(next, mine)
  if (read(file) !== owner) {
    rmSync(next, { force: true })
    return { taken: false, owner: read(file) ?? "" }
  }
  renameSync(next, file)
  return { taken: true }
}

const pidOf = (owner: string) => /^(\d+) /.exec(owner)?.[1]

/**
 * The lock could not be kept (removed, or taken as stale while this process was stalled): the
 * database must not be written to any more, so the process stops.
 */
const lost = (dataDir: string) => {
  process.stderr.write(`${JSON.stringify({ message: "the data directory's lock was lost; stopping", logLevel: "FATAL", annotations: { data_dir: dataDir } })}\n`)
  process.exit(1)
}

/** Takes the directory for this process, for as long as the scope is open. */
export const hold = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        mkdirSync(dataDir, { recursive: true })
        const key = realpathSync(dataDir)
        if (held.has(key)) throw new Refused(`The data directory ${dataDir} is already open in this process: one database at a time may open it`)
        const file = join(dataDir, lockName)
        const mine = `${process.pid} ${randomBytes(12).toString("hex")}`
        let owner = ""
        // Long enough for a killed process's lock to go stale.
        for (const deadline = Date.now() + staleMs + refreshMs; Date.now() < deadline;) {
          const attempt = tryTake(file, mine)
          if (attempt.taken) {
            await sleep(settleMs)
            if (read(file) === mine) {
              held.add(key)
              const refresh = setInterval(() => {
                if (read(file) !== mine) return lost(dataDir)
                const now = new Date()
                utimesSync(file, now, now)
              }, refreshMs)
              refresh.unref()
              return { key, file, mine, refresh }
            }
            owner = read(file) ?? ""
          } else {
            owner = attempt.owner
          }
          await sleep(500)
        }
        const pid = pidOf(owner)
        throw new Refused(
          `The data directory ${dataDir} is in use by ${pid === undefined ? "another process" : `process ${pid}`}: one process at a time may open it (stop that process first)`
        )
      },
      catch: (cause) =>
        cause instanceof Refused
          ? new SqlError({ cause: undefined, message: cause.message })
          : new SqlError({ cause, message: `Failed to lock the data directory ${dataDir}` })
    }),
    ({ file, key, mine, refresh }) =>
      Effect.sync(() => {
        clearInterval(refresh)
        if (read(file) === mine) rmSync(file, { force: true })
        held.delete(key)
      })
  )
