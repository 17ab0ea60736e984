/**
 * Indexing a repository into a `Snapshot`: discover its files, skip what is not worth reading (with
 * the reason), classify the rest, cut them into line chunks, read their definitions, resolve the
 * imports between them and link tests to the sources they exercise.
 *
 * Incremental: given the previous snapshot, every file is read and hashed again (content, not
 * timestamps, decides), but only a file whose hash changed is chunked and parsed again; the others
 * keep their previous chunks and definitions. Imports and test links are recomputed from all files
 * (cheap: a lexical pass over text already read). The result says which paths were added, changed
 * and removed, so that storage can write only those.
 *
 * A vendored or build-output tree is reported once, as a skipped `dir/`, not file by file.
 */
import { createHash } from "node:crypto"
import { closeSync, lstatSync, readFileSync } from "node:fs"
import { stat } from "node:fs/promises"
import { join } from "node:path"
import {
  type Chunk,
  type Definition,
  IndexedFile,
  type SkipReason,
  SkippedFile,
  Snapshot
} from "@huddle/domain/grounding/Snapshot"
import { Data, Effect } from "effect"
import { chunk, splitLines } from "./Chunking.js"
import { isInside, openInside } from "./ConfinedFiles.js"
import { definitionsOf } from "./Definitions.js"
import { discover } from "./FileDiscovery.js"
import { categoryOf, defaultMaxFileBytes, languageOf, skipForContent, skipForDirectory, skipForPath } from "./FileRules.js"
import { type ImportFacts, importFactsOf, resolveImports } from "./Imports.js"
import { testLinks } from "./TestLinks.js"

export class IndexError extends Data.TaggedError("IndexError")<{
  readonly root: string
  readonly reason: "not_found" | "not_a_directory" | "unreadable"
  readonly message: string
}> {}

/** How far indexing has got: files found so far, and files read (indexed or skipped). */
export interface Progress {
  readonly seen: number
  readonly processed: number
}

export type DefinitionReader = (path: string, language: string, text: string) => Promise<ReadonlyArray<Definition>>

export interface IndexOptions {
  /** The snapshot of the last run: its chunks and definitions are kept for files whose content did not change. */
  readonly previous?: Snapshot | undefined
  /** Larger files are skipped as `too_large` (default 1 MiB). */
  readonly maxFileBytes?: number | undefined
  /** Called after discovery and then as files are read (every 100, and at the end). */
  readonly onProgress?: ((progress: Progress) => void) | undefined
  /** Reads a new or changed file's definitions (tree-sitter, else lexical, unless replaced). */
  readonly definitions?: DefinitionReader | undefined
  /** `false` walks the directory even in a git work tree. */
  readonly useGit?: boolean | undefined
  /**
   * The directory the root must be in when it is read (the real path the operator's rules were
   * checked against): a root swapped for a link leading elsewhere since fails the run instead of
   * being read.
   */
  readonly within?: string | undefined
}

export interface Changes {
  readonly added: ReadonlyArray<string>
  readonly changed: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
}

export interface IndexResult {
  readonly snapshot: Snapshot
  readonly changes: Changes
  /** Whether git listed the files or the directory was walked. */
  readonly source: "git" | "walk"
  /** The files chunked and parsed in this run; every other indexed file kept its previous chunks and definitions. */
  readonly reparsed: ReadonlyArray<string>
}

type Examined =
  | { readonly kind: "indexed"; readonly content: Buffer; readonly hash: string }
  | { readonly kind: "skipped"; readonly reason: SkipReason }
  | { readonly kind: "absent" }

const sliceMillis = 50

const absent: Examined = { kind: "absent" }
const skipped = (reason: SkipReason): Examined => ({ kind: "skipped", reason })

/**
 * One candidate: is it a file inside the root, worth reading, and what is it. The file is opened
 * once, what was opened is checked to be inside the root, and the content is read from that same
 * descriptor (`ConfinedFiles`): a link swapped in at any moment is either not followed out or not
 * read. Synchronous on purpose: sync calls cost a fraction of the thread-pool round trips of their
 * promise versions, and the caller yields to the event loop between slices of files.
 */
const examine = (root: string, path: string, maxBytes: number): Examined => {
  const absolute = join(root, path)
  const opened = openInside(root, absolute)
  if (opened.kind !== "opened") {
    if (opened.kind === "outside") return skipped("outside_root")
    // A link to nothing is unreadable; a path gone from the work tree since git listed it is not there at all.
    const entry = lstatSync(absolute, { throwIfNoEntry: false })
    if (entry === undefined) return absent
    return opened.kind === "unreadable" || entry.isSymbolicLink() ? skipped("unreadable") : absent
  }
  const { fd, stats } = opened
  try {
    // A directory (a submodule, a linked directory), a socket, a device: not a file to index.
    if (!stats.isFile()) return absent
    const byPath = skipForPath(path)
    if (byPath !== undefined) return skipped(byPath)
    if (stats.size > maxBytes) return skipped("too_large")
    let content: Buffer
    try {
      content = readFileSync(fd)
    } catch {
      return skipped("unreadable")
    }
    if (content.byteLength > maxBytes) return skipped("too_large")
    const byContent = skipForContent(path, content)
    if (byContent !== undefined) return skipped(byContent)
    return { kind: "indexed", content, hash: createHash("sha1").update(content).digest("hex") }
  } finally {
    closeSync(fd)
  }
}

const decode = (content: Buffer): string => {
  const text = content.toString("utf8")
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

const groupByPath = <A extends { readonly path: string }>(items: ReadonlyArray<A>): Map<string, Array<A>> => {
  const groups = new Map<string, Array<A>>()
  for (const item of items) {
    const group = groups.get(item.path)
    if (group) group.push(item)
    else groups.set(item.path, [item])
  }
  return groups
}

const byPath = (a: { readonly path: string }, b: { readonly path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

const rootError = async (root: string): Promise<IndexError | undefined> => {
  try {
    const stats = await stat(root)
    return stats.isDirectory() ? undefined : new IndexError({ root, reason: "not_a_directory", message: `${root} is not a directory` })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === "ENOENT" || code === "ENOTDIR"
      ? new IndexError({ root, reason: "not_found", message: `${root} does not exist` })
      : new IndexError({ root, reason: "unreadable", message: `${root} cannot be read (${code ?? "error"})` })
  }
}

/** The indexing itself, as a promise; `index` is its Effect. */
export const indexRepository = async (root: string, options: IndexOptions = {}, signal?: AbortSignal): Promise<IndexResult> => {
  const problem = await rootError(root)
  if (problem !== undefined) throw problem
  const maxBytes = options.maxFileBytes ?? defaultMaxFileBytes
  const readDefinitions = options.definitions ?? definitionsOf
  const discovery = await discover(root, { ...(options.useGit === undefined ? {} : { useGit: options.useGit }), ...(signal ? { signal } : {}) })
  // Every read is confined to the root's real path as discovery found it: it must be the directory checked.
  if (options.within !== undefined && !isInside(options.within, discovery.root)) {
    throw new IndexError({ root, reason: "unreadable", message: `${root} leads outside the directory that was checked` })
  }
  const paths = discovery.paths
  const report = options.onProgress
  report?.({ seen: paths.length, processed: 0 })

  const previous = options.previous
  const previousFiles = new Map(previous?.files.map((file) => [file.path, file]) ?? [])
  const previousChunks = groupByPath(previous?.chunks ?? [])
  const previousDefinitions = groupByPath(previous?.definitions ?? [])

  const files: Array<IndexedFile | undefined> = new Array(paths.length)
  const chunks: Array<ReadonlyArray<Chunk> | undefined> = new Array(paths.length)
  const definitions: Array<ReadonlyArray<Definition> | undefined> = new Array(paths.length)
  const skips: Array<SkippedFile> = [...discovery.skipped]
  const skippedDirectories = new Set<string>()
  const facts = new Map<string, ImportFacts>()
  const reparsed: Array<string> = []
  let processed = 0

  const visit = async (position: number): Promise<void> => {
    const path = paths[position]!
    const directory = skipForDirectory(path)
    if (directory !== undefined) {
      // git lists a checked-in vendor tree file by file: it is reported once, as the walk does.
      if (!skippedDirectories.has(directory.directory)) {
        skippedDirectories.add(directory.directory)
        skips.push(new SkippedFile({ path: `${directory.directory}/`, reason: directory.reason }))
      }
      return
    }
    const examined = examine(discovery.root, path, maxBytes)
    if (examined.kind === "absent") return
    if (examined.kind === "skipped") {
      skips.push(new SkippedFile({ path, reason: examined.reason }))
      return
    }
    const text = decode(examined.content)
    const language = languageOf(path)
    const indexedFile = (lines: number) =>
      new IndexedFile(
        { path, category: categoryOf(path), language, lines, bytes: examined.content.byteLength, hash: examined.hash },
        { disableValidation: true }
      )
    facts.set(path, importFactsOf(path, language, text))
    const before = previousFiles.get(path)
    if (before !== undefined && before.hash === examined.hash) {
      // The same content: the same lines, chunks and definitions as last time.
      files[position] = indexedFile(before.lines)
      chunks[position] = previousChunks.get(path) ?? []
      definitions[position] = previousDefinitions.get(path) ?? []
      return
    }
    const lines = splitLines(text)
    files[position] = indexedFile(lines.length)
    chunks[position] = chunk(path, lines)
    definitions[position] = await readDefinitions(path, language, text)
    reparsed.push(path)
  }

  // Reading and parsing run in slices of about 50 ms, between which other work on the event loop
  // (a status request reading the progress) gets its turn.
  let sliceStart = performance.now()
  for (let position = 0; position < paths.length; position++) {
    if (performance.now() - sliceStart > sliceMillis) {
      await new Promise((resume) => setImmediate(resume))
      signal?.throwIfAborted()
      sliceStart = performance.now()
    }
    await visit(position)
    processed++
    if (processed % 100 === 0) report?.({ seen: paths.length, processed })
  }
  if (processed % 100 !== 0 || processed === 0) report?.({ seen: paths.length, processed })

  const indexed = files.filter((file): file is IndexedFile => file !== undefined)
  const imports = resolveImports(indexed, facts)
  const snapshot = new Snapshot({
    files: indexed,
    skipped: skips.sort(byPath),
    chunks: chunks.flatMap((list) => list ?? []),
    definitions: definitions.flatMap((list) => list ?? []),
    imports,
    links: testLinks(indexed, imports)
  }, { disableValidation: true })

  const current = new Set(indexed.map((file) => file.path))
  const changes: Changes = {
    added: indexed.filter((file) => !previousFiles.has(file.path)).map((file) => file.path),
    changed: indexed.filter((file) => {
      const before = previousFiles.get(file.path)
      return before !== undefined && before.hash !== file.hash
    }).map((file) => file.path),
    removed: [...previousFiles.keys()].filter((path) => !current.has(path)).sort()
  }
  return { snapshot, changes, source: discovery.source, reparsed: reparsed.sort() }
}

/**
 * Indexes the repository at `root` (a directory; a git work tree or not). Fails with `IndexError`
 * when the root is missing or not a directory; interrupting it stops reading files.
 *
 * @example
 * const first = yield* Indexer.index("/srv/repos/app")
 * const next = yield* Indexer.index("/srv/repos/app", { previous: first.snapshot })
 * // next.changes.changed: the files whose content changed; only they were parsed again
 */
export const index = (root: string, options: IndexOptions = {}): Effect.Effect<IndexResult, IndexError> =>
  Effect.tryPromise({ try: (signal) => indexRepository(root, options, signal), catch: (error) => error }).pipe(
    Effect.catchAll((error) => (error instanceof IndexError ? Effect.fail(error) : Effect.die(error)))
  )
