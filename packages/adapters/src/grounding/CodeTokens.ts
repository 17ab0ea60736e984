/**
 * How code and questions about it are cut into search terms: identifiers are split at
 * camelCase, PascalCase, snake_case, kebab-case and digit boundaries, and kept whole as well, so
 * that `parseArgs` is found by "parse args", by "parseArgs" and by "args"; paths are cut at their
 * separators the same way. Everything is lower-cased, and each word and each part of an
 * identifier is reduced to its Porter stem, in the code as in the question (one function, `fold`,
 * for both): "reconnecting" meets `reconnect`, "redirection" meets `redirect`, "merged" meets
 * `merge`. The compound whole (`parseargs`) is kept unstemmed beside its parts.
 */

import { stemmer } from "stemmer"

/** An identifier, with dashes inside it (kebab-case) but not at its ends. */
const WORD = /[A-Za-z0-9_$]+(?:-[A-Za-z0-9_$]+)*/g
/** The parts of one identifier: `HTTPServer2xx` → HTTP, Server, 2, xx. */
const PART = /[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+/g
const PLAIN = /^[a-z]+$/

/** Words too common in prose or code to tell passages apart (BM25 would weigh them near zero anyway). */
export const stopwords: ReadonlySet<string> = new Set([
  "a", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does",
  "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no",
  "not", "of", "on", "or", "our", "should", "so", "some", "than", "that", "the", "their", "them", "then",
  "there", "these", "they", "this", "those", "to", "was", "we", "were", "what", "when", "where", "which",
  "who", "why", "will", "with", "would", "you", "your", "about", "all", "also", "there", "here", "get",
  "const", "let", "var", "return", "import", "export", "new", "true", "false", "null", "undefined", "void",
  "else", "self", "def", "pub", "fn", "end"
])

/** Words that carry meaning in code but, in a question about code, only say that it is about code. */
export const questionStopwords: ReadonlySet<string> = new Set([
  "code", "codebase", "repo", "repository", "project", "file", "function", "method", "class", "module",
  "implemented", "implementation", "implement", "defined", "define", "handled", "handle", "happen", "happens",
  "work", "works", "use", "used", "explain", "show", "tell", "find", "look", "like", "line", "lines"
])

/**
 * A word's stem (Porter's algorithm): retries, retried, retrying → retri; evaluate, evaluated →
 * evalu; connection, connected → connect. Both the text and the question are folded, so an exact
 * match is never lost. Porter's rather than a lighter folding: questions in plain words inflect
 * and derive ("redirection", "batched", "shortened") where code says `redirect`, `batch`,
 * `shorten`, and only derivational suffixes (-ion, -ment, -er, -ize) meet those.
 */
export const fold = (term: string): string => {
  let stem = stems.get(term)
  if (stem === undefined) {
    // The algorithm runs a few regular expressions a word; code repeats its words, and a search
    // cuts the lines of its excerpts again, so each word is stemmed once (a bounded memo).
    if (stems.size >= MAX_STEMS) stems.clear()
    stems.set(term, (stem = stemmer(term)))
  }
  return stem
}
const stems = new Map<string, string>()
const MAX_STEMS = 200_000

const push = (out: Array<string>, term: string): void => {
  if (term.length >= 2 && !stopwords.has(term)) out.push(term)
}

/** A word's folded term, unless the word is a stopword before or after folding ("where" would fold to "wher"). */
const pushFolded = (out: Array<string>, word: string): void => {
  if (!stopwords.has(word)) push(out, fold(word))
}

/** The question stopwords as their terms are folded: "handled" and "defined" meet the list as "handl" and "defin". */
const foldedQuestionStopwords: ReadonlySet<string> = new Set([...questionStopwords].map(fold))

/** Appends the terms of one identifier to `out`. */
export const identifierTerms = (word: string, out: Array<string>): void => {
  if (PLAIN.test(word)) {
    pushFolded(out, word)
    return
  }
  const lower = word.toLowerCase()
  const parts = word.match(PART)
  if (parts === null) return
  if (parts.length === 1) {
    pushFolded(out, lower.replace(/[_$-]/g, ""))
    return
  }
  push(out, lower)
  for (const part of parts) pushFolded(out, part.toLowerCase())
}

/** The search terms of a text (code, prose, or a path). */
export const terms = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const match of text.matchAll(WORD)) identifierTerms(match[0], out)
  return out
}

const isWordChar = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36

export interface TermStat {
  readonly term: string
  /** The last text it was seen in, and in how many texts it occurs. */
  last: number
  texts: number
}

/**
 * `terms` for indexing many texts, fast: each text's distinct terms, and in how many texts each
 * term occurs. Code repeats its identifiers, so each distinct word is cut once and remembered.
 */
export const indexer = () => {
  const stats = new Map<string, TermStat>()
  const words = new Map<string, ReadonlyArray<TermStat>>()
  const split = (word: string): ReadonlyArray<TermStat> => {
    const out: Array<string> = []
    identifierTerms(word, out)
    const cut = out.map((term) => {
      let stat = stats.get(term)
      if (stat === undefined) stats.set(term, (stat = { term, last: -1, texts: 0 }))
      return stat
    })
    words.set(word, cut)
    return cut
  }
  let text = -1
  return {
    /** The distinct terms of the next text (with their counts so far). */
    terms: (content: string): Array<TermStat> => {
      text += 1
      const out: Array<TermStat> = []
      const n = content.length
      let i = 0
      while (i < n) {
        while (i < n && !isWordChar(content.charCodeAt(i))) i++
        const start = i
        // Dashes join words (kebab-case) only between word characters.
        while (i < n && (isWordChar(content.charCodeAt(i)) || (content.charCodeAt(i) === 45 && i > start && i + 1 < n && isWordChar(content.charCodeAt(i + 1))))) i++
        if (i === start) continue
        const word = content.slice(start, i)
        for (const stat of words.get(word) ?? split(word)) {
          if (stat.last === text) continue
          stat.last = text
          stat.texts += 1
          out.push(stat)
        }
      }
      return out
    },
    /** Every term seen, with its frequency. */
    frequencies: (): Map<string, number> => new Map([...stats.values()].map((s) => [s.term, s.texts]))
  }
}

/** The words of a question as written (identifiers, paths), each with the search terms it yields. */
export const questionWords = (question: string): Array<{ readonly word: string; readonly terms: ReadonlyArray<string> }> => {
  const out: Array<{ word: string; terms: ReadonlyArray<string> }> = []
  for (const match of question.matchAll(WORD)) {
    const found: Array<string> = []
    identifierTerms(match[0], found)
    const kept = found.filter((term) => !questionStopwords.has(term) && !foldedQuestionStopwords.has(term))
    if (kept.length > 0) out.push({ word: match[0], terms: kept })
  }
  return out
}
