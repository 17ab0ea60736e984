import { describe, expect, it } from "@effect/vitest"
import { CitationFilter, type Context, parse, verify } from "@huddle/domain/grounding/Citations"
import { FastCheck as fc } from "effect"

const argsLines = Array.from({ length: 40 }, (_, i) => `  // line ${i + 1}`)
argsLines[11] = "export function parseArgs(argv: ReadonlyArray<string>): Flags {"
argsLines[12] = "  const flags = { verbose: false }"
argsLines[29] = "export const usage = \"huddle [-v]\""
const retryLines = Array.from({ length: 20 }, (_, i) => (i === 4 ? "  await sleep(100 * 2 ** attempt)" : `  // retry ${i + 1}`))

const context: Context = {
  files: [
    { path: "src/cli/args.ts", lines: 40 },
    { path: "src/net/retry.ts", lines: 20 },
    { path: "test/cli/args.ts", lines: 10 },
    { path: "README.md", lines: 10 },
    { path: "Makefile", lines: 5 },
    { path: ".github/FUNDING.yml", lines: 3 }
  ],
  excerpts: [
    { path: "src/cli/args.ts", start_line: 1, end_line: 20, text: argsLines.slice(0, 20).join("\n") },
    { path: "src/net/retry.ts", start_line: 1, end_line: 20, text: retryLines.join("\n") }
  ]
}

describe("finding citations", () => {
  it("finds path:line, path:start-end, #L fragments, backticked citations and markdown links", () => {
    const text =
      "See src/cli/args.ts:12, `src/net/retry.ts:3-9`, src/a.ts#L5-L7, lib/x.py:10:4 and [the parser](src/cli/args.ts#L12-L20), or [docs](README.md)."
    expect(parse(text).map((c) => [c.path, c.start_line, c.end_line, c.text])).toEqual([
      ["src/cli/args.ts", 12, 12, "src/cli/args.ts:12"],
      ["src/net/retry.ts", 3, 9, "`src/net/retry.ts:3-9`"],
      ["src/a.ts", 5, 7, "src/a.ts#L5-L7"],
      ["lib/x.py", 10, 10, "lib/x.py:10:4"],
      ["src/cli/args.ts", 12, 20, "[the parser](src/cli/args.ts#L12-L20)"],
      ["README.md", null, null, "[docs](README.md)"]
    ])
  })

  it("leaves alone what only looks like one: URLs, times, hosts, versions, abbreviations", () => {
    expect(parse("Open https://github.com/o/r/blob/main/src/a.ts#L10 at 10:30 on localhost:8080 with v1.2:3, e.g. now.")).toEqual([])
    expect(parse("Call [the API](https://example.com/api) or see [above](#setup).")).toEqual([])
  })
})

describe("verifying citations", () => {
  it("keeps a citation of lines that exist, and reports it", () => {
    const out = verify("The flags are parsed in src/cli/args.ts:12-13.", context)
    expect(out).toEqual({
      text: "The flags are parsed in src/cli/args.ts:12-13.",
      references: [{ path: "src/cli/args.ts", start_line: 12, end_line: 13, why: "as cited" }],
      checked: 1,
      corrected: 0,
      removed: 0
    })
  })

  it("removes a citation of a file that is not in the repository, leaving the sentence readable", () => {
    expect(verify("The parser (src/nope.ts:10) reads flags.", context).text).toBe("The parser reads flags.")
    expect(verify("Flags are read in `src/nope.ts:10`, then checked.", context).text).toBe("Flags are read in, then checked.")
    expect(verify("Sources: src/cli/args.ts:12, src/nope.ts:3.", context).text).toBe("Sources: src/cli/args.ts:12.")
    expect(verify("Sources: src/nope.ts:3 and src/cli/args.ts:12.", context).text).toBe("Sources: src/cli/args.ts:12.")
    expect(verify("Sources:\n- src/nope.ts:3\n- src/cli/args.ts:12\n", context).text).toBe("Sources:\n- src/cli/args.ts:12\n")
    // A sentence or a list item that was only a citation goes.
    const out = verify("It retries. See src/nope.ts:4. Then it stops.", context)
    expect(out).toMatchObject({ text: "It retries. Then it stops.", checked: 1, removed: 1, references: [] })
    // And a word stays apart from what followed the citation.
    expect(verify("Read [x](src/nope.ts#L1)src/net/retry.ts:5 now.", context).text).toBe("Read x src/net/retry.ts:5 now.")
  })

  it("checks a path that starts with a dot (.github/…, .eslintrc.json) like any other", () => {
    expect(parse("See .github/FUNDING.yml:1-2.").map((c) => [c.path, c.start_line, c.end_line])).toEqual([[".github/FUNDING.yml", 1, 2]])
    expect(verify("Funding is in .github/FUNDING.yml:1-12.", context)).toMatchObject({ text: "Funding is in.", checked: 1, removed: 1 })
    expect(verify("Lint rules: .eslintrc.json:4.", context)).toMatchObject({ checked: 1, removed: 1 })
    expect(verify("Funding: .github/FUNDING.yml:1-2 here.", context)).toMatchObject({
      text: "Funding: .github/FUNDING.yml:1-2 here.",
      references: [{ path: ".github/FUNDING.yml", start_line: 1, end_line: 2, why: "as cited" }]
    })
  })

  it("checks a citation that a removal leaves where two were glued by a dot", () => {
    // `.src/cli/args.ts:12` is what is left, and no file has that path.
    expect(verify("See src/nope.ts:3.src/cli/args.ts:12 for it.", context)).toMatchObject({ text: "See for it.", checked: 2, removed: 2 })
    expect(verify("See src/nope.ts:3.src/nope.ts:4 for it.", context)).toMatchObject({ text: "See for it.", checked: 2, removed: 2 })
  })

  it("removes a markdown link to a missing file but keeps its words", () => {
    expect(verify("Read [the parser](src/nope.ts#L3) first.", context).text).toBe("Read the parser first.")
    expect(verify("Read [src/nope.ts:3](src/nope.ts#L3) first.", context).text).toBe("Read first.")
  })

  it("corrects lines outside the file to the nearest retrieved excerpt, else removes them", () => {
    const out = verify("Usage is printed at src/cli/args.ts:90-95.", context)
    expect(out.text).toBe("Usage is printed at src/cli/args.ts:1-20.")
    expect(out.references).toEqual([
      { path: "src/cli/args.ts", start_line: 1, end_line: 20, why: "lines 90-95 are outside src/cli/args.ts (40 lines); the nearest retrieved excerpt is lines 1-20" }
    ])
    expect(out).toMatchObject({ checked: 1, corrected: 1, removed: 0 })
    // Nothing of the README was retrieved.
    expect(verify("Install it (README.md:99).", context)).toMatchObject({ text: "Install it.", removed: 1 })
  })

  it("moves a citation to the lines that hold the code the sentence quotes", () => {
    const out = verify("`parseArgs` is defined at src/cli/args.ts:3.", context)
    expect(out.text).toBe("`parseArgs` is defined at src/cli/args.ts:12.")
    expect(out.references[0]!.why).toBe("line 3 does not show `parseArgs`; `parseArgs` is at line 12")
    // Quoted after it, qualified, or called: the same.
    expect(verify("See src/net/retry.ts:1-2: it waits with `sleep(100 * 2 ** attempt)`.", context).text).toBe(
      "See src/net/retry.ts:5: it waits with `sleep(100 * 2 ** attempt)`."
    )
    // Where the quote is, the citation stays.
    expect(verify("src/cli/args.ts:12-13 defines `parseArgs()`.", context)).toMatchObject({ corrected: 0, removed: 0 })
  })

  it("removes a citation whose quoted code no retrieved excerpt of the file contains", () => {
    const out = verify("`frobnicate` lives in src/cli/args.ts:12.", context)
    expect(out).toMatchObject({ text: "`frobnicate` lives in.", removed: 1 })
    // Lines inside the file but never retrieved cannot show the quote.
    expect(verify("`usage` is at src/cli/args.ts:30.", context)).toMatchObject({ removed: 1 })
  })

  it("does not take a quoted statement for its names: the cited lines must hold its text", () => {
    // Every name in it is on lines 12-13; the statement is nowhere.
    expect(verify("It starts with `const verbose = parseArgs(flags)` (src/cli/args.ts:12-13).", context)).toMatchObject({
      text: "It starts with `const verbose = parseArgs(flags)`.",
      removed: 1
    })
    // A called name is found by its names, wherever its arguments' types are written.
    expect(verify("`parseArgs(argv)` is at src/cli/args.ts:12.", context)).toMatchObject({ corrected: 0, removed: 0 })
  })

  it("gives each quote to the citation it stands next to", () => {
    const out = verify("`parseArgs` (src/cli/args.ts:12) is retried by `sleep` (src/net/retry.ts:5).", context)
    expect(out).toMatchObject({ corrected: 0, removed: 0, checked: 2 })
  })

  it("completes a path that is the end of exactly one indexed path", () => {
    const out = verify("See retry.ts:5.", context)
    expect(out.text).toBe("See src/net/retry.ts:5.")
    expect(out).toMatchObject({ corrected: 1, references: [{ path: "src/net/retry.ts", start_line: 5, end_line: 5 }] })
    // args.ts ends two paths: which one is meant is unknown.
    expect(verify("It parses flags (args.ts:5).", context)).toMatchObject({ text: "It parses flags.", removed: 1 })
  })

  it("rewrites a corrected citation in the form it was written", () => {
    expect(verify("At `src/cli/args.ts:70`.", context).text).toBe("At `src/cli/args.ts:1-20`.")
    expect(verify("At src/cli/args.ts#L70.", context).text).toBe("At src/cli/args.ts#L1-L20.")
    expect(verify("At [args](src/cli/args.ts#L70).", context).text).toBe("At [args](src/cli/args.ts#L1-L20).")
    expect(verify("At [src/cli/args.ts:70](src/cli/args.ts#L70).", context).text).toBe("At [src/cli/args.ts:1-20](src/cli/args.ts#L1-L20).")
  })

  it("cites a file without an extension when the repository has it", () => {
    expect(verify("Run Makefile:2 first.", context)).toMatchObject({ text: "Run Makefile:2 first.", checked: 1, removed: 0 })
  })
})

describe("filtering a streamed answer", () => {
  it("never emits a citation before it is verified", () => {
    const filter = new CitationFilter(context)
    const emitted: Array<string> = []
    for (const c of "The parser src/nope.ts:12 reads flags.\n") emitted.push(filter.push(c))
    emitted.push(filter.end())
    expect(emitted.join("")).toBe("The parser reads flags.\n")
    expect(emitted.some((piece) => piece.includes("src/"))).toBe(false)
    expect(filter.report()).toMatchObject({ checked: 1, removed: 1 })
  })

  it("emits prose as it comes, holding back only the unfinished word", () => {
    const filter = new CitationFilter(context)
    expect(filter.push("It retries ")).toBe("It retries")
    expect(filter.push("with backoff, ")).toBe(" with backoff,")
    expect(filter.push("see src/net/")).toBe(" see")
    expect(filter.push("retry.ts:5 and")).toBe("")
    expect(filter.push(" more.\nNext")).toBe(" src/net/retry.ts:5 and more.\n")
    expect(filter.end()).toBe("Next")
  })

  const piece = fc.constantFrom(
    "The parser", "reads flags", " ", " ", "  ", ". ", ".", ", ", "\n", "- ", "1. ", "(", ")", "[", "]", "`", ":", " and ", "#L",
    "src/cli/args.ts:12", "src/cli/args.ts:12-13", "src/cli/args.ts:90-95", "src/nope.ts:3", "`src/net/retry.ts:5`", "retry.ts:5", "args.ts:5",
    "[the parser](src/cli/args.ts#L12-L20)", "[x](src/nope.ts#L1)", "[src/nope.ts:2](src/nope.ts#L2)", "[docs](README.md)",
    "`parseArgs`", "`sleep`", "`frobnicate`", "src/", "README.md:3", "https://example.com/a.ts#L3", "10:30"
  )
  const texts = fc.array(piece, { maxLength: 30 }).map((pieces) => pieces.join(""))
  // Fragments that join into near-citations, broken links and paths glued to words.
  const noise = fc
    .array(fc.constantFrom("src/cli/args.ts", "retry.ts", "Makefile", "src/nope.ts", ":", "1", "5", "99", "-", "#L", "(", ")", "[", "]", "`", " ", "\n", ".", ",", "x", "see ", "- ", "/", "./"), { maxLength: 40 })
    .map((fragments) => fragments.join(""))
  const split = (text: string, cuts: ReadonlyArray<number>) => {
    const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
    return [0, ...at].map((from, i) => text.slice(from, at[i] ?? text.length))
  }
  const streamed = (text: string, cuts: ReadonlyArray<number>) => {
    const filter = new CitationFilter(context)
    const emitted: Array<string> = []
    for (const delta of split(text, cuts)) emitted.push(filter.push(delta))
    emitted.push(filter.end())
    return { emitted, report: filter.report() }
  }
  const cuts = fc.array(fc.nat(), { maxLength: 12 })

  it.prop("gives what verify gives on the whole text, however the text is split", [fc.oneof(texts, noise), cuts], ([text, at]) => {
    const whole = verify(text, context)
    const { emitted, report } = streamed(text, at)
    expect(emitted.join("")).toBe(whole.text)
    expect(report).toEqual({ references: whole.references, checked: whole.checked, corrected: whole.corrected, removed: whole.removed })
  }, { fastCheck: { numRuns: 1000 } })

  it.prop("emits, at every step, only text that the verified answer begins with", [fc.oneof(texts, noise), cuts], ([text, at]) => {
    const final = verify(text, context).text
    let so = ""
    for (const piece of streamed(text, at).emitted) {
      so += piece
      expect(final.startsWith(so)).toBe(true)
    }
  }, { fastCheck: { numRuns: 1000 } })

  it("keeps a citation written from the repository's root as written, verified against the indexed path", () => {
    const out = verify("./src/cli/args.ts:1 and /src/cli/args.ts:2", context)
    expect(out.text).toBe("./src/cli/args.ts:1 and /src/cli/args.ts:2")
    expect(out.references.map((r) => r.path)).toEqual(["src/cli/args.ts", "src/cli/args.ts"])
    expect(out.removed).toBe(0)
  })

  it.prop("leaves no citation it did not verify", [fc.oneof(texts, noise)], ([text]) => {
    const out = verify(text, context)
    const known = new Map(context.files.map((f) => [f.path, f.lines]))
    for (const citation of parse(out.text)) {
      // Written from the root (`./src/a.ts`, `/src/a.ts`) is the indexed path, kept as written.
      const lines = known.get(citation.path.replace(/^\.?\//, ""))
      expect(lines, citation.text).toBeDefined()
      if (citation.start_line !== null) expect(citation.end_line!, citation.text).toBeLessThanOrEqual(lines!)
    }
    // Each citation kept or corrected is a reference (the same lines cited twice, once).
    expect(out.references.length).toBeLessThanOrEqual(out.checked - out.removed)
    expect(out.references.length === 0).toBe(out.checked === out.removed)
  }, { fastCheck: { numRuns: 1000 } })
})
