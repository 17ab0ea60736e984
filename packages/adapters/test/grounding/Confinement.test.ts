/**
 * No file outside a repository's directory is ever read, even while its files are swapped for
 * symlinks leading out during indexing: another process swaps them back and forth (atomic
 * renames) while the indexer runs again and again, and no run may hold the outside text. Then the
 * same window reached on purpose: a file swapped for a link out just before it is opened.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { hooks } from "@huddle/adapters/grounding/ConfinedFiles"
import { indexRepository } from "@huddle/adapters/grounding/Indexer"
import { LinkSwapper } from "@huddle/testkit"

const outside = realpathSync(mkdtempSync(join(tmpdir(), "huddle-race-outside-")))
const secret = `OUTSIDE_SECRET_${process.pid}`
writeFileSync(join(outside, "secret.ts"), `export const key = "${secret}"\n`)
const made: Array<string> = [outside]
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

const files = 4

/** A repository of `files` plain source files under `src/`. */
const repository = () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-race-")))
  made.push(root)
  mkdirSync(join(root, "src"))
  for (let i = 0; i < files; i++) writeFileSync(join(root, "src", `f${i}.ts`), `export const inside${i} = ${i}\n`)
  return root
}

describe("reading only inside the repository", () => {
  it("holds no outside text in any run while files are swapped for links out, over a few seconds of swaps", async () => {
    const root = repository()
    let swapped = false
    const swaps = LinkSwapper.swap(Array.from({ length: files }, (_, i) => join(root, "src", `f${i}.ts`)), join(outside, "secret.ts"), 4000).finally(() => (swapped = true))
    let runs = 0
    let sawLinks = 0
    const leaks: Array<string> = []
    while (!swapped) {
      const { snapshot } = await indexRepository(root, { useGit: false, definitions: async () => [] })
      runs++
      if (snapshot.skipped.some((file) => file.reason === "outside_root")) sawLinks++
      for (const chunk of snapshot.chunks) if (chunk.text.includes(secret)) leaks.push(`run ${runs}: ${chunk.path}`)
    }
    const total = await swaps
    // The race was run: many swaps, and runs that met a file as a link leading out (skipped as such).
    expect(total).toBeGreaterThan(200)
    expect(runs).toBeGreaterThan(10)
    expect(sawLinks).toBeGreaterThan(0)
    expect(leaks, `${leaks.length} leaks in ${runs} runs over ${total} swaps`).toEqual([])
  }, 30_000)

  it("does not read a file swapped for a link out just before it is opened (the window reached on purpose)", async () => {
    const root = repository()
    hooks.beforeOpen = (absolute) => {
      if (!absolute.endsWith("f2.ts")) return
      unlinkSync(absolute)
      symlinkSync(join(outside, "secret.ts"), absolute)
    }
    try {
      const { snapshot } = await indexRepository(root, { useGit: false, definitions: async () => [] })
      expect(snapshot.chunks.filter((chunk) => chunk.text.includes(secret))).toEqual([])
      expect(snapshot.skipped.map((file) => [file.path, file.reason])).toEqual([["src/f2.ts", "outside_root"]])
      expect(snapshot.files).toHaveLength(files - 1)
    } finally {
      hooks.beforeOpen = undefined
    }
  })

  it("does not list a directory swapped for a link out just before it is opened, nor read a .gitignore swapped so", async () => {
    const root = repository()
    mkdirSync(join(root, "src", "sub"))
    writeFileSync(join(root, "src", "sub", "inner.ts"), "export const inner = 1\n")
    writeFileSync(join(root, ".gitignore"), "*.log\n")
    hooks.beforeOpen = (absolute) => {
      if (absolute.endsWith("/sub")) {
        rmSync(absolute, { recursive: true })
        symlinkSync(outside, absolute)
      } else if (absolute.endsWith(".gitignore")) {
        unlinkSync(absolute)
        // Were it read, this would ignore the repository's files.
        writeFileSync(join(outside, "ignore-all"), "*\n")
        symlinkSync(join(outside, "ignore-all"), absolute)
      }
    }
    try {
      const { snapshot } = await indexRepository(root, { useGit: false, definitions: async () => [] })
      const seen = [...snapshot.files.map((file) => file.path), ...snapshot.skipped.map((file) => file.path)]
      expect(seen.filter((path) => path.includes("secret") || path.includes("ignore-all"))).toEqual([])
      expect(snapshot.files).toHaveLength(files)
      // The .gitignore, now a link out, is a file leading outside; the directory, now a link out, is not listed.
      expect(snapshot.skipped.map((file) => [file.path, file.reason])).toEqual([[".gitignore", "outside_root"], ["src/sub/", "unreadable"]])
    } finally {
      hooks.beforeOpen = undefined
    }
  })

  it("fails a run whose root leads outside the directory that was checked", async () => {
    const checked = repository()
    const root = join(repository(), "moved")
    symlinkSync(outside, root)
    await expect(indexRepository(root, { useGit: false, within: checked })).rejects.toMatchObject({
      _tag: "IndexError",
      message: `${root} leads outside the directory that was checked`
    })
  })
})
