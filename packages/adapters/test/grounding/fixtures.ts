/** Small repositories written to temporary directories, and git run in them. */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

export type Entry = string | Buffer | { readonly symlink: string }

const made: Array<string> = []

/** A new temporary directory holding `entries` (path → content, or a symlink to a target). */
export const repository = (entries: Readonly<Record<string, Entry>>): string => {
  const root = mkdtempSync(join(tmpdir(), "huddle-index-"))
  made.push(root)
  write(root, entries)
  return root
}

export const write = (root: string, entries: Readonly<Record<string, Entry>>): void => {
  for (const [path, entry] of Object.entries(entries)) {
    const absolute = join(root, path)
    mkdirSync(dirname(absolute), { recursive: true })
    if (typeof entry === "object" && !Buffer.isBuffer(entry)) symlinkSync(entry.symlink, absolute)
    else writeFileSync(absolute, entry)
  }
}

export const git = (root: string, ...args: Array<string>): string =>
  execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", ...args], {
    cwd: root,
    encoding: "utf8"
  })

export const removeAll = (): void => {
  for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true })
}

/** `count` numbered lines: `line 1` … `line N`. */
export const numberedLines = (count: number): Array<string> => Array.from({ length: count }, (_, i) => `line ${i + 1}`)
