import { describe, expect, it } from "@effect/vitest"
import { Chunk, Definition, ImportEdge, IndexedFile, SkippedFile, SkipReason, Snapshot, TestLink } from "@huddle/domain/grounding/Snapshot"
import * as SnapshotDelta from "@huddle/domain/grounding/SnapshotDelta"
import { FastCheck as fc } from "effect"

const paths = ["src/a.ts", "src/b.ts", "src/c.ts", "test/a.test.ts", "README.md", "logo.png"] as const
const trusted = { disableValidation: true }

/**
 * A well-formed snapshot over a few paths: unique files and skipped paths, and what an indexer
 * derives from a file (chunks, definitions) a function of its path and content hash, as a
 * deterministic indexer's is.
 */
const snapshot = fc.record({
  files: fc.subarray([...paths]).chain((chosen) =>
    fc.tuple(...chosen.map((path) => fc.constantFrom("h1", "h2", "h3").map((hash) => ({ path, hash }))))
  ),
  skipped: fc.subarray([...paths]).chain((chosen) => fc.tuple(...chosen.map((path) => fc.constantFrom(...SkipReason.literals).map((reason) => ({ path, reason }))))),
  imports: fc.uniqueArray(fc.tuple(fc.constantFrom(...paths), fc.constantFrom(...paths)), { selector: ([a, b]) => `${a}>${b}`, maxLength: 6 }),
  links: fc.uniqueArray(fc.tuple(fc.constantFrom(...paths), fc.constantFrom(...paths), fc.constantFrom("import" as const, "name" as const)), {
    selector: (l) => l.join(">"),
    maxLength: 6
  })
}).map(({ files, imports, links, skipped }) => {
  const indexed = files.map(({ hash, path }) => new IndexedFile({ path, category: "source", language: "typescript", lines: hash.length, bytes: 10, hash }, trusted))
  return new Snapshot({
    files: indexed,
    skipped: skipped.filter((s) => !files.some((f) => f.path === s.path)).map((s) => new SkippedFile(s, trusted)),
    chunks: files.flatMap(({ hash, path }) =>
      Array.from({ length: hash === "h3" ? 2 : 1 }, (_, i) => new Chunk({ path, start_line: i + 1, end_line: i + 2, text: `${path}@${hash}#${i}` }, trusted))
    ),
    definitions: files.filter((f) => f.hash !== "h2").map(({ hash, path }) => new Definition({ path, name: hash, kind: "function", line: 1, end_line: 2 }, trusted)),
    imports: imports.map(([from, to]) => new ImportEdge({ from, to }, trusted)),
    links: links.map(([source, test, via]) => new TestLink({ source, test, via }, trusted))
  }, trusted)
})

/** What an indexer may report, rightly or not: any paths of either snapshot. */
const reported = fc.record({
  added: fc.subarray([...paths]),
  changed: fc.subarray([...paths]),
  removed: fc.subarray([...paths])
})

describe("a snapshot delta", () => {
  it.prop("applied to the previous snapshot gives the next, whatever the indexer reported", [fc.option(snapshot, { nil: undefined }), snapshot, reported], ([previous, next, said]) => {
    expect(SnapshotDelta.apply(previous, SnapshotDelta.between(previous, next, said))).toEqual(SnapshotDelta.normalise(next))
  })

  it.prop("rewrites only the files that were added or changed, and counts them", [snapshot, snapshot], ([previous, next]) => {
    const delta = SnapshotDelta.between(previous, next, { added: [], changed: [], removed: [] })
    const before = new Map(previous.files.map((f) => [f.path, f.hash]))
    const rewritten = next.files.filter((f) => before.get(f.path) !== f.hash).map((f) => f.path).sort()
    expect(delta.files.map((f) => f.path).sort()).toEqual(rewritten)
    expect(delta.chunks.every((c) => rewritten.includes(c.path))).toBe(true)
    expect(delta.changes).toEqual({
      added: next.files.filter((f) => !before.has(f.path)).length,
      changed: next.files.filter((f) => before.has(f.path) && before.get(f.path) !== f.hash).length,
      removed: previous.files.filter((f) => !next.files.some((n) => n.path === f.path)).length
    })
  })

  it.prop("between a snapshot and itself is empty", [snapshot], ([same]) => {
    const delta = SnapshotDelta.between(same, same, { added: [], changed: [], removed: [] })
    expect([delta.removedPaths, delta.files, delta.skipped.added, delta.skipped.removed, delta.imports.added, delta.links.removed]).toEqual([[], [], [], [], [], []])
  })
})
