/**
 * `LexicalIndex.search`'s excerpts: the ranked passages of the top files, best first, within a
 * token budget (~4 characters a token), trimmed around their focus when only part fits, merged
 * when they touch, each with a short reason a reader can check.
 */
import type { Chunk } from "@huddle/domain/grounding/Snapshot"
import * as CodeTokens from "./CodeTokens.js"
import type { Excerpt, Index, SearchOptions, SearchResult } from "./LexicalIndex.js"
import type { Ranking, Scored } from "./LexicalRanking.js"

/** Passages below this fraction of the best one are noise, whatever the budget. */
const CUTOFF = 0.05
/** Per excerpt, the header the prompt adds (`path:start-end`), in characters besides the path. */
const HEADER_CHARS = 16
/** The smallest leftover budget worth a trimmed passage. */
const MIN_TRIM_TOKENS = 48


const tokens = (chars: number): number => Math.ceil(chars / 4)

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

/** The excerpts of `ranking` within `options`, with the ranked files they are drawn from. */
export const selectExcerpts = (index: Index, ranking: Ranking, options: SearchOptions): SearchResult => {
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
