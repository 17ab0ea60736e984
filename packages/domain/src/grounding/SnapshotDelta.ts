/**
 * What storing a new snapshot over the previous one changes, path by path: the rows of the files
 * that appeared, changed or disappeared (their chunks and definitions with them), and the
 * skipped files, imports and test links that differ. Storage applies only this, so that
 * re-indexing a large repository after a small change writes little.
 *
 * A file counts as changed when the indexer says so or when its row differs (hash, category, …):
 * storage stays exact even if an indexer under-reports.
 */
import type { Changes } from "./RepositoryIndexer.js"
import { type Chunk, type Definition, type ImportEdge, type IndexedFile, type SkippedFile, Snapshot, type TestLink } from "./Snapshot.js"

export interface SetDelta<A> {
  readonly removed: ReadonlyArray<A>
  readonly added: ReadonlyArray<A>
}

export interface SnapshotDelta {
  /** Nothing was stored before: every row is new (and anything left over goes). */
  readonly full: boolean
  /** Files whose rows go, with their chunks and definitions (removed, and changed ones rewritten). */
  readonly removedPaths: ReadonlyArray<string>
  /** The rows written: those of the added and changed files. */
  readonly files: ReadonlyArray<IndexedFile>
  readonly chunks: ReadonlyArray<Chunk>
  readonly definitions: ReadonlyArray<Definition>
  readonly skipped: SetDelta<SkippedFile>
  readonly imports: SetDelta<ImportEdge>
  readonly links: SetDelta<TestLink>
  readonly changes: { readonly added: number; readonly changed: number; readonly removed: number }
}

const sameFile = (a: IndexedFile, b: IndexedFile) =>
  a.hash === b.hash && a.category === b.category && a.language === b.language && a.lines === b.lines && a.bytes === b.bytes

const setDelta = <A>(before: ReadonlyArray<A>, after: ReadonlyArray<A>, key: (a: A) => string): SetDelta<A> => {
  const had = new Set(before.map(key))
  const has = new Set(after.map(key))
  return { removed: before.filter((a) => !has.has(key(a))), added: after.filter((a) => !had.has(key(a))) }
}

export const skippedKey = (s: SkippedFile) => `${s.path}\u0000${s.reason}`
export const importKey = (e: ImportEdge) => `${e.from}\u0000${e.to}`
export const linkKey = (l: TestLink) => `${l.source}\u0000${l.test}\u0000${l.via}`

export const between = (previous: Snapshot | undefined, next: Snapshot, reported: Changes): SnapshotDelta => {
  const before = new Map((previous?.files ?? []).map((file) => [file.path, file]))
  const after = new Map(next.files.map((file) => [file.path, file]))
  const said = new Set([...reported.added, ...reported.changed])
  const added: Array<string> = []
  const changed: Array<string> = []
  for (const [path, file] of after) {
    const old = before.get(path)
    if (old === undefined) added.push(path)
    else if (said.has(path) || !sameFile(old, file)) changed.push(path)
  }
  const removed = [...before.keys()].filter((path) => !after.has(path))
  const written = new Set([...added, ...changed])
  return {
    full: previous === undefined,
    removedPaths: [...removed, ...changed].sort(),
    files: next.files.filter((file) => written.has(file.path)),
    chunks: next.chunks.filter((chunk) => written.has(chunk.path)),
    definitions: next.definitions.filter((definition) => written.has(definition.path)),
    skipped: setDelta(previous?.skipped ?? [], next.skipped, skippedKey),
    imports: setDelta(previous?.imports ?? [], next.imports, importKey),
    links: setDelta(previous?.links ?? [], next.links, linkKey),
    changes: { added: added.length, changed: changed.length, removed: removed.length }
  }
}

const byPath = <A extends { readonly path: string }>(a: A, b: A) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
const byKey = <A>(key: (a: A) => string) => (a: A, b: A) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)

/**
 * A snapshot in the order storage reads it back: files and skipped files by path; chunks and
 * definitions by path, each file's in the order the indexer gave them; imports and links by key.
 */
export const normalise = (snapshot: Snapshot): Snapshot =>
  new Snapshot({
    files: [...snapshot.files].sort(byPath),
    skipped: [...snapshot.skipped].sort(byPath),
    // Array.prototype.sort is stable: a file's chunks keep their order.
    chunks: [...snapshot.chunks].sort(byPath),
    definitions: [...snapshot.definitions].sort(byPath),
    imports: [...snapshot.imports].sort(byKey(importKey)),
    links: [...snapshot.links].sort(byKey(linkKey))
  }, { disableValidation: true })

/** The snapshot stored after applying `delta` to `previous` (what an in-memory store keeps). */
export const apply = (previous: Snapshot | undefined, delta: SnapshotDelta): Snapshot => {
  const base = delta.full || previous === undefined
    ? new Snapshot({ files: [], skipped: [], chunks: [], definitions: [], imports: [], links: [] }, { disableValidation: true })
    : previous
  const gone = new Set(delta.removedPaths)
  const without = <A>(rows: ReadonlyArray<A>, removed: ReadonlyArray<A>, key: (a: A) => string) => {
    const drop = new Set(removed.map(key))
    return rows.filter((row) => !drop.has(key(row)))
  }
  return normalise(
    new Snapshot({
      files: [...base.files.filter((file) => !gone.has(file.path)), ...delta.files],
      skipped: [...without(base.skipped, delta.skipped.removed, skippedKey), ...delta.skipped.added],
      chunks: [...base.chunks.filter((chunk) => !gone.has(chunk.path)), ...delta.chunks],
      definitions: [...base.definitions.filter((definition) => !gone.has(definition.path)), ...delta.definitions],
      imports: [...without(base.imports, delta.imports.removed, importKey), ...delta.imports.added],
      links: [...without(base.links, delta.links.removed, linkKey), ...delta.links.added]
    }, { disableValidation: true })
  )
}
