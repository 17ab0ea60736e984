/**
 * Lexical retrieval over an indexed repository: which passages of which files answer a question.
 *
 * BM25 (MiniSearch's BM25+) over the chunks — their text, their path and the names they define —
 * with an identifier-aware tokenizer (`CodeTokens`), then what a plain text search lacks:
 * - a file the question names (`src/cli/args.ts`, `args.ts`, or a name like "Router" that only a
 *   few files are called): ×2.5 for a path, ×1.5 for a name or a folder;
 * - a definition the question names (`parseArgs`, "parse args"): the passage that defines it ×3
 *   (×1.8 when the name is a plain word that could be prose);
 * - tests weigh ×0.6, and ×1.25 when the question is about tests; documentation likewise, unless
 *   the question asks about docs (a README restates in prose what the code does, and outranks it);
 *   configuration ×0.75 unless the question is about configuration;
 * - type declarations (`index.d.ts`) weigh ×0.5 unless the question is about types, and bundles or
 *   build variants (`esm/`, `*.umd.js`) ×0.7: they restate the implementation's names and its
 *   documentation comments, and would otherwise outrank it (`FileRules.derivedKind`); the
 *   implementation beside a declaration (`index.js` by `index.d.ts`) ranks at least as high as
 *   the declaration would unweighted;
 * - the import graph: the files the strongest matches import, and those that import them, get a
 *   share of their score (one hop, divided among a file's neighbours, so that a utility imported
 *   everywhere spreads thinly).
 *
 * Sized for repositories of thousands of files (see bench/grounding.mjs): a passage is indexed by
 * its distinct terms (presence, not counts), terms that a quarter of a large repository's passages
 * contain are not indexed, and a query keeps its rarest terms up to a bound on the passages they
 * touch. `search` then selects passages, merged when they touch, within a token budget (~4
 * characters a token), each with a short reason a reader can check.
 *
 * Here the index itself (`build`); what a question names in `QuestionNames`, the scoring in
 * `LexicalRanking`, the excerpts within the budget in `ExcerptSelection`.
 */
import MiniSearch from "minisearch"
import type { Chunk, Definition, FileCategory, Snapshot } from "@huddle/domain/grounding/Snapshot"
import * as CodeTokens from "./CodeTokens.js"
import { selectExcerpts } from "./ExcerptSelection.js"
import { derivedKind } from "./FileRules.js"
import { baseName, normalise, stemOf } from "./LexicalKeys.js"
import { rank } from "./LexicalRanking.js"

interface Doc {
  readonly id: number
  readonly path: string
  readonly symbols: string
}

interface FileEntry {
  readonly path: string
  readonly category: FileCategory | undefined
  readonly derived: ReturnType<typeof derivedKind>
  /** Its chunks' ids, in line order. */
  readonly chunks: ReadonlyArray<number>
}

/** What `build` makes of a snapshot; opaque to callers, who pass it back to `search`. */
export interface Index {
  readonly chunks: ReadonlyArray<Chunk>
  readonly files: ReadonlyMap<string, FileEntry>
  readonly engine: MiniSearch<Doc>
  /** In how many passages each term occurs (in their text or path). */
  readonly frequency: ReadonlyMap<string, number>
  /** A term in more passages than this is not indexed in their text. */
  readonly common: number
  /** Definitions by normalised name (lower case, no `_`/`-`): `parse_args` and `parseArgs` meet. */
  readonly definitions: ReadonlyMap<string, ReadonlyArray<Definition>>
  /** Paths by lower-case file name (`args.ts`) and by that name without its extension (`args`). */
  readonly byName: ReadonlyMap<string, ReadonlyArray<string>>
  readonly byStem: ReadonlyMap<string, ReadonlyArray<string>>
  readonly imports: ReadonlyMap<string, ReadonlyArray<string>>
  readonly importedBy: ReadonlyMap<string, ReadonlyArray<string>>
}

export interface SearchOptions {
  /** The excerpts' size limit, in tokens of ~4 characters (with a small header per excerpt). */
  readonly budgetTokens: number
  /** At most this many distinct files. */
  readonly maxFiles: number
}

export interface Excerpt {
  readonly path: string
  readonly start_line: number
  readonly end_line: number
  readonly text: string
  /** Relative to the best passage of this search (1). */
  readonly score: number
  /** Why it was chosen: "names `parseArgs`; matches: retry, backoff". */
  readonly why: string
}

export interface SearchResult {
  readonly excerpts: ReadonlyArray<Excerpt>
  /** The ranked files the excerpts were drawn from (at most `maxFiles`), best first. */
  readonly files: ReadonlyArray<string>
}

const FIELD_BOOST = { text: 1, path: 1.5, symbols: 2 }
/** A term in more than this share of the passages, in a repository of more than this many, is not indexed. */
const COMMON_SHARE = 0.25
const COMMON_FLOOR = 2_000

const group = <A>(items: Iterable<A>, key: (a: A) => string): Map<string, Array<A>> => {
  const out = new Map<string, Array<A>>()
  for (const item of items) {
    const k = key(item)
    const list = out.get(k)
    if (list === undefined) out.set(k, [item])
    else list.push(item)
  }
  return out
}

/** Indexes a snapshot's chunks for `search`. */
export const build = (snapshot: Snapshot): Index => {
  const chunks = snapshot.chunks
  const categories = new Map(snapshot.files.map((file) => [file.path, file.category] as const))
  const defsByPath = group(snapshot.definitions, (d) => d.path)
  const chunksByPath = group(chunks.keys(), (id) => chunks[id]!.path)

  const files = new Map<string, FileEntry>()
  for (const path of new Set([...categories.keys(), ...chunksByPath.keys()])) {
    const ids = (chunksByPath.get(path) ?? []).sort((a, b) => chunks[a]!.start_line - chunks[b]!.start_line)
    files.set(path, { path, category: categories.get(path), derived: derivedKind(path), chunks: ids })
  }

  // Two passes. First each passage's distinct terms — presence, not counts: MiniSearch's inserts
  // are most of the build's time, and in passages of a few dozen lines a term's count says little
  // that BM25's saturation would not flatten — and how many passages each term is in.
  const cut = CodeTokens.indexer()
  const docs: Array<Doc> = []
  const textTerms: Array<Array<CodeTokens.TermStat>> = []
  for (const [path, ids] of chunksByPath) {
    const defs = defsByPath.get(path) ?? []
    for (const id of ids) {
      const chunk = chunks[id]!
      const symbols = defs.filter((d) => d.line >= chunk.start_line && d.line <= chunk.end_line).map((d) => d.name).join(" ")
      textTerms[id] = cut.terms(chunk.text)
      docs.push({ id, path, symbols })
    }
  }
  const frequency = cut.frequencies()
  const pathTerms = new Map<string, Array<string>>()
  for (const path of chunksByPath.keys()) {
    const terms = [...new Set(CodeTokens.terms(path))]
    pathTerms.set(path, terms)
    for (const term of terms) frequency.set(term, (frequency.get(term) ?? 0) + chunksByPath.get(path)!.length)
  }
  // Then the index, without the terms of a text that a quarter of a large repository's passages
  // contain: they would rank nothing, and they are a third of the inserts.
  const common = Math.max(COMMON_SHARE * chunks.length, COMMON_FLOOR)
  const engine = new MiniSearch<Doc>({
    fields: ["text", "path", "symbols"],
    storeFields: [],
    // A passage's text field is its id: its terms are those of the first pass.
    extractField: (doc, field) => (field === "text" ? doc.id : doc[field as "id" | "path" | "symbols"]),
    tokenize: (value, field) =>
      field === "text"
        ? textTerms[Number(value)]!.flatMap((stat) => (stat.texts <= common ? [stat.term] : []))
        : field === "path"
        ? pathTerms.get(value)!
        : CodeTokens.terms(value),
    processTerm: (term) => term,
    searchOptions: {
      tokenize: (query) => query.split(" "),
      processTerm: (term) => term,
      combineWith: "OR",
      boost: FIELD_BOOST
    }
  })
  engine.addAll(docs)
  textTerms.length = 0

  const definitions = group(snapshot.definitions, (d) => normalise(d.name))
  const paths = [...files.keys()]
  const byName = group(paths, (p) => baseName(p).toLowerCase())
  const byStem = group(paths, (p) => stemOf(baseName(p)).toLowerCase())
  const imports = new Map<string, Array<string>>()
  const importedBy = new Map<string, Array<string>>()
  for (const edge of snapshot.imports) {
    if (edge.from === edge.to) continue
    const out = imports.get(edge.from)
    if (out === undefined) imports.set(edge.from, [edge.to])
    else if (!out.includes(edge.to)) out.push(edge.to)
    const back = importedBy.get(edge.to)
    if (back === undefined) importedBy.set(edge.to, [edge.from])
    else if (!back.includes(edge.from)) back.push(edge.from)
  }
  return { chunks, files, engine, frequency, common, definitions, byName, byStem, imports, importedBy }
}

/** The files that answer `question`, best first: what recall@k and MRR are measured on. */
export const rankFiles = (index: Index, question: string): ReadonlyArray<string> => rank(index, question).files.map((f) => f.path)

/**
 * The passages that answer `question`, within `budgetTokens` and from at most `maxFiles` files,
 * best first, with the ranked files they come from.
 *
 * @example
 * const index = LexicalIndex.build(snapshot)
 * const { excerpts } = LexicalIndex.search(index, "where is `parseArgs` defined?", { budgetTokens: 2000, maxFiles: 6 })
 * // excerpts[0]: { path: "src/cli/args.ts", start_line: 10, end_line: 42, why: "names `parseArgs`", … }
 */
export const search = (index: Index, question: string, options: SearchOptions): SearchResult =>
  selectExcerpts(index, rank(index, question), options)
