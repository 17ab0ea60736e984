/**
 * Line chunks: what retrieval ranks and an excerpt quotes. Plain windows of 40 lines, each
 * starting 32 lines after the previous one (an overlap of 8), so that a passage cut by one window's
 * end is whole in the next; the last window ends at the file's last line. 40 lines is about one
 * function or a screenful, small enough to quote, large enough to carry its context.
 *
 * Lines are what an editor numbers: split at `\n` (a `\r` before it belongs to the line break), a
 * final line break does not start another line, and an empty file has no lines. A chunk's text is
 * exactly lines `start_line..end_line` joined with `\n`.
 */
import { Chunk } from "@huddle/domain/grounding/Snapshot"

export const windowLines = 40
export const overlapLines = 8

/** The file's lines, without their line breaks. */
export const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split(/\r?\n/)
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

export const chunk = (path: string, lines: ReadonlyArray<string>, size = windowLines, overlap = overlapLines): Array<Chunk> => {
  const chunks: Array<Chunk> = []
  const step = Math.max(1, size - overlap)
  for (let start = 1; start <= lines.length; start += step) {
    const end = Math.min(start + size - 1, lines.length)
    chunks.push(new Chunk({ path, start_line: start, end_line: end, text: lines.slice(start - 1, end).join("\n") }, { disableValidation: true }))
    if (end === lines.length) break
  }
  return chunks
}
