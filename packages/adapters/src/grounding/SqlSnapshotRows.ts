/**
 * A repository's snapshot in SQL: a run's delta applied to its rows (files, chunks, definitions,
 * skipped files, import edges, test links), the snapshot read back, its counts, and one file's
 * chunks over a range of lines.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { skippedPathsShown, type SnapshotCounts } from "@huddle/domain/grounding/RepositoryConnection"
import {
  Chunk,
  Definition,
  type DefinitionKind,
  type FileCategory,
  FileCategory as FileCategories,
  ImportEdge,
  IndexedFile,
  SkippedFile,
  type SkipReason,
  SkipReason as SkipReasons,
  Snapshot,
  TestLink
} from "@huddle/domain/grounding/Snapshot"
import type { SnapshotDelta } from "@huddle/domain/grounding/SnapshotDelta"
import { Effect, Option } from "effect"

/** Rows per statement: well under PostgreSQL's 65 535 parameters, and small enough for PGlite. */
const batchSize = 500

const batches = <A>(rows: ReadonlyArray<A>): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < rows.length; i += batchSize) out.push(rows.slice(i, i + batchSize))
  return out
}

/** Each row's position among the rows of its path, in the order given (a file's chunks keep their order). */
const numbered = <A extends { readonly path: string }>(rows: ReadonlyArray<A>): Array<[A, number]> => {
  const next = new Map<string, number>()
  return rows.map((row) => {
    const seq = next.get(row.path) ?? 0
    next.set(row.path, seq + 1)
    return [row, seq]
  })
}

/** `delta` applied to the rows of `repositoryId`, the files written stamped with `version`; run inside the store's transaction. */
export const applyDelta = (sql: SqlClient.SqlClient, repositoryId: string, version: number, delta: SnapshotDelta) => {
  const each = <A>(rows: ReadonlyArray<A>, statement: (batch: ReadonlyArray<A>) => Effect.Effect<unknown, unknown>) =>
    Effect.forEach(batches(rows), statement, { discard: true })
  /** Rows of an edge table matching any of `keys` (each a conjunction of column equalities). */
  const anyOf = (keys: ReadonlyArray<Fragment>) => sql.or(keys)
  return Effect.gen(function*() {
    if (delta.full) {
      for (const table of ["repository_files", "repository_skipped", "repository_imports", "repository_test_links"]) {
        yield* sql`DELETE FROM ${sql(table)} WHERE repository_id = ${repositoryId}`
      }
    }
    // A file's chunks and definitions go with its row (ON DELETE CASCADE).
    yield* each(delta.removedPaths, (paths) =>
      sql`DELETE FROM repository_files WHERE repository_id = ${repositoryId} AND path IN ${sql.in(paths)}`)
    yield* each(delta.files, (files) =>
      sql`INSERT INTO repository_files ${
        sql.insert(files.map((file) => ({
          repository_id: repositoryId,
          path: file.path,
          category: file.category,
          language: file.language,
          lines: file.lines,
          bytes: file.bytes,
          hash: file.hash,
          indexed_version: version
        })))
      }`)
    yield* each(numbered(delta.chunks), (chunks) =>
      sql`INSERT INTO repository_chunks ${
        sql.insert(chunks.map(([chunk, seq]) => ({
          repository_id: repositoryId,
          path: chunk.path,
          seq,
          start_line: chunk.start_line,
          end_line: chunk.end_line,
          text: chunk.text
        })))
      }`)
    yield* each(numbered(delta.definitions), (definitions) =>
      sql`INSERT INTO repository_definitions ${
        sql.insert(definitions.map(([definition, seq]) => ({
          repository_id: repositoryId,
          path: definition.path,
          seq,
          name: definition.name,
          kind: definition.kind,
          line: definition.line,
          end_line: definition.end_line
        })))
      }`)
    if (!delta.full) {
      yield* each(delta.skipped.removed, (skipped) =>
        sql`DELETE FROM repository_skipped WHERE repository_id = ${repositoryId} AND path IN ${sql.in(skipped.map((s) => s.path))}`)
      yield* each(delta.imports.removed, (edges) =>
        sql`DELETE FROM repository_imports WHERE repository_id = ${repositoryId}
            AND (${anyOf(edges.map((edge) => sql`(from_path = ${edge.from} AND to_path = ${edge.to})`))})`)
      yield* each(delta.links.removed, (links) =>
        sql`DELETE FROM repository_test_links WHERE repository_id = ${repositoryId}
            AND (${anyOf(links.map((link) => sql`(source_path = ${link.source} AND test_path = ${link.test} AND via = ${link.via})`))})`)
    }
    yield* each(delta.skipped.added, (skipped) =>
      sql`INSERT INTO repository_skipped ${
        sql.insert(skipped.map((s) => ({ repository_id: repositoryId, path: s.path, reason: s.reason })))
      }`)
    yield* each(delta.imports.added, (edges) =>
      sql`INSERT INTO repository_imports ${
        sql.insert(edges.map((edge) => ({ repository_id: repositoryId, from_path: edge.from, to_path: edge.to })))
      }`)
    yield* each(delta.links.added, (links) =>
      sql`INSERT INTO repository_test_links ${
        sql.insert(links.map((link) => ({ repository_id: repositoryId, source_path: link.source, test_path: link.test, via: link.via })))
      }`)
  })
}

/** The snapshot of `repositoryId`'s last stored run; none before the first. */
export const readSnapshot = (sql: SqlClient.SqlClient, repositoryId: string) =>
  Effect.gen(function*() {
    const version = yield* sql<{ index_version: number }>`SELECT index_version FROM repositories WHERE id = ${repositoryId}`
    if ((version[0]?.index_version ?? 0) === 0) return Option.none<Snapshot>()
    // Byte order ("C"): the order the domain sorts snapshots in, whatever the database's collation.
    const [files, skipped, chunks, definitions, imports, links] = yield* Effect.all([
      sql<{ path: string; category: FileCategory; language: string; lines: number; bytes: number; hash: string }>`
        SELECT path, category, language, lines, bytes, hash FROM repository_files
        WHERE repository_id = ${repositoryId} ORDER BY path COLLATE "C"`,
      sql<{ path: string; reason: SkipReason }>`
        SELECT path, reason FROM repository_skipped WHERE repository_id = ${repositoryId} ORDER BY path COLLATE "C"`,
      sql<{ path: string; start_line: number; end_line: number; text: string }>`
        SELECT path, start_line, end_line, text FROM repository_chunks
        WHERE repository_id = ${repositoryId} ORDER BY path COLLATE "C", seq`,
      sql<{ path: string; name: string; kind: DefinitionKind; line: number; end_line: number }>`
        SELECT path, name, kind, line, end_line FROM repository_definitions
        WHERE repository_id = ${repositoryId} ORDER BY path COLLATE "C", seq`,
      sql<{ from_path: string; to_path: string }>`
        SELECT from_path, to_path FROM repository_imports
        WHERE repository_id = ${repositoryId} ORDER BY from_path COLLATE "C", to_path COLLATE "C"`,
      sql<{ source_path: string; test_path: string; via: "import" | "name" }>`
        SELECT source_path, test_path, via FROM repository_test_links
        WHERE repository_id = ${repositoryId} ORDER BY source_path COLLATE "C", test_path COLLATE "C", via COLLATE "C"`
    ])
    const trusted = { disableValidation: true }
    return Option.some(
      new Snapshot({
        files: files.map((row) => new IndexedFile(row, trusted)),
        skipped: skipped.map((row) => new SkippedFile(row, trusted)),
        chunks: chunks.map((row) => new Chunk(row, trusted)),
        definitions: definitions.map((row) => new Definition(row, trusted)),
        imports: imports.map((row) => new ImportEdge({ from: row.from_path, to: row.to_path }, trusted)),
        links: links.map((row) => new TestLink({ source: row.source_path, test: row.test_path, via: row.via }, trusted))
      }, trusted)
    )
  })

/** What the last stored run holds, by file category and by skip reason, with the first skipped paths of each reason. */
export const readCounts = (sql: SqlClient.SqlClient, repositoryId: string) =>
  Effect.gen(function*() {
    const [files, skipped, skippedPaths] = yield* Effect.all([
      sql<{ key: FileCategory; n: number }>`
        SELECT category AS key, count(*)::int AS n FROM repository_files WHERE repository_id = ${repositoryId} GROUP BY category`,
      sql<{ key: SkipReason; n: number }>`
        SELECT reason AS key, count(*)::int AS n FROM repository_skipped WHERE repository_id = ${repositoryId} GROUP BY reason`,
      // The first paths of each reason, in byte order as snapshots are read.
      sql<{ reason: SkipReason; path: string }>`
        SELECT reason, path FROM (
          SELECT reason, path, row_number() OVER (PARTITION BY reason ORDER BY path COLLATE "C") AS n
          FROM repository_skipped WHERE repository_id = ${repositoryId}
        ) ranked WHERE n <= ${skippedPathsShown} ORDER BY reason, path COLLATE "C"`
    ])
    const tally = <K extends string>(keys: ReadonlyArray<K>, rows: ReadonlyArray<{ key: string; n: number }>) => {
      const by = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>
      for (const row of rows) if (row.key in by) by[row.key as K] = row.n
      return { total: rows.reduce((sum, row) => sum + row.n, 0), by }
    }
    const f = tally(FileCategories.literals, files)
    const s = tally(SkipReasons.literals, skipped)
    const paths = Object.fromEntries(SkipReasons.literals.map((reason) => [reason, [] as Array<string>])) as Record<SkipReason, Array<string>>
    for (const row of skippedPaths) paths[row.reason]?.push(row.path)
    return { files: { total: f.total, by_category: f.by }, skipped: { total: s.total, by_reason: s.by, paths } } satisfies SnapshotCounts
  })

/** One indexed file and its chunks that overlap `range`; none when the snapshot has no such file. */
export const readFile = (sql: SqlClient.SqlClient, repositoryId: string, path: string, range: { readonly from: number; readonly to: number }) =>
  Effect.gen(function*() {
    const files = yield* sql<{ path: string; category: FileCategory; language: string; lines: number; bytes: number; hash: string }>`
      SELECT path, category, language, lines, bytes, hash FROM repository_files
      WHERE repository_id = ${repositoryId} AND path = ${path}`
    if (files[0] === undefined) return Option.none()
    const chunks = yield* sql<{ path: string; start_line: number; end_line: number; text: string }>`
      SELECT path, start_line, end_line, text FROM repository_chunks
      WHERE repository_id = ${repositoryId} AND path = ${path} AND start_line <= ${range.to} AND end_line >= ${range.from}
      ORDER BY seq`
    const trusted = { disableValidation: true }
    return Option.some({
      file: new IndexedFile({ ...files[0], bytes: Number(files[0].bytes) }, trusted),
      chunks: chunks.map((row) => new Chunk(row, trusted))
    })
  })
