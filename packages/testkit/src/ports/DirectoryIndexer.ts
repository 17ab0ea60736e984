/**
 * A small real indexer for tests: it walks a directory with `fs`, classifies files by name,
 * skips binaries, vendored directories, large files and symlinks that lead out, and makes one
 * chunk per file (no definitions, imports or test links). What changed is told by content hash.
 * Enough to drive connecting, indexing, storage and re-indexing end to end; not the service's
 * indexer.
 */
import { createHash } from "node:crypto"
import { promises as fs } from "node:fs"
import * as path from "node:path"
import { type Changes, IndexFailed, type Progress, RepositoryIndexer } from "@huddle/domain/grounding/RepositoryIndexer"
import { Chunk, type FileCategory, IndexedFile, SkippedFile, type SkipReason, Snapshot } from "@huddle/domain/grounding/Snapshot"
import { Duration, Effect, Layer } from "effect"

export interface Options {
  /** Waits this long after each file, so that a test can watch a run in progress. */
  readonly perFile?: Duration.DurationInput | undefined
  /** Told when a run starts and ends (tests count runs, and check that they never overlap). */
  readonly onRun?: {
    readonly started: (root: string) => void
    readonly ended: (root: string) => void
  } | undefined
}

const vendored = new Set(["node_modules", "vendor", "third_party"])
const maxBytes = 1024 * 1024

const languages: Readonly<Record<string, string>> = {
  ".ts": "typescript",
  ".tsx": "typescript",
  ".js": "javascript",
  ".mjs": "javascript",
  ".py": "python",
  ".md": "markdown",
  ".json": "json",
  ".yaml": "yaml",
  ".yml": "yaml",
  ".toml": "toml"
}

export const categoryOf = (file: string): FileCategory => {
  const base = path.posix.basename(file)
  const ext = path.posix.extname(file)
  if (/(^|\/)(test|tests|__tests__)\//.test(file) || /\.(test|spec)\.[^.]+$/.test(base)) return "test"
  if ([".md", ".rst", ".txt", ".adoc"].includes(ext) || file.startsWith("docs/")) return "docs"
  if ([".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf"].includes(ext) || base.startsWith(".") || base === "Dockerfile" || base === "Makefile") {
    return "config"
  }
  return "source"
}

const linesOf = (text: string) => text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0)

interface Found {
  readonly files: Array<{ readonly path: string; readonly absolute: string }>
  readonly skipped: Array<SkippedFile>
}

/** Every file under `root`, relative with `/` separators, sorted; `.git` is not looked at. */
const walk = async (root: string): Promise<Found> => {
  const found: Found = { files: [], skipped: [] }
  const visit = async (dir: string, prefix: string) => {
    const entries = (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))
    for (const entry of entries) {
      const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`
      const absolute = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (entry.name === ".git") continue
        if (vendored.has(entry.name)) found.skipped.push(new SkippedFile({ path: relative, reason: "vendored" }))
        else await visit(absolute, relative)
      } else if (entry.isSymbolicLink()) {
        const target = await fs.realpath(absolute).catch(() => undefined)
        const inside = target !== undefined && !path.relative(root, target).startsWith("..")
        // A link inside the repository is indexed under its target's own path.
        if (!inside) found.skipped.push(new SkippedFile({ path: relative, reason: "outside_root" }))
      } else if (entry.isFile()) {
        found.files.push({ path: relative, absolute })
      }
    }
  }
  await visit(root, "")
  return found
}

const sha1 = (bytes: Buffer) => createHash("sha1").update(bytes).digest("hex")

export const make = (options: Options = {}): RepositoryIndexer["Type"] => ({
  index: (root, previous, progress) =>
    Effect.gen(function*() {
      options.onRun?.started(root)
      const realRoot = yield* Effect.tryPromise({
        try: () => fs.realpath(root),
        catch: () => new IndexFailed({ message: "The repository's directory cannot be read" })
      })
      const found = yield* Effect.tryPromise({
        try: () => walk(realRoot),
        catch: (error) => new IndexFailed({ message: `Listing the repository failed: ${String(error)}` })
      })
      const files: Array<IndexedFile> = []
      const chunks: Array<Chunk> = []
      const skipped: Array<SkippedFile> = [...found.skipped]
      const state: Progress = { seen: found.skipped.length, indexed: 0, skipped: found.skipped.length }
      for (const file of found.files) {
        const bytes = yield* Effect.promise(() => fs.readFile(file.absolute).catch(() => undefined))
        let reason: SkipReason | undefined
        if (bytes === undefined) reason = "unreadable"
        else if (bytes.length > maxBytes) reason = "too_large"
        else if (bytes.subarray(0, 8000).includes(0)) reason = "binary"
        if (reason !== undefined || bytes === undefined) {
          skipped.push(new SkippedFile({ path: file.path, reason: reason ?? "unreadable" }))
          Object.assign(state, { seen: state.seen + 1, skipped: state.skipped + 1 })
        } else {
          const text = bytes.toString("utf8")
          const lines = linesOf(text)
          files.push(
            new IndexedFile({
              path: file.path,
              category: categoryOf(file.path),
              language: languages[path.posix.extname(file.path)] ?? "text",
              lines,
              bytes: bytes.length,
              hash: sha1(bytes)
            })
          )
          chunks.push(new Chunk({ path: file.path, start_line: 1, end_line: Math.max(lines, 1), text }))
          Object.assign(state, { seen: state.seen + 1, indexed: state.indexed + 1 })
        }
        yield* progress({ ...state })
        if (options.perFile !== undefined) yield* Effect.sleep(options.perFile)
      }
      const before = new Map((previous?.files ?? []).map((file) => [file.path, file.hash]))
      const after = new Set(files.map((file) => file.path))
      const changed: Changes = {
        added: files.filter((file) => !before.has(file.path)).map((file) => file.path),
        changed: files.filter((file) => before.has(file.path) && before.get(file.path) !== file.hash).map((file) => file.path),
        removed: [...before.keys()].filter((file) => !after.has(file))
      }
      const snapshot = new Snapshot({ files, skipped, chunks, definitions: [], imports: [], links: [] })
      return { snapshot, changed }
    }).pipe(Effect.ensuring(Effect.sync(() => options.onRun?.ended(root))))
})

export const layer = (options: Options = {}) => Layer.succeed(RepositoryIndexer, make(options))
