/**
 * One process at a time on an embedded data directory. PGlite is a whole PostgreSQL inside the
 * process, and two of them on one directory overwrite each other's writes: a charge lost from the
 * ledger, a directory that no longer opens. Before the database opens, a file holding the
 * owner's pid is made exclusively (`wx`); it is removed when the database closes.
 *
 * A file left by a process that is gone (killed, crashed) is taken over at once: its pid is not
 * running, or it is this process's own (a container restarted with the same pid). A lock that
 * must expire to be taken over (a library's timed lock file) would make every restart after a
 * crash wait for it. A pid that now belongs to an unrelated process keeps the directory locked
 * until the operator removes the file, which the refusal names.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

export const fileName = "huddle.pid"

/** A refusal of ours: its message says it all (no cause to chain after it). */
class Refused extends Error {}

/** The directories this process holds (a second open within the process is refused too). */
const held = new Set<string>()

const running = (pid: number) => {
  if (pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Takes the directory for this process, for as long as the scope is open. */
export const hold = (dataDir: string) => {
  const file = join(dataDir, fileName)
  const key = resolve(dataDir)
  const mine = String(process.pid)
  return Effect.acquireRelease(
    Effect.try({
      try: () => {
        if (held.has(key)) throw new Refused(`The data directory ${dataDir} is already open in this process: one database at a time may open it`)
        mkdirSync(dataDir, { recursive: true })
        for (let attempt = 0; attempt < 3; attempt++) {
          try {
            writeFileSync(file, mine, { flag: "wx" })
            held.add(key)
            return
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
          }
          const owner = Number(readFileSync(file, "utf8").trim())
          if (Number.isSafeInteger(owner) && owner > 0 && running(owner)) {
            throw new Refused(
              `The data directory ${dataDir} is in use by process ${owner}: one process at a time may open it (stop that process first; if it is not Huddle, remove ${file})`
            )
          }
          // Left by a process that is gone: taken over (exclusively again, in case another is doing the same).
          rmSync(file, { force: true })
        }
        throw new Refused(`The data directory ${dataDir} could not be locked (${file} keeps coming back)`)
      },
      catch: (cause) =>
        cause instanceof Refused
          ? new SqlError({ cause: undefined, message: cause.message })
          : new SqlError({ cause, message: `Failed to lock the data directory ${dataDir}` })
    }),
    () =>
      Effect.sync(() => {
        held.delete(key)
        try {
          if (readFileSync(file, "utf8").trim() === mine) rmSync(file, { force: true })
        } catch {
          // Already gone.
        }
      })
  )
}
