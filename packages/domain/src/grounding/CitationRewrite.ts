/**
 * A unit of an answer (a sentence, or a line) rewritten with its citations checked: kept,
 * corrected, or removed with the prose around them tidied (their parentheses, a list separator,
 * a list item or sentence left empty), and a citation a removal leaves where two were glued
 * checked in turn.
 */
import { check, type Outcome } from "./CitationCheck.js"
import { CODE_SPAN, findIn, type Found, isPathLike } from "./CitationSyntax.js"
import type { Files } from "./CitedFiles.js"

const span = (start: number, end: number) => (start === end ? `${start}` : `${start}-${end}`)

/** The code a unit quotes, each with the citation it is nearest to (by index into `found`). */
const quotesOf = (unit: string, found: ReadonlyArray<Found>): Map<number, Array<string>> => {
  const byCitation = new Map<number, Array<string>>()
  const lineCitations = found.map((f, i) => [f, i] as const).filter(([f]) => f.start !== null)
  if (lineCitations.length === 0) return byCitation
  for (const m of unit.matchAll(CODE_SPAN)) {
    const from = m.index
    const to = from + m[0].length
    const code = m[1]!.trim()
    // Not a quote of code: a citation's own backticks, a link's target, a bare path.
    if (found.some((f) => (f.form === "link" ? from >= f.from + 1 + f.label.length && from < f.to : from < f.coreTo && to > f.coreFrom))) continue
    if (code.length === 0 || (!/\s/.test(code) && isPathLike(code.replace(/[:#].*$/, ""), undefined))) continue
    let nearest = -1
    let distance = Infinity
    for (const [f, i] of lineCitations) {
      const d = to <= f.from ? f.from - to : from >= f.to ? from - f.to : 0
      if (d < distance) (distance = d), (nearest = i)
    }
    const list = byCitation.get(nearest)
    if (list === undefined) byCitation.set(nearest, [code])
    else list.push(code)
  }
  return byCitation
}

const render = (found: Found, path: string, start: number, end: number): string => {
  if (found.form === "link") {
    const target = `${path}#L${start}${start === end ? "" : `-L${end}`}`
    // A label that was the citation itself follows it.
    const label = findIn(found.label, undefined).length > 0 || found.label.trim() === found.path ? `${path}:${span(start, end)}` : found.label
    return `[${label}](${target})`
  }
  const core = found.form === "colon" ? `${path}:${span(start, end)}` : `${path}#L${start}${start === end ? "" : `-L${end}`}`
  return found.backticks ? `\`${core}\`` : core
}

const renderFile = (found: Found, path: string): string => {
  const label = found.label.trim() === found.path ? path : found.label
  return `[${label}](${path})`
}

/** Where the spaces and openers (`(`, `[`, a backtick) in front of position `i` begin. */
export const before = (unit: string, i: number): number => {
  while (i > 0 && /[\s([`]/.test(unit[i - 1]!)) i--
  return i
}

const SEPARATOR_AFTER = /^[ \t]*(?:,|;|and\b|or\b)[ \t]*/
const SEPARATOR_BEFORE = /[ \t]*(?:,|;|\band|\bor)[ \t]*$/
/** What may precede a unit's first citation for the unit to go when its citations do: a list marker, a "see". */
export const LEAD_ONLY = /^[ \t]*(?:[-*+]|\d{1,3}[.)])?[ \t]*(?:(?:see(?: also)?|cf\.?|refer to)[ \t]*)?$/i
const LEFTOVER = /^[\s.,;:!?]*$/

/** Whether `left` and `right`, once adjacent, would make a citation that neither had (`x` + `.README.md:3`). */
const fuses = (left: string, right: string, files: Files): boolean => {
  const a = /\S*$/.exec(left)![0]
  const b = /^\S*/.exec(right)![0]
  if (a === "" || b === "") return false
  return findIn(a + b, files).some((f) => f.from < a.length && f.to > a.length)
}

interface Edit {
  from: number
  to: number
  readonly insert: string
}

/** A unit's text with its citations checked, and what was done to them; `tail` is the last word before the unit. */
export const rewrite = (unit: string, files: Files, atLineStart: boolean, tail: string): { text: string; outcomes: Array<Outcome> } => {
  let pass = rewriteOnce(unit, files, atLineStart, tail, undefined)
  const outcomes = [...pass.outcomes]
  // A removal can leave a citation that was none where it stood: two glued by a dot
  // (`src/nope.ts:3.src/a.ts:12` leaves `.src/a.ts:12`). Those are checked in turn, and only those.
  // Each round removes what made its joins, so the text shrinks until none is left.
  while (pass.joins.size > 0) {
    pass = rewriteOnce(pass.text, files, atLineStart, tail, pass.joins)
    outcomes.push(...pass.outcomes)
  }
  return { text: pass.text, outcomes }
}

/**
 * One pass of `rewrite`; with `only`, it checks just the citations that start at those offsets.
 * `joins`: where a removal joined the text before it to the text after it, when a citation now
 * starts there.
 */
const rewriteOnce = (
  unit: string,
  files: Files,
  atLineStart: boolean,
  tail: string,
  only: ReadonlySet<number> | undefined
): { text: string; outcomes: Array<Outcome>; joins: Set<number> } => {
  const joins = new Set<number>()
  const found = only === undefined ? findIn(unit, files) : findIn(unit, files).filter((f) => only.has(f.from))
  if (found.length === 0) return { text: unit, outcomes: [], joins }
  const quotes = quotesOf(unit, found)
  const outcomes = found.map((f, i) => check(files, f, quotes.get(i) ?? []))
  const edits: Array<Edit> = []
  let removedAny = false
  found.forEach((f, i) => {
    const outcome = outcomes[i]!
    if (outcome.kind === "kept") return
    if (outcome.kind === "corrected") {
      edits.push({ from: f.from, to: f.to, insert: f.start === null ? renderFile(f, outcome.path) : render(f, outcome.path, outcome.start, outcome.end) })
      return
    }
    removedAny = true
    // A link whose text is prose keeps its text.
    if (f.form === "link" && f.label.trim().length > 0 && findIn(f.label, undefined).length === 0 && f.label.trim() !== f.path) {
      edits.push({ from: f.from, to: f.to, insert: f.label })
      return
    }
    let from = f.from
    let to = f.to
    if (unit[from - 1] === "(" && unit[to] === ")") (from -= 1), (to += 1)
    const next = found[i + 1]
    const previous = found[i - 1]
    const after = SEPARATOR_AFTER.exec(unit.slice(to))
    const separator = SEPARATOR_BEFORE.exec(unit.slice(0, from))
    if (next !== undefined && after !== null && to + after[0].length === next.from) to += after[0].length
    else if (previous !== undefined && separator !== null && from - separator[0].length === previous.to) from -= separator[0].length
    else {
      const following = unit[to]
      const spaces = /[ \t]*$/.exec(unit.slice(0, from))![0].length
      if (spaces > 0 && (following === undefined || /[\s,.;:!?)\]]/.test(following))) from -= spaces
      else if (spaces === 0 && /^[ \t]/.test(unit.slice(to)) && (from === 0 || unit[from - 1] === "(" || unit[from - 1] === "\n")) {
        to += /^[ \t]*/.exec(unit.slice(to))![0].length
      }
    }
    edits.push({ from, to, insert: "" })
  })
  edits.sort((a, b) => a.from - b.from)
  let text = ""
  let at = 0
  for (const edit of edits) {
    // Two removals can reach into the same spaces; what one took, the other does not take again.
    if (edit.to <= at && edit.insert === "") continue
    text += unit.slice(at, Math.max(edit.from, at))
    // Text that would fuse with its neighbours into a new path-like word is kept apart from them.
    const rest = unit.slice(edit.to)
    const insert = edit.insert
    if (insert === "") {
      text += fuses(tail + text, rest, files) ? " " : ""
      if (!found.some((f) => f.from === edit.to) && findIn(text + rest, files).some((f) => f.from === text.length)) joins.add(text.length)
    } else {
      text += (fuses(tail + text, insert, files) ? " " : "") + insert
      text += fuses(tail + text, rest, files) ? " " : ""
    }
    at = Math.max(at, edit.to)
  }
  text += unit.slice(at)
  // A list item or a sentence that was only citations goes, with its line when it had one.
  const lead = before(unit, found[0]!.from)
  if (removedAny && LEAD_ONLY.test(unit.slice(0, lead)) && LEFTOVER.test(text.slice(lead))) {
    const newline = unit.endsWith("\n")
    text = newline && !atLineStart ? "\n" : ""
    joins.clear()
  }
  return { text, outcomes, joins }
}
