/**
 * One citation checked: its path resolved (or completed), its lines inside the file, and, when the
 * unit quotes code beside it, those lines retrieved and containing the quote; kept, corrected to
 * the nearest retrieved excerpt, or removed, with the reason.
 */
import type { RetrievedExcerpt } from "./Citations.js"
import type { Found } from "./CitationSyntax.js"
import { type Files, resolvePath } from "./CitedFiles.js"

/** A name, qualified or called with plain arguments: `Router.pick`, `parseArgs(argv)`, `a.b(c, d)`. */
const NAME_LIKE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\([\w$., ]*\))?$/

/** Where `quote` is in `lines` (consecutive, from line `first`): its line range nearest `near`. */
const locate = (quote: string, lines: ReadonlyArray<string>, first: number, near: number): { start: number; end: number } | undefined => {
  const wanted = quote.trim().replace(/\(\)$/, "").replace(/\s+/g, " ")
  if (wanted.length === 0) return undefined
  // The text with whitespace runs collapsed, remembering each character's line.
  let flat = ""
  const lineOf: Array<number> = []
  lines.forEach((line, i) => {
    const collapsed = (i === 0 ? "" : " ") + line.replace(/\s+/g, " ")
    flat += collapsed
    for (let k = 0; k < collapsed.length; k++) lineOf.push(first + i)
  })
  let best: { start: number; end: number } | undefined
  for (let at = flat.indexOf(wanted); at !== -1; at = flat.indexOf(wanted, at + 1)) {
    const range = { start: lineOf[at]!, end: lineOf[at + wanted.length - 1]! }
    if (best === undefined || Math.abs(range.start - near) < Math.abs(best.start - near)) best = range
  }
  if (best !== undefined) return best
  // A qualified or called name (`Router.pick`, `parseArgs(argv)`): each of its names, as words.
  // Only such a name: the names of a quoted statement are found almost anywhere, its text is not.
  if (!NAME_LIKE.test(wanted)) return undefined
  const names = wanted.match(/[A-Za-z_$][\w$]*/g)?.filter((n) => n.length >= 2) ?? []
  if (names.length === 0) return undefined
  let start = Infinity
  let end = -Infinity
  for (const name of names) {
    const word = new RegExp(`(?<![\\w$])${name.replace(/\$/g, "\\$")}(?![\\w$])`)
    const i = lines.findIndex((line) => word.test(line))
    if (i === -1) return undefined
    start = Math.min(start, first + i)
    end = Math.max(end, first + i)
  }
  return { start, end }
}

export type Outcome =
  | { readonly kind: "kept"; readonly path: string; readonly start: number; readonly end: number; readonly why: string }
  | { readonly kind: "corrected"; readonly path: string; readonly start: number; readonly end: number; readonly why: string }
  | { readonly kind: "removed"; readonly why: string }

const linesOf = (start: number, end: number) => (start === end ? `line ${start}` : `lines ${start}-${end}`)
const outside = (start: number, end: number, path: string, total: number) =>
  `${linesOf(start, end)} ${start === end ? "is" : "are"} outside ${path} (${total} lines)`
const quoted = (quotes: ReadonlyArray<string>) => quotes.map((q) => `\`${q}\``).join(", ")

export const check = (files: Files, found: Found, quotes: ReadonlyArray<string>): Outcome => {
  const path = resolvePath(files, found.path)
  if (path === undefined) return { kind: "removed", why: `${found.path} is not a file of the repository` }
  const total = files.lines.get(path)!
  const completed = path !== found.path.replace(/^\.?\//, "")
  const named = completed ? `completed ${found.path} to ${path}` : undefined
  if (found.start === null) {
    return { kind: completed ? "corrected" : "kept", path, start: 1, end: total, why: named ?? "the file, as linked" }
  }
  const start = found.start
  const end = found.end ?? start
  const inside = start >= 1 && start <= end && end <= total
  const retrieved = files.retrieved.get(path)
  const excerpts = retrieved?.excerpts ?? []

  if (quotes.length > 0) {
    if (inside && retrieved !== undefined) {
      const cited: Array<string> = []
      for (let line = start; line <= end; line++) {
        const text = retrieved.lines.get(line)
        if (text === undefined) break
        cited.push(text)
      }
      if (cited.length === end - start + 1 && quotes.every((q) => locate(q, cited, start, start) !== undefined)) {
        return completed ? { kind: "corrected", path, start, end, why: named! } : { kind: "kept", path, start, end, why: "as cited" }
      }
    }
    let best: { start: number; end: number } | undefined
    for (const excerpt of excerpts) {
      const lines = excerpt.text.split("\n").slice(0, excerpt.end_line - excerpt.start_line + 1)
      const ranges = quotes.map((q) => locate(q, lines, excerpt.start_line, start))
      if (ranges.some((r) => r === undefined)) continue
      const range = { start: Math.min(...ranges.map((r) => r!.start)), end: Math.max(...ranges.map((r) => r!.end)) }
      if (best === undefined || Math.abs(range.start - start) < Math.abs(best.start - start)) best = range
    }
    const where = inside ? `${linesOf(start, end)} ${start === end ? "does" : "do"} not show ${quoted(quotes)}` : outside(start, end, path, total)
    if (best === undefined) return { kind: "removed", why: `${where}, and no retrieved excerpt of ${path} does` }
    return { kind: "corrected", path, start: best.start, end: best.end, why: `${where}; ${quoted(quotes)} ${quotes.length === 1 ? "is" : "are"} at ${linesOf(best.start, best.end)}` }
  }

  if (inside) return completed ? { kind: "corrected", path, start, end, why: named! } : { kind: "kept", path, start, end, why: "as cited" }
  const distance = (e: RetrievedExcerpt) => (start < e.start_line ? e.start_line - start : start > e.end_line ? start - e.end_line : 0)
  const nearest = [...excerpts].sort((a, b) => distance(a) - distance(b) || a.start_line - b.start_line)[0]
  const where = outside(start, end, path, total)
  if (nearest === undefined) return { kind: "removed", why: `${where}, and no excerpt of it was retrieved` }
  const s = Math.max(1, Math.min(nearest.start_line, total))
  const e = Math.max(s, Math.min(nearest.end_line, total))
  return { kind: "corrected", path, start: s, end: e, why: `${where}; the nearest retrieved excerpt is ${linesOf(s, e)}` }
}
