/**
 * A file of a connected repository as the index stored it, for people to read (the file view a
 * citation links to). The text comes from the stored chunks, not the disk: what is shown is what
 * answers were grounded in, on any instance, and a path that was not indexed (skipped, ignored,
 * outside the root) has no text to show.
 */
import { Schema } from "effect"
import type { Chunk } from "./Snapshot.js"
import { FileCategory } from "./Snapshot.js"

/** The most lines one answer carries (a file the indexer keeps is at most 1 MiB); ask for a range for more. */
export const maxLines = 2000

export class RepositoryFile extends Schema.Class<RepositoryFile>("RepositoryFile")({
  workspace_id: Schema.String,
  path: Schema.String,
  category: FileCategory,
  language: Schema.String,
  bytes: Schema.NonNegativeInt,
  /** The snapshot the text is from. */
  index_version: Schema.NonNegativeInt,
  /** The file's line count. */
  total_lines: Schema.NonNegativeInt,
  /** The lines in `text`, 1-based and inclusive; `end_line < start_line` for an empty file or range. */
  start_line: Schema.Int,
  end_line: Schema.Int,
  /** Lines `start_line..end_line`, joined with `\n` (no final line break). */
  text: Schema.String
}) {}

/** Lines `from..to` of a file (inclusive, 1-based), clipped to the file. */
export interface LineRange {
  readonly from: number
  readonly to: number
}

/** The range asked for, clipped to the file and to `maxLines`: `from` defaults to 1, `to` to as far as allowed. */
export const clip = (asked: { readonly from?: number | undefined; readonly to?: number | undefined }, totalLines: number): LineRange => {
  const from = Math.max(1, asked.from ?? 1)
  const to = Math.min(totalLines, asked.to ?? Number.MAX_SAFE_INTEGER, from + maxLines - 1)
  return { from, to }
}

/**
 * Lines `from..to` put back together from chunks that cover them (chunks overlap; each one's text
 * is exactly its lines joined with `\n`). A line no chunk covers, which the indexer never leaves,
 * would read as empty rather than fail the page.
 */
export const linesOf = (chunks: ReadonlyArray<Chunk>, range: LineRange): ReadonlyArray<string> => {
  const count = Math.max(0, range.to - range.from + 1)
  const lines: Array<string> = new Array(count).fill("")
  for (const chunk of chunks) {
    const text = chunk.text.split("\n")
    for (let line = Math.max(chunk.start_line, range.from); line <= Math.min(chunk.end_line, range.to); line++) {
      lines[line - range.from] = text[line - chunk.start_line] ?? ""
    }
  }
  return lines
}
