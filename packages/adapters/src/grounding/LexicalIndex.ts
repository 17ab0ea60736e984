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
 */
import MiniSearch from "minisearch"
import type { Chunk, Definition, FileCategory, Snapshot } from "@huddle/domain/grounding/Snapshot"
import * as CodeTokens from "./CodeTokens.js"
import { derivedKind } from "./FileRules.js"

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
const NAMED_PATH = 2.5
const NAMED_NAME = 1.5
const DEFINES_CODE = 3
const DEFINES_WORD = 1.8
/** Tests weigh less than the code they exercise, and more when the question is about tests. */
const TEST_PRIOR = 0.6
const TEST_QUESTION_PRIOR = 1.25
/** Documentation describes what the code does in the question's own words; it weighs less than the code, unless asked for. */
const DOCS_PRIOR = 0.6
const DOCS_QUESTION_PRIOR = 1.25
const DOCS_QUESTION = /\b(?:docs?|documentation|documented|readme|changelog|guide|tutorial|manual)\b/i
/** Declarations and bundles restate an implementation; they weigh less than it (declarations ×1 when the question is about types). */
const DECLARATION_PRIOR = 0.5
const BUNDLE_PRIOR = 0.7
/** Configuration answers questions about configuration; to others it only lends the names it lists (`main`, scripts, funding links). */
const CONFIG_PRIOR = 0.75
const CONFIG_QUESTION = /\b(?:config|configs|configuration|configured|configure|settings?|dependenc(?:y|ies)|scripts?|ci|workflows?|pipeline|docker|compose|manifest|environment|env|yaml|yml|json|toml)\b/i
const TYPES_QUESTION = /\b(?:types?|typings?|typed|typescript|declarations?|declared|signatures?|interfaces?|d\.[cm]?ts)\b/i
const GRAPH_SHARE = 0.3
const GRAPH_SEEDS = 5
/**
 * A query's terms are taken rarest first until the passages they occur in add up to this many:
 * scoring costs a little per passage per term, and the common terms left out would only shuffle
 * what the rare ones found (BM25 weighs them least). The two rarest always count.
 */
const MAX_POSTINGS = 12_000
/** A term in more than this share of the passages, in a repository of more than this many, is not indexed. */
const COMMON_SHARE = 0.25
const COMMON_FLOOR = 2_000
/** Passages scored beyond the best this many cannot reach the excerpts or the top files. */
const MAX_SCORED = 1_000
/** Passages below this fraction of the best one are noise, whatever the budget. */
const CUTOFF = 0.05
/** Per excerpt, the header the prompt adds (`path:start-end`), in characters besides the path. */
const HEADER_CHARS = 16
/** The smallest leftover budget worth a trimmed passage. */
const MIN_TRIM_TOKENS = 48

const tokens = (chars: number): number => Math.ceil(chars / 4)
const normalise = (name: string): string => name.toLowerCase().replace(/[_-]/g, "")
const baseName = (path: string): string => path.slice(path.lastIndexOf("/") + 1)
const stemOf = (name: string): string => {
  const dot = name.indexOf(".", 1)
  return dot === -1 ? name : name.slice(0, dot)
}

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

// ---------------------------------------------------------------------------------------------
// What the question names

interface Named {
  /** Boost per file, and the reason shown. */
  readonly files: Map<string, { readonly boost: number; readonly why: string }>
  /** Boost per definition named. */
  readonly definitions: Array<{ readonly definition: Definition; readonly boost: number }>
}

/** A token that looks like a path or a file name: has a `/`, or ends in `.ext`. */
const PATH_LIKE = /^(?:\.{0,2}\/)?[\w@+~.-]*[\w@+~-](?:\/[\w@+~.-]+)*(?:\.[A-Za-z][A-Za-z0-9]{0,7})?$/
const isPathLike = (token: string): boolean =>
  PATH_LIKE.test(token) && (token.includes("/") || /[\w-]\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(token))

const rawTokens = (question: string): Array<{ readonly text: string; readonly code: boolean }> => {
  const out: Array<{ text: string; code: boolean }> = []
  const quoted = new Set<string>()
  for (const m of question.matchAll(/`([^`]+)`/g)) for (const part of m[1]!.split(/\s+/)) quoted.add(part)
  for (const piece of question.split(/[\s`'"()[\]{}<>,;!?]+/)) {
    // A trailing period ends the sentence; a `:12` or `#L12` is a line, not part of the name.
    const text = piece.replace(/[.:]+$/, "").replace(/(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)$/, "")
    if (text.length === 0) continue
    const code = quoted.has(piece) || quoted.has(text) || /[a-z][A-Z]|_|\w\(|[A-Za-z]\d/.test(text) || question.includes(`${text}(`)
    out.push({ text, code })
  }
  return out
}

const named = (index: Index, question: string): Named => {
  const files = new Map<string, { boost: number; why: string }>()
  const name = (path: string, boost: number, why: string) => {
    const had = files.get(path)
    if (had === undefined || had.boost < boost) files.set(path, { boost, why })
  }
  const raw = rawTokens(question)
  for (const { text } of raw) {
    if (!isPathLike(text)) continue
    const path = text.replace(/^\.?\//, "")
    if (index.files.has(path)) {
      name(path, NAMED_PATH, "named in the question")
      continue
    }
    const lower = path.toLowerCase()
    const matches = path.includes("/")
      ? [...index.files.keys()].filter((p) => p.toLowerCase().endsWith(`/${lower}`))
      : index.byName.get(lower) ?? []
    if (matches.length > 0 && matches.length <= 5) {
      for (const p of matches) name(p, NAMED_PATH, "named in the question")
      continue
    }
    // A folder: its files, mildly (the question is about that area, not one file).
    const folder = [...index.files.keys()].filter((p) => p.startsWith(`${path}/`) || p.includes(`/${path}/`))
    if (folder.length > 0 && folder.length <= 200) for (const p of folder) name(p, NAMED_NAME, `in ${path}/, which the question names`)
  }

  // Names: single words and adjacent pairs/triples joined ("auth middleware" → AuthMiddleware.ts).
  // `Router.pick` names `Router` and `pick`.
  const words = raw.flatMap((t) => t.text.split(/[./:#]+/).filter((part) => /^[\w$-]+$/.test(part)).map((part) => ({ text: part, code: t.code })))
  const candidates: Array<{ key: string; code: boolean; joined: boolean }> = []
  for (let i = 0; i < words.length; i++) {
    candidates.push({ key: normalise(words[i]!.text), code: words[i]!.code, joined: false })
    for (let n = 2; n <= 3 && i + n <= words.length; n++) {
      candidates.push({ key: normalise(words.slice(i, i + n).map((w) => w.text).join("")), code: false, joined: true })
    }
  }
  const definitions: Array<{ definition: Definition; boost: number }> = []
  const seen = new Set<string>()
  for (const { key, code, joined } of candidates) {
    if (key.length < 3 || CodeTokens.stopwords.has(key) || CodeTokens.questionStopwords.has(key) || seen.has(key)) continue
    seen.add(key)
    const stemFiles = index.byStem.get(key)
    if (stemFiles !== undefined && stemFiles.length <= 3 && (code || joined || key.length >= 4)) {
      for (const p of stemFiles) name(p, NAMED_NAME, "its name is in the question")
    }
    const defs = index.definitions.get(key)
    if (defs === undefined) continue
    // A code-shaped name is meant; a plain word ("config") only when few things are called so.
    if (code && defs.length <= 10) for (const d of defs) definitions.push({ definition: d, boost: DEFINES_CODE })
    else if ((joined || key.length >= 4) && defs.length <= 3) for (const d of defs) definitions.push({ definition: d, boost: DEFINES_WORD })
  }
  return { files, definitions }
}

// ---------------------------------------------------------------------------------------------
// Ranking

interface Scored {
  score: number
  /** Reasons, strongest first, without duplicates. */
  readonly reasons: Array<string>
  /** The query terms it matched. */
  readonly terms: Set<string>
  /** Its line to centre on when it must be trimmed. */
  focus: number | undefined
}

interface Ranking {
  readonly chunks: Map<number, Scored>
  readonly files: Array<{ readonly path: string; readonly score: number }>
  readonly words: ReturnType<typeof CodeTokens.questionWords>
}

const addReason = (scored: Scored, reason: string, first = false) => {
  if (scored.reasons.includes(reason)) return
  if (first) scored.reasons.unshift(reason)
  else scored.reasons.push(reason)
}

const chunkAt = (index: Index, path: string, line: number): number | undefined =>
  index.files.get(path)?.chunks.find((id) => index.chunks[id]!.start_line <= line && line <= index.chunks[id]!.end_line)

const rank = (index: Index, question: string): Ranking => {
  const words = CodeTokens.questionWords(question)
  const all = [...new Set(words.flatMap((w) => w.terms))]
  const byRarity = all
    .map((term) => [term, index.frequency.get(term) ?? 0] as const)
    .filter(([, n]) => n > 0 && n <= index.common)
    .sort((a, b) => a[1] - b[1])
  let postings = 0
  const terms = byRarity.filter(([, n], i) => (postings += n) <= MAX_POSTINGS || i < 2).map(([term]) => term)
  const testQuestion = /\b(tests?|tested|testing|specs?|coverage)\b/i.test(question)
  const docsQuestion = DOCS_QUESTION.test(question)
  const typesQuestion = TYPES_QUESTION.test(question)
  const configQuestion = CONFIG_QUESTION.test(question)
  const prior = (path: string) => {
    const file = index.files.get(path)
    const category = file?.category
    const derived = file?.derived === "declaration" ? (typesQuestion ? 1 : DECLARATION_PRIOR) : file?.derived === "bundle" ? BUNDLE_PRIOR : 1
    return derived * (category === "test"
      ? testQuestion ? TEST_QUESTION_PRIOR : TEST_PRIOR
      : category === "docs"
      ? docsQuestion ? DOCS_QUESTION_PRIOR : DOCS_PRIOR
      : category === "config"
      ? configQuestion ? 1 : CONFIG_PRIOR
      : 1)
  }

  const chunks = new Map<number, Scored>()
  const results = terms.length === 0 ? [] : index.engine.search(terms.join(" "))
  const top = results[0]?.score ?? 1
  for (const result of results.slice(0, MAX_SCORED)) {
    const id = result.id as number
    chunks.set(id, { score: (result.score / top) * prior(index.chunks[id]!.path), reasons: [], terms: new Set(result.terms), focus: undefined })
  }
  const ensure = (id: number): Scored => {
    let scored = chunks.get(id)
    if (scored === undefined) chunks.set(id, (scored = { score: 0.5 * prior(index.chunks[id]!.path), reasons: [], terms: new Set(), focus: undefined }))
    return scored
  }

  const { definitions, files: namedFiles } = named(index, question)
  for (const [path, { boost, why }] of namedFiles) {
    const ids = index.files.get(path)?.chunks ?? []
    const scoredIds = ids.filter((id) => chunks.has(id))
    // A named file is shown even when no word of the question is in it: its opening passage.
    for (const id of scoredIds.length > 0 ? scoredIds : ids.slice(0, 1)) {
      const scored = ensure(id)
      scored.score *= boost
      addReason(scored, why, true)
    }
  }
  const boosted = new Set<number>()
  for (const { definition, boost } of definitions) {
    const id = chunkAt(index, definition.path, definition.line)
    if (id === undefined) continue
    const scored = ensure(id)
    if (!boosted.has(id)) scored.score *= boost
    boosted.add(id)
    scored.focus ??= definition.line
    addReason(scored, `names \`${definition.name}\``, true)
  }

  // Files: their best passage, plus a little for each further one.
  const byFile = new Map<string, Array<number>>()
  for (const [id, scored] of chunks) {
    const path = index.chunks[id]!.path
    const list = byFile.get(path)
    if (list === undefined) byFile.set(path, [scored.score])
    else list.push(scored.score)
  }
  const fileScores = new Map<string, number>()
  for (const [path, scores] of byFile) {
    scores.sort((a, b) => b - a)
    fileScores.set(path, scores[0]! + 0.25 * (scores[1] ?? 0) + 0.1 * (scores[2] ?? 0))
  }

  // A declaration documents the implementation beside it (`index.d.ts` and `index.js`): what the
  // question matched there is an answer in the implementation, which ranks at least as high.
  if (!typesQuestion) {
    for (const [path, score] of [...fileScores]) {
      if (index.files.get(path)?.derived !== "declaration") continue
      const implementation = implementationOf(index, path)
      if (implementation === undefined || (fileScores.get(implementation) ?? 0) >= score / DECLARATION_PRIOR) continue
      fileScores.set(implementation, score / DECLARATION_PRIOR)
      const ids = index.files.get(implementation)!.chunks
      const target = ids.filter((id) => chunks.has(id)).sort((a, b) => chunks.get(b)!.score - chunks.get(a)!.score)[0] ?? ids[0]
      if (target === undefined) continue
      const scored = ensure(target)
      scored.score = Math.max(scored.score, score / DECLARATION_PRIOR)
      addReason(scored, `documented in ${path}`)
    }
  }

  // One hop along imports from the strongest files.
  const ordered = [...fileScores].sort((a, b) => b[1] - a[1])
  const best = ordered[0]?.[1] ?? 0
  const seeds = ordered.filter(([, s]) => s >= 0.5 * best).slice(0, GRAPH_SEEDS)
  const seedSet = new Set(seeds.map(([p]) => p))
  const spread = new Map<string, { total: number; top: number; why: string; via: string }>()
  for (const [seed, score] of seeds) {
    const out = index.imports.get(seed) ?? []
    // A file that imports the seed and is imported by it is one neighbour, not two.
    const back = (index.importedBy.get(seed) ?? []).filter((path) => !out.includes(path))
    const share = (GRAPH_SHARE * score) / Math.sqrt(Math.max(1, out.length + back.length))
    const give = (path: string, why: string) => {
      if (seedSet.has(path) || !index.files.has(path)) return
      const amount = share * prior(path)
      const had = spread.get(path)
      if (had === undefined) spread.set(path, { total: amount, top: amount, why, via: seed })
      else {
        had.total += amount
        if (amount > had.top) Object.assign(had, { top: amount, why, via: seed })
      }
    }
    for (const to of out) give(to, `imported by ${seed}`)
    for (const from of back) give(from, `imports ${seed}`)
  }
  for (const [path, { total, why, via }] of spread) {
    fileScores.set(path, (fileScores.get(path) ?? 0) + total)
    const ids = index.files.get(path)!.chunks
    const matched = ids.filter((id) => chunks.has(id)).sort((a, b) => chunks.get(b)!.score - chunks.get(a)!.score)[0]
    // Without a passage of its own, the one that mentions the file it is linked to (usually the
    // import), else its opening.
    const linked = stemOf(baseName(via)).toLowerCase()
    const target = matched ?? ids.find((id) => index.chunks[id]!.text.toLowerCase().includes(linked)) ?? ids[0]
    if (target === undefined) continue
    const scored = chunks.get(target)
    if (scored === undefined) chunks.set(target, { score: total, reasons: [why], terms: new Set(), focus: undefined })
    else {
      scored.score += total
      addReason(scored, why)
    }
  }

  const files = [...fileScores]
    .map(([path, score]) => ({ path, score }))
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return { chunks, files, words }
}

/** The implementation a declaration describes, when it is beside it: `x.d.ts` → `x.ts`, `x.js`; `x.d.cts` → `x.cts`, `x.cjs`, `x.js`. */
const implementationOf = (index: Index, declaration: string): string | undefined => {
  const m = /^(.*)\.d\.([cm]?)ts$/i.exec(declaration)
  if (m === null) return undefined
  const [, base, flavour] = m
  return [`${base}.${flavour}ts`, `${base}.${flavour}js`, `${base}.ts`, `${base}.js`, `${base}.tsx`, `${base}.jsx`].find((path) => index.files.has(path))
}

/** The files that answer `question`, best first: what recall@k and MRR are measured on. */
export const rankFiles = (index: Index, question: string): ReadonlyArray<string> => rank(index, question).files.map((f) => f.path)

// ---------------------------------------------------------------------------------------------
// Selection within the budget

interface Piece {
  readonly path: string
  readonly start: number
  readonly end: number
  readonly lines: ReadonlyArray<string>
  readonly score: number
  readonly scored: ReadonlyArray<Scored>
}

const linesOf = (chunk: Chunk): Array<string> => {
  const lines = chunk.text.split("\n")
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** Overlapping or touching pieces of one file become one. */
const merge = (pieces: ReadonlyArray<Piece>): Array<Piece> => {
  const sorted = [...pieces].sort((a, b) => a.start - b.start)
  const out: Array<Piece> = []
  for (const piece of sorted) {
    const last = out[out.length - 1]
    if (last !== undefined && piece.start <= last.end + 1) {
      const lines = piece.end > last.end ? [...last.lines, ...piece.lines.slice(last.end + 1 - piece.start)] : last.lines
      out[out.length - 1] = {
        path: last.path,
        start: last.start,
        end: Math.max(last.end, piece.end),
        lines,
        score: Math.max(last.score, piece.score),
        scored: [...last.scored, ...piece.scored]
      }
    } else out.push(piece)
  }
  return out
}

const costOf = (pieces: ReadonlyArray<Piece>): number =>
  merge(pieces).reduce((sum, p) => sum + tokens(HEADER_CHARS + p.path.length + p.lines.reduce((n, l) => n + l.length + 1, 0)), 0)

/** The lines of a passage around its focus that fit in `budget` tokens (with the other pieces of its file). */
const trim = (piece: Piece, focus: number, budget: number, others: ReadonlyArray<Piece>): Piece | undefined => {
  let lo = Math.min(Math.max(focus - piece.start, 0), piece.lines.length - 1)
  let hi = lo
  const at = (a: number, b: number): Piece => ({ ...piece, start: piece.start + a, end: piece.start + b, lines: piece.lines.slice(a, b + 1) })
  const base = costOf(others)
  if (costOf([...others, at(lo, hi)]) - base > budget) return undefined
  // Grow downwards first (a definition's body follows its line), then upwards, while it fits.
  for (let grew = true; grew; ) {
    grew = false
    if (hi + 1 < piece.lines.length && costOf([...others, at(lo, hi + 1)]) - base <= budget) (hi += 1), (grew = true)
    if (lo > 0 && costOf([...others, at(lo - 1, hi)]) - base <= budget) (lo -= 1), (grew = true)
  }
  return at(lo, hi)
}

const focusOf = (index: Index, id: number, scored: Scored): number => {
  if (scored.focus !== undefined) return scored.focus
  const chunk = index.chunks[id]!
  const lines = linesOf(chunk)
  let bestLine = chunk.start_line
  let bestHits = -1
  lines.forEach((line, i) => {
    const lineTerms = new Set(CodeTokens.terms(line))
    let hits = 0
    for (const term of scored.terms) if (lineTerms.has(term)) hits++
    if (hits > bestHits) (bestHits = hits), (bestLine = chunk.start_line + i)
  })
  return bestLine
}

const whyOf = (piece: Piece, words: Ranking["words"]): string => {
  const reasons: Array<string> = []
  for (const scored of [...piece.scored].sort((a, b) => b.score - a.score)) {
    for (const reason of scored.reasons) if (!reasons.includes(reason)) reasons.push(reason)
  }
  const matched = new Set(piece.scored.flatMap((s) => [...s.terms]))
  const said: Array<string> = []
  for (const { word, terms } of words) {
    if (terms.some((t) => matched.has(t)) && !said.some((w) => w.toLowerCase() === word.toLowerCase())) said.push(word)
  }
  if (said.length > 0) reasons.push(`matches: ${said.slice(0, 6).join(", ")}`)
  const names = reasons.filter((r) => r.startsWith("names "))
  const rest = reasons.filter((r) => !r.startsWith("names "))
  // Several names read as one reason: "names `a`, `b`".
  const merged = names.length > 1 ? [`names ${names.map((n) => n.slice(6)).join(", ")}`] : names
  return [...merged, ...rest].slice(0, 4).join("; ")
}

/**
 * The passages that answer `question`, within `budgetTokens` and from at most `maxFiles` files,
 * best first, with the ranked files they come from.
 *
 * @example
 * const index = LexicalIndex.build(snapshot)
 * const { excerpts } = LexicalIndex.search(index, "where is `parseArgs` defined?", { budgetTokens: 2000, maxFiles: 6 })
 * // excerpts[0]: { path: "src/cli/args.ts", start_line: 10, end_line: 42, why: "names `parseArgs`", … }
 */
export const search = (index: Index, question: string, options: SearchOptions): SearchResult => {
  const ranking = rank(index, question)
  const files = ranking.files.slice(0, Math.max(0, options.maxFiles)).map((f) => f.path)
  const allowed = new Set(files)
  const top = Math.max(0, ...[...ranking.chunks.values()].map((s) => s.score))
  const candidates = [...ranking.chunks]
    .filter(([id, s]) => allowed.has(index.chunks[id]!.path) && s.score > 0 && s.score >= CUTOFF * top)
    .sort(([a, x], [b, y]) => y.score - x.score || a - b)

  const chosen = new Map<string, Array<Piece>>()
  let used = 0
  for (const [id, scored] of candidates) {
    const remaining = options.budgetTokens - used
    if (remaining <= 0) break
    const chunk = index.chunks[id]!
    const lines = linesOf(chunk)
    const piece: Piece = { path: chunk.path, start: chunk.start_line, end: chunk.start_line + lines.length - 1, lines, score: scored.score, scored: [scored] }
    const others = chosen.get(chunk.path) ?? []
    const cost = costOf([...others, piece]) - costOf(others)
    let taken: Piece | undefined = cost <= remaining ? piece : undefined
    if (taken === undefined && remaining >= MIN_TRIM_TOKENS) taken = trim(piece, focusOf(index, id, scored), remaining, others)
    if (taken === undefined) continue
    used += costOf([...others, taken]) - costOf(others)
    chosen.set(chunk.path, [...others, taken])
  }

  const excerpts = [...chosen.values()]
    .flatMap(merge)
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : a.start - b.start))
    .map((p): Excerpt => ({
      path: p.path,
      start_line: p.start,
      end_line: p.end,
      text: p.lines.join("\n"),
      score: top > 0 ? Math.round((p.score / top) * 1000) / 1000 : 0,
      why: whyOf(p, ranking.words)
    }))
  return { excerpts, files }
}
