/**
 * The repository as citations are checked against it: each indexed file's length, the ends of
 * its paths that name it alone (`args.ts` for `src/cli/args.ts`), and the retrieved lines.
 */
import type { Context, RetrievedExcerpt } from "./Citations.js"

export interface Files {
  readonly lines: ReadonlyMap<string, number>
  /** Each end of an indexed path after a `/` (`cli/args.ts`, `args.ts`), and the one path it ends (null: several). */
  readonly suffixes: ReadonlyMap<string, string | null>
  /** Per file, the retrieved lines (line number → text) and the excerpts. */
  readonly retrieved: ReadonlyMap<string, { readonly lines: ReadonlyMap<number, string>; readonly excerpts: ReadonlyArray<RetrievedExcerpt> }>
}

/** What `verify` and `CitationFilter` check against, from the answer's context. */
export const prepare = (context: Context): Files => {
  const lines = new Map(context.files.map((f) => [f.path, f.lines] as const))
  const retrieved = new Map<string, { lines: Map<number, string>; excerpts: Array<RetrievedExcerpt> }>()
  for (const excerpt of context.excerpts) {
    if (!lines.has(excerpt.path)) continue
    let entry = retrieved.get(excerpt.path)
    if (entry === undefined) retrieved.set(excerpt.path, (entry = { lines: new Map(), excerpts: [] }))
    entry.excerpts.push(excerpt)
    excerpt.text.split("\n").forEach((line, i) => {
      if (excerpt.start_line + i <= excerpt.end_line) entry.lines.set(excerpt.start_line + i, line)
    })
  }
  const suffixes = new Map<string, string | null>()
  for (const path of lines.keys()) {
    for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
      const suffix = path.slice(i + 1)
      suffixes.set(suffix, suffixes.has(suffix) ? null : path)
    }
  }
  return { lines, suffixes, retrieved }
}

/** The indexed path a cited one means: itself, or the one indexed path it is the end of. */
export const resolvePath = (files: Files, written: string): string | undefined => {
  const path = written.replace(/^\.\//, "").replace(/^\//, "")
  if (files.lines.has(path)) return path
  return files.suffixes.get(path) ?? undefined
}
