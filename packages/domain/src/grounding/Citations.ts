/**
 * Citations in an answer (`src/cli/args.ts:12`, `src/cli/args.ts:12-30`, `src/a.ts#L12-L30`, the
 * same in backticks, and markdown links `[text](src/a.ts#L12-L30)`), checked against the
 * repository before anyone sees them. Nothing unverified passes:
 *
 * - a path that is not an indexed file is removed, with its lines (a path kept without them would
 *   still send the reader to a file that is not there); a path that is the end of exactly one
 *   indexed path (`args.ts:12` for `src/cli/args.ts`) is completed;
 * - lines outside the file are corrected to the nearest retrieved excerpt of that file, else the
 *   citation is removed;
 * - when the sentence quotes code (in backticks) next to a citation, the cited lines must be
 *   retrieved text that contains it; otherwise the citation moves to the lines of the nearest
 *   retrieved excerpt of that file that contain it, else it is removed;
 * - a markdown link keeps its text when it is prose, and goes with its target when the text is
 *   the citation itself; a markdown link to a file without lines is checked for the file only.
 *
 * Removing tidies the prose around the citation: its parentheses when it was alone in them, the
 * space before it, a list separator (`a.ts:1, nope.ts:2` → `a.ts:1`), and a list item or sentence
 * left with nothing but punctuation or a "see". Paths mentioned without a line are prose, not citations.
 *
 * `CitationFilter` does the same on a streamed answer: it holds back only what may still become
 * or belong to a citation (from a path-like token to the end of its sentence, where the quotes
 * that check it end), so that no unverified citation is ever emitted, and its output is the same
 * as `verify` on the whole text, however the text was split.
 *
 * The parts: `CitationSyntax` (finding citations), `CitedFiles` (what they are checked against),
 * `CitationCheck` (one citation), `CitationRewrite` (a unit's text with its citations checked).
 */
import { findIn } from "./CitationSyntax.js"
import { before, LEAD_ONLY, rewrite } from "./CitationRewrite.js"
import { type Files, prepare } from "./CitedFiles.js"

/** A file citations may point into. */
export interface CitableFile {
  readonly path: string
  readonly lines: number
}

/** A passage retrieved for the answer: what the model saw, and what quotes are checked against. */
export interface RetrievedExcerpt {
  readonly path: string
  readonly start_line: number
  readonly end_line: number
  readonly text: string
}

export interface Context {
  readonly files: ReadonlyArray<CitableFile>
  readonly excerpts: ReadonlyArray<RetrievedExcerpt>
}

/** A citation as written. Lines are null for a markdown link to a whole file. */
export interface Citation {
  readonly path: string
  readonly start_line: number | null
  readonly end_line: number | null
  /** Where it is in the text, and what it spans there (with its backticks or its whole link). */
  readonly at: number
  readonly text: string
}

export interface Reference {
  readonly path: string
  readonly start_line: number
  readonly end_line: number
  readonly why: string
}

export interface Report {
  readonly references: ReadonlyArray<Reference>
  /** Citations found, those changed to verified lines or paths, and those taken out. */
  readonly checked: number
  readonly corrected: number
  readonly removed: number
}

export interface Verified extends Report {
  readonly text: string
}

/** The citations in `text`, in order. */
export const parse = (text: string): ReadonlyArray<Citation> =>
  findIn(text, undefined).map((f) => ({ path: f.path, start_line: f.start, end_line: f.end, at: f.from, text: text.slice(f.from, f.to) }))

// ---------------------------------------------------------------------------------------------
// Streaming

/** The end of the first complete unit in `text` (after a newline, or after `.!?` then a space), or -1. */
const unitEnd = (text: string): number => {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "\n") return i + 1
    if ((c === "." || c === "!" || c === "?") && i + 1 < text.length && /\s/.test(text[i + 1]!)) return i + 1
  }
  return -1
}

/** Where a `[` may still open a link: the first one whose link is not yet settled. */
const openLink = (unit: string): number => {
  for (let i = unit.indexOf("["); i !== -1; i = unit.indexOf("[", i + 1)) {
    let j = i + 1
    while (j < unit.length && unit[j] !== "]" && unit[j] !== "[" && unit[j] !== "\n") j++
    if (j >= unit.length) return i
    if (unit[j] !== "]") continue
    if (j + 1 >= unit.length) return i
    if (unit[j + 1] !== "(") continue
    let k = j + 2
    while (k < unit.length && unit[k] !== ")" && unit[k] !== "(" && !/\s/.test(unit[k]!)) k++
    if (k >= unit.length) return i
  }
  return -1
}

/**
 * How much of an incomplete unit can be emitted now: everything before the first thing that may
 * be or become a citation (a found citation, an unsettled `[`, the unfinished last token), and
 * before the spaces and openers in front of it that removing it would take along; nothing when
 * only a list marker or a "see" precedes it (the item or sentence may end up empty and go).
 */
const holdFrom = (unit: string, files: Files): number => {
  let hold = unit.length
  const tail = /\S*$/.exec(unit)!
  if (tail[0].length > 0) hold = tail.index
  const link = openLink(unit)
  if (link !== -1) hold = Math.min(hold, link)
  const first = findIn(unit, files)[0]
  if (first !== undefined) hold = Math.min(hold, first.from)
  hold = before(unit, hold)
  if (LEAD_ONLY.test(unit.slice(0, hold))) hold = 0
  return hold
}

/**
 * Checks the citations of a streamed answer as it comes: `push` each delta and emit what it
 * returns; `end` returns the rest. Emits exactly what `verify` makes of the whole text.
 *
 * @example
 * const filter = new CitationFilter(context)
 * for await (const delta of deltas) send(filter.push(delta))
 * send(filter.end())
 * filter.report() // { references, checked, corrected, removed }
 */
export class CitationFilter {
  private readonly files: Files
  /** The current unit: the part already emitted, and the part held back. */
  private emitted = ""
  private held = ""
  private atLineStart = true
  /** The last word of what the units before gave (a removal must not join the next unit onto it). */
  private tail = ""
  private readonly references: Array<Reference> = []
  private checked = 0
  private corrected = 0
  private removed = 0

  constructor(context: Context) {
    this.files = prepare(context)
  }

  push(delta: string): string {
    this.held += delta
    let out = ""
    for (;;) {
      const unit = this.emitted + this.held
      const end = unitEnd(unit)
      if (end !== -1 && end > this.emitted.length) {
        out += this.finish(unit.slice(0, end))
        this.held = unit.slice(end)
        continue
      }
      const hold = Math.max(holdFrom(unit, this.files), this.emitted.length)
      out += unit.slice(this.emitted.length, hold)
      this.emitted = unit.slice(0, hold)
      this.held = unit.slice(hold)
      return out
    }
  }

  end(): string {
    const unit = this.emitted + this.held
    const out = unit.length > 0 ? this.finish(unit) : ""
    this.held = ""
    return out
  }

  report(): Report {
    return { references: [...this.references], checked: this.checked, corrected: this.corrected, removed: this.removed }
  }

  /** Rewrites a complete unit and returns the part of it not emitted yet. */
  private finish(unit: string): string {
    const { outcomes, text } = rewrite(unit, this.files, this.atLineStart, this.tail)
    for (const outcome of outcomes) {
      this.checked += 1
      if (outcome.kind === "removed") this.removed += 1
      else {
        if (outcome.kind === "corrected") this.corrected += 1
        const { path, start, end, why } = outcome
        if (!this.references.some((r) => r.path === path && r.start_line === start && r.end_line === end)) {
          this.references.push({ path, start_line: start, end_line: end, why })
        }
      }
    }
    const emitted = this.emitted
    this.emitted = ""
    this.atLineStart = unit.endsWith("\n")
    this.tail = /\S*$/.exec(this.tail + text)![0].slice(-200)
    // What was emitted is never a citation nor next to one, so the rewrite starts with it.
    return text.startsWith(emitted) ? text.slice(emitted.length) : text
  }
}

/** Checks every citation of `text` (see the module's comment for the rules). */
export const verify = (text: string, context: Context): Verified => {
  const filter = new CitationFilter(context)
  const out = filter.push(text) + filter.end()
  return { text: out, ...filter.report() }
}
