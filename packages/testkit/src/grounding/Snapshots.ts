/**
 * Snapshots for tests, from file contents: a deliberately small indexer (fixed-size line chunks,
 * definitions and relative imports found by regular expressions, tests linked by import and by
 * name) so that retrieval, citations and deep inspection can be tested on repositories a test
 * can read at a glance.
 */
import { Chunk, Definition, type FileCategory, ImportEdge, IndexedFile, Snapshot, TestLink } from "@huddle/domain/grounding/Snapshot"

export interface Options {
  /** Lines per chunk (default 20). */
  readonly chunkLines?: number
  /** Categories that the path does not imply. */
  readonly categories?: Readonly<Record<string, FileCategory>>
}

export const categoryOf = (path: string): FileCategory =>
  /(^|\/)(tests?|__tests__|spec)\/|\.(test|spec)\.[a-z]+$/.test(path)
    ? "test"
    : /\.(md|mdx|rst|txt)$/.test(path)
    ? "docs"
    : /\.(json|ya?ml|toml|ini)$/.test(path) || /(^|\/)\.[^/]+$/.test(path)
    ? "config"
    : "source"

const DEFINITION = /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(function|class|interface|type|const|let)\s+([A-Za-z_$][\w$]*)/
const kinds = { function: "function", class: "class", interface: "interface", type: "type", const: "variable", let: "variable" } as const
const IMPORT = /from\s+["'](\.{1,2}\/[^"']+)["']/g

const hash = (text: string): string => {
  let h = 2166136261
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0
  return h.toString(16).padStart(8, "0")
}

const resolveImport = (from: string, spec: string, known: ReadonlySet<string>): string | undefined => {
  const parts = from.split("/").slice(0, -1)
  for (const segment of spec.split("/")) {
    if (segment === "..") parts.pop()
    else if (segment !== ".") parts.push(segment)
  }
  const path = parts.join("/").replace(/\.js$/, ".ts")
  return [path, `${path}.ts`, `${path}/index.ts`].find((p) => known.has(p))
}

const stem = (path: string): string => path.slice(path.lastIndexOf("/") + 1).replace(/\.(test|spec)(?=\.)/, "").replace(/\.[^.]+$/, "")

/** A snapshot of a repository whose files have these contents. */
export const snapshotOf = (contents: Readonly<Record<string, string>>, options: Options = {}): Snapshot => {
  const chunkLines = options.chunkLines ?? 20
  const paths = Object.keys(contents).sort()
  const known = new Set(paths)
  const category = (path: string) => options.categories?.[path] ?? categoryOf(path)
  const files: Array<IndexedFile> = []
  const chunks: Array<Chunk> = []
  const definitions: Array<Definition> = []
  const imports: Array<ImportEdge> = []
  for (const path of paths) {
    const text = contents[path]!
    const lines = text.split("\n")
    if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop()
    files.push(new IndexedFile({ path, category: category(path), language: path.endsWith(".ts") ? "typescript" : "text", lines: lines.length, bytes: text.length, hash: hash(text) }))
    for (let start = 0; start < lines.length; start += chunkLines) {
      const slice = lines.slice(start, start + chunkLines)
      chunks.push(new Chunk({ path, start_line: start + 1, end_line: start + slice.length, text: slice.join("\n") }))
    }
    lines.forEach((line, i) => {
      const m = DEFINITION.exec(line)
      if (m !== null) definitions.push(new Definition({ path, name: m[2]!, kind: kinds[m[1] as keyof typeof kinds], line: i + 1, end_line: i + 1 }))
    })
    for (const m of text.matchAll(IMPORT)) {
      const to = resolveImport(path, m[1]!, known)
      if (to !== undefined && !imports.some((e) => e.from === path && e.to === to)) imports.push(new ImportEdge({ from: path, to }))
    }
  }
  const links: Array<TestLink> = []
  for (const test of paths.filter((p) => category(p) === "test")) {
    const linked = new Set<string>()
    for (const edge of imports) {
      if (edge.from === test && category(edge.to) === "source") {
        links.push(new TestLink({ source: edge.to, test, via: "import" }))
        linked.add(edge.to)
      }
    }
    for (const source of paths) {
      if (category(source) === "source" && !linked.has(source) && stem(source) === stem(test)) {
        links.push(new TestLink({ source, test, via: "name" }))
      }
    }
  }
  return new Snapshot({ files, skipped: [], chunks, definitions, imports, links })
}
