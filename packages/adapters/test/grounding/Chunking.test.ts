import { describe, expect, it } from "@effect/vitest"
import { chunk, splitLines } from "@huddle/adapters/grounding/Chunking"
import { FastCheck } from "effect"
import { numberedLines } from "./fixtures.js"

describe("Chunking", () => {
  it("cuts 40-line windows that overlap by 8, the last ending at the last line", () => {
    const chunks = chunk("a.ts", numberedLines(100))
    expect(chunks.map((c) => [c.start_line, c.end_line])).toEqual([[1, 40], [33, 72], [65, 100]])
    expect(chunks[1]!.text).toBe(numberedLines(72).slice(32).join("\n"))
    expect(chunks.every((c) => c.path === "a.ts")).toBe(true)
  })

  it("keeps a short file whole, and gives an empty file no chunk", () => {
    expect(chunk("a.ts", ["only"]).map((c) => [c.start_line, c.end_line, c.text])).toEqual([[1, 1, "only"]])
    expect(chunk("a.ts", numberedLines(40)).map((c) => [c.start_line, c.end_line])).toEqual([[1, 40]])
    expect(chunk("a.ts", numberedLines(41)).map((c) => [c.start_line, c.end_line])).toEqual([[1, 40], [33, 41]])
    expect(chunk("a.ts", [])).toEqual([])
  })

  it("numbers lines as an editor does: a final line break ends the last line, CRLF is one break", () => {
    expect(splitLines("")).toEqual([])
    expect(splitLines("a")).toEqual(["a"])
    expect(splitLines("a\n")).toEqual(["a"])
    expect(splitLines("a\r\nb\r\n")).toEqual(["a", "b"])
    expect(splitLines("a\n\nb\n\n")).toEqual(["a", "", "b", ""])
  })

  it("covers every line, and each chunk's text is exactly its lines", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(FastCheck.string({ unit: "grapheme-ascii" }).map((s) => s.replace(/[\r\n]/g, "")), { maxLength: 200 }), (lines) => {
        const chunks = chunk("f", lines)
        const covered = new Set<number>()
        for (const c of chunks) {
          expect(c.text).toBe(lines.slice(c.start_line - 1, c.end_line).join("\n"))
          expect(c.end_line - c.start_line + 1).toBeLessThanOrEqual(40)
          for (let line = c.start_line; line <= c.end_line; line++) covered.add(line)
        }
        expect(covered.size).toBe(lines.length)
        if (lines.length > 0) expect(chunks.at(-1)!.end_line).toBe(lines.length)
      })
    )
  })
})
