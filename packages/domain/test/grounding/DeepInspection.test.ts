import { describe, expect, it } from "@effect/vitest"
import { coverage, type DeepKind, modeOf } from "@huddle/domain/grounding/DeepInspection"
import { IndexedFile, SkippedFile, Snapshot, TestLink } from "@huddle/domain/grounding/Snapshot"
import { FastCheck as fc } from "effect"

const deep: ReadonlyArray<readonly [string, DeepKind]> = [
  ["Which modules have no tests?", "coverage"],
  ["List the untested files", "coverage"],
  ["What is the test coverage of this repo?", "coverage"],
  ["What's our test coverage like?", "coverage"],
  ["Which source files aren't covered by any test?", "coverage"],
  ["Are there parts of the codebase without tests?", "coverage"],
  ["Find files that lack unit tests", "coverage"],
  ["How well tested is this project?", "coverage"],
  ["Is everything tested?", "coverage"],
  ["Which functions are missing tests across the codebase?", "coverage"],
  ["Does the project have any tests?", "coverage"],
  ["Audit this codebase", "audit"],
  ["Please audit the repo for dead code", "audit"],
  ["Find bugs anywhere in the code base", "audit"],
  ["What are the biggest code quality problems in this repo?", "audit"],
  ["Where is the technical debt in this project?", "audit"],
  ["Review the entire code for issues", "audit"],
  ["Do a code review of the whole repository", "audit"],
  ["Can you review the codebase?", "audit"],
  ["What could be improved across the code?", "audit"],
  ["Do a security review of the repository", "security"],
  ["Are there any security vulnerabilities in this codebase?", "security"],
  ["Run a security audit", "security"],
  ["What are the security risks in this project?", "security"],
  ["Check the whole app for injection flaws", "security"],
  ["Is this repo vulnerable to SQL injection anywhere?", "security"],
  ["Look for hardcoded secrets across the codebase", "security"],
  ["Threat model this service", "security"],
  ["Is there anything insecure in the codebase?", "security"],
  ["Give me an architecture overview", "architecture"],
  ["How is this codebase structured?", "architecture"],
  ["What does this repo do overall?", "architecture"],
  ["Explain the overall architecture", "architecture"],
  ["What are the main components of the project?", "architecture"],
  ["Walk me through the codebase", "architecture"],
  ["High-level overview of the repository please", "architecture"],
  ["How do the packages fit together?", "architecture"],
  ["What's the project structure?", "architecture"],
  ["Describe the system design of this application", "architecture"],
  ["Summarize the codebase.", "architecture"],
  ["Give me a summary of this repository", "architecture"],
  ["How do the modules depend on each other?", "architecture"],
  ["What are the main classes?", "architecture"]
]

const focused: ReadonlyArray<string> = [
  "How does parseArgs handle the -v flag?",
  "Where is the retry backoff implemented?",
  "What does src/cli/args.ts do?",
  "Is the login handler vulnerable to timing attacks?",
  "Why does `Router.pick` fall back to another provider?",
  "Are there tests for parseArgs?",
  "How is the retry logic tested?",
  "Fix the failing test in test/retry.test.ts",
  "What's the architecture of the Router class?",
  "How does the caching architecture work?",
  "Add a test for the credit reservation",
  "Does the auth middleware check token expiry?",
  "What is the coverage of the `Credits` service?",
  "Write a unit test for parseArgs",
  "How do I run the tests in this repo?",
  "What does the README say about installation?",
  "Sanitize the user input in the signup handler to prevent XSS",
  "Review this function for bugs: parseArgs",
  "Where does the project load its secrets from?",
  "Rename the retry option to maxRetries",
  "Why is the test for Router flaky?",
  "What does the error INSUFFICIENT_CREDITS mean?",
  "Fix the bug in the login flow of this app",
  "Explain the error handling in this project",
  "How do I build this project?",
  "What does the function settle do?",
  "How are API keys hashed?",
  "Where is the retry logic and is it well tested?",
  "What tests exist for the credits module?",
  "What's the entry point of the app?",
  "Summarize the repository's config loading"
]

describe("deep or focused", () => {
  it.each(deep)("%s → deep (%s)", (question, kind) => {
    const mode = modeOf(question)
    expect(mode).toMatchObject({ mode: "deep", kind })
    expect(mode.reason.length).toBeGreaterThan(0)
  })

  it.each(focused)("%s → focused", (question) => {
    expect(modeOf(question)).toMatchObject({ mode: "focused" })
  })
})

const file = (path: string, category: IndexedFile["category"]) => new IndexedFile({ path, category, language: "typescript", lines: 10, bytes: 100, hash: "0" })

describe("test coverage", () => {
  const snapshot = new Snapshot({
    files: [
      file("src/credits/Credits.ts", "source"),
      file("src/credits/Ledger.ts", "source"),
      file("src/auth/Keys.ts", "source"),
      file("src/auth/Sessions.ts", "source"),
      file("src/main.ts", "source"),
      file("test/credits/Credits.test.ts", "test"),
      file("test/auth/Keys.test.ts", "test"),
      file("package.json", "config"),
      file("README.md", "docs")
    ],
    skipped: [new SkippedFile({ path: "logo.png", reason: "binary" })],
    chunks: [],
    definitions: [],
    imports: [],
    links: [
      new TestLink({ source: "src/credits/Credits.ts", test: "test/credits/Credits.test.ts", via: "name" }),
      new TestLink({ source: "src/credits/Credits.ts", test: "test/credits/Credits.test.ts", via: "import" }),
      new TestLink({ source: "src/credits/Ledger.ts", test: "test/credits/Credits.test.ts", via: "import" }),
      new TestLink({ source: "src/auth/Keys.ts", test: "test/auth/Keys.test.ts", via: "name" }),
      // Links to files that are not indexed sources say nothing about the repository.
      new TestLink({ source: "src/gone.ts", test: "test/auth/Keys.test.ts", via: "import" }),
      new TestLink({ source: "README.md", test: "test/auth/Keys.test.ts", via: "import" })
    ]
  })

  it("lists every source file with its tests, and those with none, with counts by category", () => {
    const result = coverage(snapshot)
    expect(result).toMatchObject({
      indexed: 9,
      skipped: 1,
      byCategory: { source: 5, test: 2, config: 1, docs: 1 },
      analysed: 7,
      tested: 3,
      untested: ["src/auth/Sessions.ts", "src/main.ts"]
    })
    expect(result.sources).toEqual([
      { path: "src/auth/Keys.ts", tests: [{ path: "test/auth/Keys.test.ts", via: "name" }] },
      { path: "src/auth/Sessions.ts", tests: [] },
      { path: "src/credits/Credits.ts", tests: [{ path: "test/credits/Credits.test.ts", via: "import" }] },
      { path: "src/credits/Ledger.ts", tests: [{ path: "test/credits/Credits.test.ts", via: "import" }] },
      { path: "src/main.ts", tests: [] }
    ])
  })

  it("says which folders have no tests", () => {
    expect(coverage(snapshot).directories).toEqual([
      { path: "src", sources: 1, tested: 0, untested: 1 },
      { path: "src/auth", sources: 2, tested: 1, untested: 1 },
      { path: "src/credits", sources: 2, tested: 2, untested: 0 }
    ])
  })

  const path = fc.stringMatching(/^[a-c]{1,2}(\/[a-c]{1,2}){0,2}\.ts$/)
  const snapshots = fc
    .uniqueArray(fc.record({ path, category: fc.constantFrom("source", "test", "config", "docs") as fc.Arbitrary<IndexedFile["category"]> }), {
      selector: (f) => f.path,
      maxLength: 40
    })
    .chain((files) =>
      fc
        .array(fc.record({ source: fc.constantFrom(...files.map((f) => f.path), "x/missing.ts"), test: fc.constantFrom(...files.map((f) => f.path), "x/t.ts"), via: fc.constantFrom("import", "name") as fc.Arbitrary<"import" | "name"> }), { maxLength: 60 })
        .map((links) => new Snapshot({ files: files.map((f) => file(f.path, f.category)), skipped: [], chunks: [], definitions: [], imports: [], links: links.map((l) => new TestLink(l)) }))
    )
    .filter((s) => s.files.length > 0)

  it.prop("accounts for every source file exactly once: tested or untested, never sampled", [snapshots], ([s]) => {
    const result = coverage(s)
    const sources = s.files.filter((f) => f.category === "source").map((f) => f.path).sort()
    expect(result.sources.map((x) => x.path)).toEqual(sources)
    expect(result.tested + result.untested.length).toBe(sources.length)
    expect(result.directories.reduce((n, d) => n + d.sources, 0)).toBe(sources.length)
    for (const source of result.sources) {
      const linked = new Set(s.links.filter((l) => l.source === source.path && l.test !== l.source && s.files.some((f) => f.path === l.test)).map((l) => l.test))
      expect(new Set(source.tests.map((t) => t.path))).toEqual(linked)
      expect(result.untested.includes(source.path)).toBe(linked.size === 0)
    }
  })
})
