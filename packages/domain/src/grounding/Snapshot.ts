/**
 * What indexing a repository produces: its files (classified), the files it skipped and why,
 * line chunks, definitions, and the links from source files to the tests that exercise them.
 * The one shape the indexer writes, storage keeps, retrieval searches, and citations are checked
 * against. Paths are relative to the repository root, with `/` separators; lines are 1-based.
 */
import { Schema } from "effect"

export const FileCategory = Schema.Literal("config", "source", "test", "docs")
export type FileCategory = typeof FileCategory.Type

export const SkipReason = Schema.Literal(
  "binary",
  "vendored",
  "generated",
  "minified",
  "lockfile",
  "too_large",
  "unreadable",
  "outside_root"
)
export type SkipReason = typeof SkipReason.Type

export class IndexedFile extends Schema.Class<IndexedFile>("IndexedFile")({
  path: Schema.String,
  category: FileCategory,
  /** `typescript`, `python`, … or `text` when no language is recognised. */
  language: Schema.String,
  lines: Schema.Int,
  bytes: Schema.Int,
  /** The content's hash (sha-1 hex, as git's blob ids are not needed): what incremental re-indexing compares. */
  hash: Schema.String
}) {}

export class SkippedFile extends Schema.Class<SkippedFile>("SkippedFile")({
  path: Schema.String,
  reason: SkipReason
}) {}

/** A passage of a file: what retrieval ranks and what an excerpt quotes. */
export class Chunk extends Schema.Class<Chunk>("Chunk")({
  path: Schema.String,
  start_line: Schema.Int,
  end_line: Schema.Int,
  text: Schema.String
}) {}

export const DefinitionKind = Schema.Literal("function", "class", "method", "interface", "type", "variable", "module", "other")
export type DefinitionKind = typeof DefinitionKind.Type

export class Definition extends Schema.Class<Definition>("Definition")({
  path: Schema.String,
  name: Schema.String,
  kind: DefinitionKind,
  line: Schema.Int,
  end_line: Schema.Int
}) {}

/** A source file and a test that exercises it: it imports it (`import`) or is named after it (`name`). */
export class TestLink extends Schema.Class<TestLink>("TestLink")({
  source: Schema.String,
  test: Schema.String,
  via: Schema.Literal("import", "name")
}) {}

/** An import between two indexed files (the reference graph retrieval boosts by). */
export class ImportEdge extends Schema.Class<ImportEdge>("ImportEdge")({
  from: Schema.String,
  to: Schema.String
}) {}

export class Snapshot extends Schema.Class<Snapshot>("Snapshot")({
  files: Schema.Array(IndexedFile),
  skipped: Schema.Array(SkippedFile),
  chunks: Schema.Array(Chunk),
  definitions: Schema.Array(Definition),
  imports: Schema.Array(ImportEdge),
  links: Schema.Array(TestLink)
}) {}
