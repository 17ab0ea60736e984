/**
 * One process at a time on an embedded data directory (`DataDirLock`), with real processes: a
 * lock left stale by a killed process, taken over by several starting at once, is held by one
 * of them at a time; a fresh one is not taken.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

const run = promisify(execFile)
const root = fileURLToPath(new URL("../../..", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "huddle-lock-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * A process that tries to take the directory at `at` (all of them at the same moment, whenever
 * each started), holds it for `holdMs`, then says when it held it (or why it could not).
 */
const contender = (holdMs: number, at = 0) =>
  run(process.execPath, [
    "--input-type=module",
    "-e",
    `import { Effect } from "effect"
     import { hold } from "@huddle/adapters/sql/DataDirLock"
     await new Promise((done) => setTimeout(done, Math.max(0, ${at} - Date.now())))
     const held = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
       yield* hold(${JSON.stringify(dir)})
       const from = Date.now()
       yield* Effect.sleep(${holdMs})
       return { from, to: Date.now() }
     })).pipe(Effect.catchAll((error) => Effect.succeed({ refused: error.message }))))
     console.log(JSON.stringify(held))`
  ], { cwd: root, timeout: 60_000 }).then(({ stdout }) => JSON.parse(stdout) as { from: number; to: number } | { refused: string })

describe("the data directory's lock", () => {
  it("is held by one process at a time when several take over a stale lock together", async () => {
    // Left by a process killed a minute ago.
    const lock = join(dir, "huddle.lock")
    writeFileSync(lock, "999999 stale")
    const past = new Date(Date.now() - 60_000)
    utimesSync(lock, past, past)

    const at = Date.now() + 3_000
    const held = await Promise.all([1, 2, 3, 4, 5, 6].map(() => contender(400, at)))
    const spans = held.flatMap((h) => "from" in h ? [h] : []).sort((a, b) => a.from - b.from)
    expect(spans.length, JSON.stringify(held)).toBeGreaterThanOrEqual(1)
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.from, JSON.stringify(spans)).toBeGreaterThanOrEqual(spans[i - 1]!.to)
  }, 60_000)

  it("is not taken while its holder keeps it fresh", async () => {
    const holder = contender(14_000)
    await new Promise((done) => setTimeout(done, 1_000))
    const other = await contender(100)
    expect(other).toEqual({ refused: expect.stringContaining("is in use by process") })
    expect(await holder).toHaveProperty("from")
  }, 60_000)
})
