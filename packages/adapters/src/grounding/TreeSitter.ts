/**
 * Tree-sitter in WebAssembly: the runtime from `web-tree-sitter`, the grammars prebuilt by
 * `@vscode/tree-sitter-wasm` (the set VS Code ships, built with tree-sitter 0.25, ABI 14–15, which
 * `web-tree-sitter` 0.25–0.27 load). Both come from node_modules: nothing is built natively or
 * downloaded. The runtime is initialised, and each grammar loaded and its query compiled, once, on
 * first use, so that a repository without Rust never loads the Rust grammar; the runtime's
 * JavaScript too, so that a server that indexes nothing never loads it.
 */
import { createRequire } from "node:module"
import type { Parser, Query } from "web-tree-sitter"

export type Grammar =
  | "typescript"
  | "tsx"
  | "javascript"
  | "python"
  | "go"
  | "rust"
  | "java"
  | "c-sharp"
  | "cpp"
  | "ruby"
  | "php"
  | "bash"

export interface LoadedGrammar {
  readonly parser: Parser
  readonly query: Query
}

const require = createRequire(import.meta.url)

let runtime: Promise<typeof import("web-tree-sitter")> | undefined
const loaded = new Map<string, Promise<LoadedGrammar>>()

/** The grammar with its query compiled (`query` is the grammar's definitions query), loaded once. */
export const load = (grammar: Grammar, query: string): Promise<LoadedGrammar> => {
  const key = grammar
  let entry = loaded.get(key)
  if (entry === undefined) {
    entry = (async () => {
      runtime ??= import("web-tree-sitter").then(async (module) => {
        await module.Parser.init()
        return module
      })
      const { Language, Parser, Query } = await runtime
      const language = await Language.load(require.resolve(`@vscode/tree-sitter-wasm/wasm/tree-sitter-${grammar}.wasm`))
      const parser = new Parser()
      parser.setLanguage(language)
      return { parser, query: new Query(language, query) }
    })()
    // A failed load is not cached: the next file may try again (and fall back meanwhile).
    entry.catch(() => loaded.delete(key))
    loaded.set(key, entry)
  }
  return entry
}
