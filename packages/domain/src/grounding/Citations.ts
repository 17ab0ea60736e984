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
 */

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

// ---------------------------------------------------------------------------------------------
// Finding citations

type Form = "colon" | "fragment" | "link"

interface Found {
  readonly form: Form
  readonly path: string
  readonly start: number | null
  readonly end: number | null
  /** The span in the unit, wrappers included. */
  readonly from: number
  readonly to: number
  /** The core `path:lines` span (for colon and fragment forms), without wrappers. */
  readonly coreFrom: number
  readonly coreTo: number
  readonly backticks: boolean
  /** A link's text. */
  readonly label: string
}

const LINK = /\[([^[\]\n]*)\]\(([^()\s]+)\)/g
const CORE =
  /(?<![\w./:@+~#$-])((?:\.{1,2}\/|\/|\.(?=[\w@+~]))?[\w@+~](?:[\w.@+~/-]*\w)?)(?::L?(\d{1,7})(?:[-–]L?(\d{1,7}))?(?::\d{1,5})?|#L(\d{1,7})(?:-L?(\d{1,7}))?)(?![\w]|[-–]\d)/g
const CODE_SPAN = /`([^`\n]+)`/g
/** Extensions of files people cite: a `name.ext:12` without a `/` is a citation only with one of these (or when the file exists). */
const EXTENSIONS = new Set(
  (
    "ts tsx mts cts js jsx mjs cjs py pyi rb go rs java kt kts scala swift c h cc cpp cxx hpp hh cs fs m mm php pl pm r lua dart " +
    "ex exs erl hrl clj cljs elm hs ml mli nim zig v sol sh bash zsh fish ps1 bat sql graphql gql proto thrift vue svelte astro " +
    "html htm css scss sass less md mdx rst txt adoc json jsonc json5 yaml yml toml ini cfg conf env xml gradle cmake mk tf hcl lock"
  ).split(" ")
)

/** Whether a written path can be a citation's: it has a `/`, a known extension, or names an indexed file. */
const isPathLike = (path: string, files: Files | undefined): boolean => {
  if (!/[A-Za-z]/.test(path) || path.includes("//")) return false
  if (path.includes("/")) return true
  const dot = path.lastIndexOf(".")
  if (dot > 0 && EXTENSIONS.has(path.slice(dot + 1).toLowerCase())) return true
  return files !== undefined && resolvePath(files, path) !== undefined
}

const findIn = (unit: string, files: Files | undefined): Array<Found> => {
  const found: Array<Found> = []
  for (const m of unit.matchAll(LINK)) {
    const target = m[2]!
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue
    const hash = target.indexOf("#")
    const path = hash === -1 ? target : target.slice(0, hash)
    const fragment = hash === -1 ? undefined : target.slice(hash + 1)
    const lines = fragment === undefined ? undefined : /^L(\d{1,7})(?:-L?(\d{1,7}))?$/.exec(fragment)
    if (fragment !== undefined && lines === null) continue
    if (path.length === 0 || !isPathLike(path, files)) continue
    const start = lines?.[1] === undefined ? null : Number(lines[1])
    const end = lines?.[2] === undefined ? start : Number(lines[2])
    const from = m.index
    found.push({ form: "link", path, start, end, from, to: from + m[0].length, coreFrom: from, coreTo: from + m[0].length, backticks: false, label: m[1]! })
  }
  for (const m of unit.matchAll(CORE)) {
    const from = m.index
    const to = from + m[0].length
    if (found.some((f) => f.form === "link" && from < f.to && to > f.from)) continue
    const path = m[1]!
    if (!isPathLike(path, files)) continue
    const start = Number(m[2] ?? m[4])
    const end = m[3] ?? m[5]
    const backticks = unit[from - 1] === "`" && unit[to] === "`"
    found.push({
      form: m[2] !== undefined ? "colon" : "fragment",
      path,
      start,
      end: end === undefined ? start : Number(end),
      from: backticks ? from - 1 : from,
      to: backticks ? to + 1 : to,
      coreFrom: from,
      coreTo: to,
      backticks,
      label: ""
    })
  }
  return found.sort((a, b) => a.from - b.from)
}

/** The citations in `text`, in order. */
export const parse = (text: string): ReadonlyArray<Citation> =>
  findIn(text, undefined).map((f) => ({ path: f.path, start_line: f.start, end_line: f.end, at: f.from, text: text.slice(f.from, f.to) }))

// ---------------------------------------------------------------------------------------------
// Checking one citation

interface Files {
  readonly lines: ReadonlyMap<string, number>
  /** Each end of an indexed path after a `/` (`cli/args.ts`, `args.ts`), and the one path it ends (null: several). */
  readonly suffixes: ReadonlyMap<string, string | null>
  /** Per file, the retrieved lines (line number → text) and the excerpts. */
  readonly retrieved: ReadonlyMap<string, { readonly lines: ReadonlyMap<number, string>; readonly excerpts: ReadonlyArray<RetrievedExcerpt> }>
}

const prepare = (context: Context): Files => {
  const lines = new Map(context.files.map((f) => [f.path, f.lines] as const))
  const retrieved = new Map<string, { lines: Map<number, string>; excerpts: Array<RetrievedExcerpt> }>()
  for (const excerpt of context.excerpts) {
    if (!lines.has(excerpt.path)) continue
    let entry = retrieved.get(excerpt.path)
    if (entry === undefined) retrieved.set(excerpt.path, (entry = { lines: new Map(), excerpts: [] }))
    entry.excerpts.push(excerpt)
    excerpt.text.split("\n").forEach((line, i) => {
      if (excerpt.start_line + i <= excerpt.end_line) entry.lines.set(excerpt.start_line + i, line)
    })
  }
  const suffixes = new Map<string, string | null>()
  for (const path of lines.keys()) {
    for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
      const suffix = path.slice(i + 1)
      suffixes.set(suffix, suffixes.has(suffix) ? null : path)
    }
  }
  return { lines, suffixes, retrieved }
}

/** The indexed path a cited one means: itself, or the one indexed path it is the end of. */
const resolvePath = (files: Files, written: string): string | undefined => {
  const path = written.replace(/^\.\//, "").replace(/^\//, "")
  if (files.lines.has(path)) return path
  return files.suffixes.get(path) ?? undefined
}

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

type Outcome =
  | { readonly kind: "kept"; readonly path: string; readonly start: number; readonly end: number; readonly why: string }
  | { readonly kind: "corrected"; readonly path: string; readonly start: number; readonly end: number; readonly why: string }
  | { readonly kind: "removed"; readonly why: string }

const span = (start: number, end: number) => (start === end ? `${start}` : `${start}-${end}`)
const linesOf = (start: number, end: number) => (start === end ? `line ${start}` : `lines ${start}-${end}`)
const outside = (start: number, end: number, path: string, total: number) =>
  `${linesOf(start, end)} ${start === end ? "is" : "are"} outside ${path} (${total} lines)`
const quoted = (quotes: ReadonlyArray<string>) => quotes.map((q) => `\`${q}\``).join(", ")

const check = (files: Files, found: Found, quotes: ReadonlyArray<string>): Outcome => {
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

// ---------------------------------------------------------------------------------------------
// Rewriting a unit (a sentence, or a line)

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
    const label = parse(found.label).length > 0 || found.label.trim() === found.path ? `${path}:${span(start, end)}` : found.label
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
const before = (unit: string, i: number): number => {
  while (i > 0 && /[\s([`]/.test(unit[i - 1]!)) i--
  return i
}

const SEPARATOR_AFTER = /^[ \t]*(?:,|;|and\b|or\b)[ \t]*/
const SEPARATOR_BEFORE = /[ \t]*(?:,|;|\band|\bor)[ \t]*$/
/** What may precede a unit's first citation for the unit to go when its citations do: a list marker, a "see". */
const LEAD_ONLY = /^[ \t]*(?:[-*+]|\d{1,3}[.)])?[ \t]*(?:(?:see(?: also)?|cf\.?|refer to)[ \t]*)?$/i
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
const rewrite = (unit: string, files: Files, atLineStart: boolean, tail: string): { text: string; outcomes: Array<Outcome> } => {
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
    if (f.form === "link" && f.label.trim().length > 0 && parse(f.label).length === 0 && f.label.trim() !== f.path) {
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
