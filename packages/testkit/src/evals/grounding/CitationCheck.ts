/**
 * Citation validity: for a question, an answer is written that cites the retrieved excerpts
 * correctly (their `path:start-end`, quoting a line of each) and also cites what must not reach a
 * reader: a file that does not exist, lines past the end of a file, and lines that do not hold the
 * code quoted beside them. `Citations.verify` rewrites the answer; every citation left in its
 * output is then checked against the files on disk, not against the index:
 * - the file exists, and the lines are inside it;
 * - the lines lie within an excerpt that was retrieved, and the file's lines there are the
 *   excerpt's text (what the model was shown is what the reader is sent to);
 * - when the sentence quotes code, the cited lines hold it.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Citations from "@huddle/domain/grounding/Citations"

export interface Excerpt {
  readonly path: string
  readonly start_line: number
  readonly end_line: number
  readonly text: string
}

export interface Outcome {
  /** Citations written into the answer: correct ones, and planted invalid ones. */
  readonly written: { readonly valid: number; readonly invalid: number }
  /** Citations in the verified output, and those of them that passed every check. */
  readonly output: number
  readonly validInOutput: number
  /** Correct citations that reached the output unchanged. */
  readonly validKept: number
  /** Planted invalid citations that reached the output as written (must be none). */
  readonly invalidKept: number
  /** Why output citations failed, for the report. */
  readonly failures: ReadonlyArray<string>
}

const collapse = (text: string) => text.replace(/\s+/g, " ").trim()

const fileLines = (text: string): Array<string> => {
  const lines = text.split("\n")
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop()
  return lines
}

/**
 * A line of the excerpt worth quoting: distinctive (12 to 100 characters), with no backtick (it
 * would end the quote) and no sentence end inside (`. `, `? `: the answer is checked a sentence at a time).
 */
const quotable = (excerpt: Excerpt): string | undefined =>
  excerpt.text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length >= 12 && line.length <= 100 && !line.includes("`") && !/[.!?]\s/.test(line) && !/[.!?]$/.test(line))
    .sort((a, b) => b.length - a.length)[0]

const CITATION = /([\w@+~./-]*[\w@+~-]):(\d+)(?:-(\d+))?/g

interface Cited {
  readonly text: string
  readonly path: string
  readonly start_line: number
  readonly end_line: number
}

interface Line {
  readonly label: string
  readonly planted: "valid" | "invalid"
  readonly text: string
}

export interface Validation {
  /** Citations found in the text, and those that passed every check. */
  readonly citations: number
  readonly valid: number
  /** Why the others failed, each with the line's label (`- label: …`) when it has one. */
  readonly failures: ReadonlyArray<string>
}

const SPAN_CITATION = /^[\w@+~./-]*[\w@+~-]:\d+(?:-\d+)?$/

/**
 * Checks every citation of `text` against the files under `root` and the excerpts retrieved (see
 * the module's comment), a line at a time: a line's quoted code (its first backticked span that
 * is not itself a citation) goes with the citations of that line.
 */
export const validate = (root: string, text: string, excerpts: ReadonlyArray<Excerpt>): Validation => {
  const byPath = new Map<string, Array<Excerpt>>()
  for (const excerpt of excerpts) byPath.set(excerpt.path, [...(byPath.get(excerpt.path) ?? []), excerpt])
  const problemOf = (citation: Cited, quote: string | undefined): string | undefined => {
    const shownAs = citation.text
    const absolute = join(root, citation.path)
    if (!existsSync(absolute)) return `${shownAs}: no such file`
    const content = fileLines(readFileSync(absolute, "utf8"))
    const start = citation.start_line
    const end = citation.end_line
    if (start < 1 || end < start || end > content.length) return `${shownAs}: outside the file (${content.length} lines)`
    const holding = (byPath.get(citation.path) ?? []).find((e) => e.start_line <= start && end <= e.end_line)
    if (holding === undefined) return `${shownAs}: not within a retrieved excerpt`
    const shown = holding.text.split("\n").slice(start - holding.start_line, end - holding.start_line + 1)
    if (shown.join("\n") !== content.slice(start - 1, end).join("\n")) return `${shownAs}: the file's lines differ from the excerpt's`
    if (quote !== undefined && !collapse(content.slice(start - 1, end).join("\n")).includes(collapse(quote))) {
      return `${shownAs}: does not hold \`${quote}\``
    }
    return undefined
  }

  let citations = 0
  let valid = 0
  const failures: Array<string> = []
  for (const line of text.split("\n")) {
    const label = /^- (\w+): /.exec(line)?.[1]
    const spans = [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
    const quote = spans.find((span) => !SPAN_CITATION.test(span))
    // Every `something:N` or `something:N-M`, in backticks or not, outside quoted code: stricter than
    // `Citations.parse`, which without the repository's files passes over `readme.markdown:3`.
    const bare = line.replace(/`[^`]*`/g, " ")
    const found = [...spans.filter((span) => SPAN_CITATION.test(span)), ...[...bare.matchAll(CITATION)].map((m) => m[0])]
    for (const written of found) {
      const m = /^(.*):(\d+)(?:-(\d+))?$/.exec(written)!
      citations += 1
      const problem = problemOf({ text: written, path: m[1]!, start_line: Number(m[2]), end_line: Number(m[3] ?? m[2]) }, quote)
      if (problem === undefined) valid += 1
      else failures.push(`${label ?? "?"}: ${problem}`)
    }
  }
  return { citations, valid, failures }
}

/** Runs the check for one question's retrieved excerpts, against the package at `root`. */
export const check = (root: string, excerpts: ReadonlyArray<Excerpt>, files: ReadonlyArray<Citations.CitableFile>): Outcome => {
  const written: Array<Line> = []
  const quoted = excerpts.slice(0, 3).flatMap((excerpt) => {
    const quote = quotable(excerpt)
    return quote === undefined ? [] : [{ excerpt, quote }]
  })
  const cite = (e: Excerpt) => `${e.path}:${e.start_line}-${e.end_line}`
  quoted.forEach(({ excerpt, quote }, i) => {
    written.push({ label: `v${i + 1}`, planted: "valid", text: `The code that does it includes \`${quote}\` (${cite(excerpt)})` })
  })
  written.push({ label: "missing", planted: "invalid", text: "The options are read in src/no/such/file.js:12-20" })
  const first = quoted[0]
  if (first !== undefined) {
    const total = files.find((f) => f.path === first.excerpt.path)?.lines ?? first.excerpt.end_line
    written.push({ label: "past", planted: "invalid", text: `Its edge cases are handled at ${first.excerpt.path}:${total + 10}-${total + 25}` })
    const other = quoted[1]
    if (other !== undefined && !other.excerpt.text.includes(first.quote)) {
      written.push({ label: "misquoted", planted: "invalid", text: `The call \`${first.quote}\` is made in ${cite(other.excerpt)}` })
    }
  }
  const answer = written.map((line) => `- ${line.label}: ${line.text}\n`).join("")
  const verified = Citations.verify(answer, { files, excerpts })
  const outputLines = new Set(verified.text.split("\n"))
  const unchanged = (planted: Line["planted"]) =>
    written.filter((line) => line.planted === planted && outputLines.has(`- ${line.label}: ${line.text}`)).length
  const validation = validate(root, verified.text, excerpts)
  return {
    written: { valid: written.filter((w) => w.planted === "valid").length, invalid: written.filter((w) => w.planted === "invalid").length },
    output: validation.citations,
    validInOutput: validation.valid,
    validKept: unchanged("valid"),
    invalidKept: unchanged("invalid"),
    failures: validation.failures
  }
}
