import { describe, expect, it } from "@effect/vitest"
import * as CodeTokens from "@huddle/adapters/grounding/CodeTokens"
import * as LexicalIndex from "@huddle/adapters/grounding/LexicalIndex"
import { snapshotOf } from "@huddle/testkit/grounding/Snapshots"
import { FastCheck as fc } from "effect"

const lines = (...ls: ReadonlyArray<string>) => ls.join("\n") + "\n"

/** A small repository, with unrelated files around it so that common words weigh little. */
const repo: Record<string, string> = {
  "src/cli/args.ts": lines(
    "/** Reads the command line. */",
    "export interface Flags { readonly verbose: boolean; readonly output: string }",
    "",
    "export function parseArgs(argv: ReadonlyArray<string>): Flags {",
    "  let verbose = false",
    "  let output = \"out\"",
    "  for (const arg of argv) {",
    "    if (arg === \"-v\") verbose = true",
    "    else if (arg.startsWith(\"--output=\")) output = arg.slice(9)",
    "  }",
    "  return { verbose, output }",
    "}"
  ),
  "src/app/main.ts": lines(
    "import { parseArgs } from \"../cli/args.js\"",
    "import { fetchJson } from \"../net/http.js\"",
    "",
    "// parseArgs once, then parseArgs again for the child: parseArgs, parseArgs.",
    "export const main = async (argv: ReadonlyArray<string>) => {",
    "  const flags = parseArgs(argv)",
    "  const again = parseArgs(argv.slice(1))",
    "  return fetchJson(flags.output + again.output)",
    "}"
  ),
  "src/net/http.ts": lines(
    "import { withRetry } from \"./retry.js\"",
    "",
    "/** Fetches a JSON document over HTTP, retrying transient failures. */",
    "export const fetchJson = (url: string) =>",
    "  withRetry(() => fetch(url).then((response) => response.json()))"
  ),
  "src/net/retry.ts": lines(
    "const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))",
    "",
    "/** Calls `attempt` until it succeeds, waiting twice as long each time (exponential backoff). */",
    "export async function withRetry<A>(attempt: () => Promise<A>, retries = 5): Promise<A> {",
    "  for (let n = 0; ; n++) {",
    "    try {",
    "      return await attempt()",
    "    } catch (error) {",
    "      if (n >= retries) throw error",
    "      await sleep(100 * 2 ** n)",
    "    }",
    "  }",
    "}"
  ),
  "test/retry.test.ts": lines(
    "import { withRetry } from \"../src/net/retry.js\"",
    "// retry retry backoff backoff: the retry backoff is exponential; retry until the backoff ends",
    "test(\"withRetry retries with backoff\", async () => {",
    "  let calls = 0",
    "  await withRetry(async () => { if (++calls < 3) throw new Error(\"retry\") })",
    "})"
  ),
  "src/auth/AuthMiddleware.ts": lines(
    "export class AuthMiddleware {",
    "  check(header: string | undefined): boolean {",
    "    return header !== undefined && header.startsWith(\"Bearer \")",
    "  }",
    "}"
  ),
  "docs/usage.md": lines("# Usage", "", "Run the tool with `-v` for verbose output.")
}
for (let i = 0; i < 40; i++) {
  repo[`src/misc/util${i}.ts`] = lines(
    `export const value${i} = (input: number) => input * ${i}`,
    `export function describe${i}(name: string) { return name + " is a value" }`,
    `// unrelated helper number ${i}, for formatting and other chores`
  )
}
const snapshot = snapshotOf(repo)
const index = LexicalIndex.build(snapshot)
const search = (question: string, budgetTokens = 2000, maxFiles = 6) => LexicalIndex.search(index, question, { budgetTokens, maxFiles })

describe("identifier tokens", () => {
  it("splits camelCase, PascalCase, snake_case, kebab-case and digits, keeps the whole identifier, lower-cases", () => {
    expect(CodeTokens.terms("parseArgs")).toEqual(["parseargs", "pars", "arg"])
    expect(CodeTokens.terms("HTTPServer2xx")).toEqual(["httpserver2xx", "http", "server", "xx"])
    expect(CodeTokens.terms("retry_with_backoff")).toEqual(["retry_with_backoff", "retri", "backoff"])
    expect(CodeTokens.terms("max-retries")).toEqual(["max-retries", "max", "retri"])
    expect(CodeTokens.terms("utf8Decoder")).toEqual(["utf8decoder", "utf", "decod"])
    // Words and identifier parts are reduced to their Porter stem: inflections meet.
    expect(CodeTokens.terms("retries retried retrying retry")).toEqual(["retri", "retri", "retri", "retri"])
    expect(CodeTokens.terms("tested tests string need class")).toEqual(["test", "test", "string", "need", "class"])
    expect(new Set(CodeTokens.terms("evaluate evaluates evaluated evaluating"))).toEqual(new Set(["evalu"]))
    expect(CodeTokens.terms("classes matches parse parses parsed parsing")).toEqual(["class", "match", "pars", "pars", "pars", "pars"])
    // Derivations meet too, which the plural and -ed/-ing folding this replaced did not do.
    expect(new Set(CodeTokens.terms("redirection redirected redirects followRedirect"))).toEqual(new Set(["redirect", "followredirect", "follow"]))
    // A stopword stays one, whatever it would stem to.
    expect(CodeTokens.terms("where there these those Where")).toEqual([])
  })

  it.prop(
    "indexes a text by the same terms it searches it by",
    [fc.string({ unit: fc.constantFrom(..."aZb_-$9 ./(Retry_backoffHTTPServer2xx-max-retries)\n"), maxLength: 80 })],
    ([text]) => {
      expect(new Set(CodeTokens.indexer().terms(text).map((s) => s.term))).toEqual(new Set(CodeTokens.terms(text)))
    }
  )

  it("cuts a path at its separators and tokenizes each segment", () => {
    expect(CodeTokens.terms("src/auth/AuthMiddleware.ts")).toEqual(["src", "auth", "authmiddleware", "auth", "middlewar", "ts"])
  })
})

describe("lexical retrieval", () => {
  it("puts the passage that defines a named identifier first, above a file that only calls it often", () => {
    const { excerpts, files } = search("Where is `parseArgs` implemented?")
    expect(excerpts[0]).toMatchObject({ path: "src/cli/args.ts", why: expect.stringContaining("names `parseArgs`") })
    expect(excerpts[0]!.start_line).toBeLessThanOrEqual(4)
    expect(excerpts[0]!.end_line).toBeGreaterThanOrEqual(12)
    expect(files[0]).toBe("src/cli/args.ts")
  })

  it("finds an identifier from the words it is made of", () => {
    expect(LexicalIndex.rankFiles(index, "how are the command line args parsed? parse args")[0]).toBe("src/cli/args.ts")
    expect(LexicalIndex.rankFiles(index, "what does the auth middleware check")[0]).toBe("src/auth/AuthMiddleware.ts")
    expect(search("when does `AuthMiddleware.check` refuse?").excerpts[0]).toMatchObject({ path: "src/auth/AuthMiddleware.ts", why: expect.stringContaining("names `AuthMiddleware`") })
  })

  it("says which words of the question a passage matches", () => {
    const { excerpts } = search("How does the retry backoff work?")
    expect(excerpts[0]!.path).toBe("src/net/retry.ts")
    expect(excerpts[0]!.why).toContain("matches: retry, backoff")
  })

  it("ranks a test below the code it tests, unless the question is about tests", () => {
    // The test says "retry" and "backoff" far more often than the code does.
    expect(LexicalIndex.rankFiles(index, "retry backoff").slice(0, 2)).toEqual(["src/net/retry.ts", "test/retry.test.ts"])
    expect(LexicalIndex.rankFiles(index, "how is the retry backoff tested")[0]).toBe("test/retry.test.ts")
  })

  it("ranks documentation below the code it describes, unless the question asks about the docs", () => {
    const documented = LexicalIndex.build(snapshotOf({
      ...repo,
      // The README says it in the question's words; the code says it too, amid code.
      "README.md": lines("Retries: a failed call is retried with exponential backoff, and the wait doubles after each retry, up to five retries.")
    }))
    expect(LexicalIndex.rankFiles(documented, "which code waits with exponential backoff")[0]).toBe("src/net/retry.ts")
    expect(LexicalIndex.rankFiles(documented, "what does the readme say about exponential backoff")[0]).toBe("README.md")
  })

  it("ranks an implementation above its type declarations and its bundles, unless the question is about types", () => {
    // A library as npm ships it: the declarations carry the documentation, in the question's words.
    const doc = "/** Opens a connection to the server, and when the connection drops, reconnects after a delay that grows with each failed attempt. */"
    const library = LexicalIndex.build(snapshotOf({
      ...Object.fromEntries(Object.entries(repo).filter(([path]) => path.startsWith("src/misc/"))),
      "index.d.ts": lines(doc, "export declare function connect(options: ConnectOptions): Client", "export interface ConnectOptions { host: string; port: number }"),
      "index.d.cts": lines(doc, "declare function connect(options: ConnectOptions): Client", "export = connect"),
      "index.js": lines(
        "const net = require(\"net\")",
        "function connect(options) {",
        "  let attempts = 0",
        "  const open = () => {",
        "    const socket = net.createConnection(options)",
        "    // The connection dropped: reconnect later.",
        "    socket.on(\"close\", () => setTimeout(open, Math.min(++attempts * 50, 2000)))",
        "    return socket",
        "  }",
        "  return open()",
        "}",
        "module.exports = connect"
      ),
      "umd/library.umd.js": lines(
        "(function (root, factory) { root.client = factory(root.net) })(this, function (net) {",
        "  // The connection dropped: reconnect later.",
        "  return function connect(options) { const socket = net.createConnection(options); socket.on(\"close\", () => connect(options)); return socket }",
        "})"
      )
    }))
    const ranked = LexicalIndex.rankFiles(library, "How does the client reconnect when the connection to the server drops?")
    expect(ranked[0]).toBe("index.js")
    expect(ranked.indexOf("umd/library.umd.js")).toBeGreaterThan(0)
    expect(LexicalIndex.rankFiles(library, "Which types does connect accept in its options?")[0]).toMatch(/^index\.d\.c?ts$/)
  })

  it("meets a word of the question with the code's word of the same stem, derivations included", () => {
    const stems = LexicalIndex.build(snapshotOf({
      ...Object.fromEntries(Object.entries(repo).filter(([path]) => path.startsWith("src/misc/"))),
      "src/http/follow.ts": lines("export const followRedirect = (status: number, location: string) =>", "  status >= 300 && status < 400 ? location : undefined")
    }))
    expect(LexicalIndex.rankFiles(stems, "What happens on a redirection?")[0]).toBe("src/http/follow.ts")
  })

  it("shows a file the question names, even when none of its words are in the question", () => {
    const { excerpts } = search("What is in src/app/main.ts?")
    expect(excerpts[0]).toMatchObject({ path: "src/app/main.ts", start_line: 1, why: expect.stringContaining("named in the question") })
    expect(LexicalIndex.rankFiles(index, "explain main.ts")[0]).toBe("src/app/main.ts")
  })

  it("brings in a file the best match imports, saying so", () => {
    // Only http.ts says "JSON document"; it imports retry.ts, which the question does not mention.
    const { excerpts, files } = search("fetch a JSON document over HTTP")
    expect(files[0]).toBe("src/net/http.ts")
    expect(files).toContain("src/net/retry.ts")
    const retry = excerpts.find((e) => e.path === "src/net/retry.ts")
    expect(retry?.why).toContain("imported by src/net/http.ts")
    // And a file that imports it.
    expect(excerpts.find((e) => e.path === "src/app/main.ts")?.why).toContain("imports src/net/http.ts")
  })

  it("gives a file that imports the best match and is imported by it one share, as to any neighbour", () => {
    const graph = LexicalIndex.build(snapshotOf({
      ...Object.fromEntries(Object.entries(repo).filter(([path]) => path.startsWith("src/misc/"))),
      "src/jobs/worker.ts": lines(
        "import { registry } from \"./registry.js\"",
        "import { clock } from \"./clock.js\"",
        "// Drains the pending tasks: each pending task runs once, oldest first.",
        "export const drain = (pending: Array<() => void>) => pending.splice(0).forEach((task) => task())",
        "export const WORKER_ID = 7"
      ),
      "src/jobs/registry.ts": lines("import { WORKER_ID } from \"./worker.js\"", "export const registry = new Map([[WORKER_ID, registry]])"),
      "src/jobs/clock.ts": lines("export const clock = () => Date.now()")
    }))
    // registry.ts imports worker.ts and is imported by it; clock.ts is only imported. Equal shares: a tie, in path order.
    expect(LexicalIndex.rankFiles(graph, "drain the pending tasks").slice(0, 3)).toEqual(["src/jobs/worker.ts", "src/jobs/clock.ts", "src/jobs/registry.ts"])
  })

  it("merges passages of one file that touch into one excerpt", () => {
    const long = snapshotOf(
      {
        "src/queue.ts": lines(...Array.from({ length: 30 }, (_, i) => `const step${i} = enqueue(job${i}) // queue worker step`)),
        "src/other.ts": lines("export const unrelated = 1")
      },
      { chunkLines: 10 }
    )
    const { excerpts } = LexicalIndex.search(LexicalIndex.build(long), "queue worker", { budgetTokens: 5000, maxFiles: 3 })
    expect(excerpts.map((e) => [e.path, e.start_line, e.end_line])).toEqual([["src/queue.ts", 1, 30]])
    expect(excerpts[0]!.text.split("\n")).toHaveLength(30)
  })

  it("trims a passage larger than the budget to the lines around what it names", () => {
    const body = Array.from({ length: 200 }, (_, i) => `  total += weight${i} * factor // accumulate`)
    const big = snapshotOf({ "src/score.ts": lines(...body.slice(0, 100), "export function normaliseScores(total: number) {", ...body.slice(100), "}") }, { chunkLines: 500 })
    const { excerpts } = LexicalIndex.search(LexicalIndex.build(big), "what does normaliseScores do", { budgetTokens: 200, maxFiles: 2 })
    expect(excerpts).toHaveLength(1)
    const [excerpt] = excerpts
    expect(excerpt!.start_line).toBeLessThanOrEqual(101)
    expect(excerpt!.end_line).toBeGreaterThanOrEqual(101)
    expect(excerpt!.text).toContain("export function normaliseScores")
    expect(excerpt!.text.length / 4).toBeLessThanOrEqual(200)
  })

  it("finds nothing for a question with no word in the repository", () => {
    expect(search("zebra giraffe okapi")).toEqual({ excerpts: [], files: [] })
  })

  const questions = fc.constantFrom(
    "Where is `parseArgs` implemented?",
    "How does the retry backoff work?",
    "What is in src/app/main.ts?",
    "fetch a JSON document over HTTP",
    "value describe helper formatting",
    "auth middleware bearer header"
  )
  it.prop(
    "stays within the token budget and the file limit, and quotes the files' own lines, without overlaps",
    [questions, fc.integer({ min: 0, max: 1500 }), fc.integer({ min: 0, max: 8 })],
    ([question, budgetTokens, maxFiles]) => {
      const { excerpts, files } = LexicalIndex.search(index, question, { budgetTokens, maxFiles })
      expect(files.length).toBeLessThanOrEqual(maxFiles)
      expect(new Set(excerpts.map((e) => e.path)).size).toBeLessThanOrEqual(maxFiles)
      for (const e of excerpts) expect(files).toContain(e.path)
      const chars = excerpts.reduce((n, e) => n + e.text.length, 0)
      expect(chars / 4).toBeLessThanOrEqual(budgetTokens)
      for (const e of excerpts) {
        const text = repo[e.path]!.split("\n").slice(e.start_line - 1, e.end_line).join("\n")
        expect(e.text).toBe(text)
        for (const other of excerpts) {
          if (other !== e && other.path === e.path) expect(other.end_line < e.start_line - 1 || other.start_line > e.end_line + 1).toBe(true)
        }
      }
    }
  )
})
