/**
 * The grounding evaluation's own measures: a citation the checker passes really is in the file
 * and in what was retrieved, and the ranking and coverage numbers are counted as documented.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import type { Coverage } from "@huddle/domain/grounding/DeepInspection"
import * as CitationCheck from "@huddle/testkit/evals/grounding/CitationCheck"
import * as CoverageCheck from "@huddle/testkit/evals/grounding/CoverageCheck"
import { isSource } from "@huddle/testkit/evals/grounding/History"
import { firstHit, summarise } from "@huddle/testkit/evals/grounding/Ranking"

const root = mkdtempSync(join(tmpdir(), "grounding-eval-test-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
mkdirSync(join(root, "lib"))
const parse = ["'use strict';", "", "var parseKeys = function (key) {", "    return key.split('[');", "};", "", "module.exports = parseKeys;"]
writeFileSync(join(root, "lib/parse.js"), `${parse.join("\n")}\n`)
writeFileSync(join(root, "readme.markdown"), "# qs\n\nParses keys.\n")
const excerpts = [
  { path: "lib/parse.js", start_line: 3, end_line: 5, text: parse.slice(2, 5).join("\n") },
  { path: "readme.markdown", start_line: 1, end_line: 3, text: "# qs\n\nParses keys." }
]

describe("citation validity", () => {
  it("passes only citations of retrieved lines of existing files that hold the code quoted beside them", () => {
    const result = CitationCheck.validate(
      root,
      [
        "- ok: Keys are split in `return key.split('[');` (lib/parse.js:3-5)",
        "- docs: As readme.markdown:3 says",
        "- missing: See lib/nope.js:3",
        "- past: See lib/parse.js:9-12",
        "- unseen: See lib/parse.js:7",
        "- misquoted: `var stringify = function` is at `lib/parse.js:3-4`"
      ].join("\n"),
      excerpts
    )
    expect(result.citations).toBe(6)
    expect(result.valid).toBe(2)
    expect(result.failures).toEqual([
      "missing: lib/nope.js:3: no such file",
      "past: lib/parse.js:9-12: outside the file (7 lines)",
      "unseen: lib/parse.js:7: not within a retrieved excerpt",
      "misquoted: lib/parse.js:3-4: does not hold `var stringify = function`"
    ])
  })

  it("writes an answer with planted invalid citations, none of which survive verification", () => {
    const outcome = CitationCheck.check(root, excerpts, [
      { path: "lib/parse.js", lines: 7 },
      { path: "readme.markdown", lines: 3 }
    ])
    expect(outcome.written.invalid).toBeGreaterThanOrEqual(2)
    expect(outcome.invalidKept).toBe(0)
    expect(outcome.validInOutput).toBe(outcome.output)
    expect(outcome.validKept).toBe(outcome.written.valid)
  })
})

describe("ranking measures", () => {
  it("takes the first expected file's rank over the whole ranking", () => {
    expect(firstHit(["a", "b", "c"], ["c", "b"])).toBe(2)
    expect(firstHit(["a"], ["z"])).toBeUndefined()
    const s = summarise([1, 3, undefined, 12])
    expect(s).toMatchObject({ questions: 4, recallAt5: 0.5, recallAt10: 0.5 })
    expect(s.mrr).toBeCloseTo((1 + 1 / 3 + 0 + 1 / 12) / 4, 10)
  })

  it("counts a changed file as an answer when it is code and not a test", () => {
    expect(["src/a.ts", "bench/run.mjs", "src/a.d.ts", "src/a.test.ts", "packages/x/test/helpers.ts", "docs/a.md"].filter(isSource)).toEqual([
      "src/a.ts",
      "bench/run.mjs"
    ])
  })
})

describe("coverage against the truth", () => {
  it("counts each file as tested or untested on both sides, a file on one side only against both", () => {
    const coverage = {
      sources: [
        { path: "lib/index.js", tests: [] },
        { path: "lib/utils.js", tests: [{ path: "test/utils.js", via: "import" }] },
        { path: "lib/parse.js", tests: [] }
      ],
      untested: ["lib/index.js", "lib/parse.js"]
    } as unknown as Coverage
    const counts = CoverageCheck.compare(coverage, {
      pkg: "qs",
      tested: { "lib/index.js": ["test/parse.js"], "lib/utils.js": ["test/utils.js"] },
      untested: ["lib/parse.js", "lib/formats.js"]
    })
    expect(counts.tested).toEqual({ both: 1, coverageOnly: 0, truthOnly: 1 })
    expect(counts.untested).toEqual({ both: 1, coverageOnly: 1, truthOnly: 1 })
    expect(CoverageCheck.recall(counts.tested)).toBe(0.5)
    expect(CoverageCheck.precision(counts.untested)).toBe(0.5)
    expect(counts.disagreements).toEqual([
      "qs/lib/formats.js: coverage says not a source file, truth says untested",
      "qs/lib/index.js: coverage says untested, truth says tested"
    ])
  })
})
