/**
 * The shape a reader can hold (issue #41): no source file over 400 lines, no function or closure
 * body over 150. A service's `make` that grows past that is split into functions given what they
 * use, a long file into files by concept.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const packages = fileURLToPath(new URL("../../", import.meta.url))
const maxFileLines = 400
const maxBodyLines = 150

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return /\.tsx?$/.test(path) && !path.endsWith(".d.ts") ? [path] : []
  })

const all = ["domain", "adapters", "server", "testkit", "console"].flatMap((pkg) => sources(join(packages, pkg, "src")))
const named = (file: string) => relative(packages, file).split("\\").join("/")

/** Every function body longer than `limit` lines in `text` (of `file`), as `path:line (N lines)`. */
const longBodies = (file: string, text: string, limit: number): Array<string> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const found: Array<string> = []
  const visit = (node: ts.Node) => {
    // Block bodies only: an arrow whose body is an expression is measured by the functions in it.
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined && ts.isBlock(node.body as ts.Node)) {
      const body = node.body as ts.Block
      const start = source.getLineAndCharacterOfPosition(body.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(body.getEnd()).line
      // The lines between the braces.
      const lines = end - start - 1
      if (lines > limit) found.push(`${named(file)}:${start + 1} (${lines} lines)`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe("the sources' shape", () => {
  it("reads every package's sources", () => {
    expect(all.length).toBeGreaterThan(300)
  })

  it(`has no file over ${maxFileLines} lines`, () => {
    const long = all.flatMap((file) => {
      const lines = readFileSync(file, "utf8").split("\n").length
      return lines > maxFileLines ? [`${named(file)} (${lines} lines)`] : []
    })
    expect(long).toEqual([])
  })

  it(`has no function or closure body over ${maxBodyLines} lines`, () => {
    expect(all.flatMap((file) => longBodies(file, readFileSync(file, "utf8"), maxBodyLines))).toEqual([])
  })

  it("finds a closure that is too long, nested or not (the check can fail)", () => {
    const body = "  x()\n".repeat(maxBodyLines)
    const probe = join(packages, "domain/src/probe.ts")
    expect(longBodies(probe, `const f = () => {\n${body}}\n`, maxBodyLines)).toEqual([])
    expect(longBodies(probe, `const f = () => {\n${body}  y()\n}\n`, maxBodyLines)).toEqual([`domain/src/probe.ts:1 (${maxBodyLines + 1} lines)`])
    expect(longBodies(probe, `export const make = Effect.gen(function*() {\n  const g = (a: number) => {\n${body}    y()\n  }\n})\n`, maxBodyLines))
      .toEqual([`domain/src/probe.ts:1 (${maxBodyLines + 3} lines)`, `domain/src/probe.ts:2 (${maxBodyLines + 1} lines)`])
  })
})
