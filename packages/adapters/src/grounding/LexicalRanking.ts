/**
 * The ranking of a question's passages and files: BM25 over the rarest terms, weighed by what the
 * file is (tests, docs, configuration, declarations, bundles) and by what the question names, the
 * implementation beside a matched declaration raised to it, then one hop along the import graph.
 */
import * as CodeTokens from "./CodeTokens.js"
import type { Index } from "./LexicalIndex.js"
import { baseName, stemOf } from "./LexicalKeys.js"
import { named } from "./QuestionNames.js"

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
/** Passages scored beyond the best this many cannot reach the excerpts or the top files. */
const MAX_SCORED = 1_000

export interface Scored {
  score: number
  /** Reasons, strongest first, without duplicates. */
  readonly reasons: Array<string>
  /** The query terms it matched. */
  readonly terms: Set<string>
  /** Its line to centre on when it must be trimmed. */
  focus: number | undefined
}

export interface Ranking {
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

/** The passages a question matches, scored, and the files ranked by them. */
export const rank = (index: Index, question: string): Ranking => {
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

  const fileScores = fileScoresOf(index, chunks)
  // A declaration documents the implementation beside it (`index.d.ts` and `index.js`): what the
  // question matched there is an answer in the implementation, which ranks at least as high.
  if (!typesQuestion) raiseImplementations(index, chunks, fileScores, ensure)
  spreadAlongImports(index, chunks, fileScores, prior)

  const files = [...fileScores]
    .map(([path, score]) => ({ path, score }))
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return { chunks, files, words }
}

/** Files: their best passage, plus a little for each further one. */
const fileScoresOf = (index: Index, chunks: ReadonlyMap<number, Scored>): Map<string, number> => {
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
  return fileScores
}

/** An implementation scored at least as a declaration beside it would be unweighted. */
const raiseImplementations = (
  index: Index,
  chunks: ReadonlyMap<number, Scored>,
  fileScores: Map<string, number>,
  ensure: (id: number) => Scored
) => {
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

/** One hop along imports from the strongest files: their neighbours get a share of their score. */
const spreadAlongImports = (
  index: Index,
  chunks: Map<number, Scored>,
  fileScores: Map<string, number>,
  prior: (path: string) => number
) => {
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
}

/** The implementation a declaration describes, when it is beside it: `x.d.ts` → `x.ts`, `x.js`; `x.d.cts` → `x.cts`, `x.cjs`, `x.js`. */
const implementationOf = (index: Index, declaration: string): string | undefined => {
  const m = /^(.*)\.d\.([cm]?)ts$/i.exec(declaration)
  if (m === null) return undefined
  const [, base, flavour] = m
  return [`${base}.${flavour}ts`, `${base}.${flavour}js`, `${base}.ts`, `${base}.js`, `${base}.tsx`, `${base}.jsx`].find((path) => index.files.has(path))
}
