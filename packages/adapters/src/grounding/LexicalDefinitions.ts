/**
 * Definitions found by their keywords, for code in languages without a shipped grammar (Kotlin,
 * Swift, Scala, Lua, Elixir, …): a line that starts with `function x`, `def x`, `fn x`, `func x`,
 * `fun x`, `class X`, `interface X`, `struct X`, `module X`, … A definition ends where its braces
 * close or, without braces, before the next line indented no deeper than it (an `end` or `}` at
 * its own indentation included); a function inside a class's range is a method. Approximate by
 * nature: a parser is what the main languages get.
 */
import { Definition, type DefinitionKind } from "@huddle/domain/grounding/Snapshot"

const modifiers =
  "(?:(?:export|default|declare|async|public|private|protected|internal|static|override|open|final|inline|suspend|abstract|sealed|data|case|inner|partial|local|pub(?:\\([^)]*\\))?|unsafe|extern|const|mutating|fileprivate|lazy|operator|infix|tailrec|external|actual|expect|companion|value|annotation|enum)\\s+)*"

const patterns: ReadonlyArray<readonly [RegExp, DefinitionKind]> = [
  [new RegExp(`^\\s*${modifiers}(?:class|contract|object|struct|record|union)\\s+([A-Za-z_$][\\w$]*)`), "class"],
  [new RegExp(`^\\s*${modifiers}(?:interface|protocol|trait)\\s+([A-Za-z_$][\\w$]*)`), "interface"],
  [new RegExp(`^\\s*${modifiers}(?:enum|typealias)\\s+([A-Za-z_]\\w*)`), "type"],
  [/^\s*(?:module|defmodule|namespace|package object)\s+([A-Za-z_][\w.:]*)/, "module"],
  [
    new RegExp(
      `^\\s*${modifiers}(?:function|func|fun|fn|def|defp|defmacro|defn-?|sub|proc|method)\\s+(?:\\([^)]*\\)\\s*|<[^>]*>\\s*)?([A-Za-z_$][\\w$]*(?:[.:][A-Za-z_$][\\w$]*)*[?!]?)`
    ),
    "function"
  ],
  // R: `name <- function(…)`; Lua/JavaScript-like: `name = function(…)`.
  [/^\s*([A-Za-z_.][\w.]*)\s*(?:<-|=)\s*function\b/, "function"]
]

// Data, markup and prose: no definitions to find by keyword.
const notCode: ReadonlySet<string> = new Set([
  "text", "json", "yaml", "toml", "xml", "ini", "markdown", "restructuredtext", "asciidoc", "latex", "html", "css",
  "scss", "sass", "less", "dockerfile", "makefile", "cmake", "hcl", "nix", "batch", "sql", "graphql", "protobuf", "thrift"
])

const indentation = (line: string): number => {
  let width = 0
  for (const char of line) {
    if (char === " ") width++
    else if (char === "\t") width += 4
    else break
  }
  return width
}

// Strings and line comments removed, so that their braces do not count.
const code = (line: string): string =>
  line.replace(/"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`/g, "\"\"").replace(/(?:^|\s)(?:\/\/|#(?![{[])).*$/, "")

const maxScan = 5000

/** The 0-based index of the definition's last line. */
const lastLine = (lines: ReadonlyArray<string>, start: number): number => {
  // Braces: from the definition's line, or an opening brace alone on the next line.
  const next = lines[start + 1]
  const opensHere = code(lines[start]!).includes("{")
  if (opensHere || (next !== undefined && /^\s*\{/.test(next))) {
    let depth = 0
    let opened = false
    for (let i = start; i < lines.length && i < start + maxScan; i++) {
      for (const char of code(lines[i]!)) {
        if (char === "{") {
          depth++
          opened = true
        } else if (char === "}") depth--
      }
      if (opened && depth <= 0) return i
    }
    return start
  }
  const base = indentation(lines[start]!)
  let last = start
  let i = start + 1
  for (; i < lines.length && i < start + maxScan; i++) {
    const line = lines[i]!
    if (line.trim() === "") continue
    if (indentation(line) <= base) break
    last = i
  }
  const closing = lines[i]
  if (closing !== undefined && indentation(closing) === base && /^\s*(?:end\b|\}|\))/.test(closing)) last = i
  return last
}

export const lexicalDefinitions = (path: string, language: string, text: string): Array<Definition> => {
  if (notCode.has(language)) return []
  const lines = text.split(/\r?\n/)
  const found: Array<{ name: string; kind: DefinitionKind; start: number; end: number }> = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    for (const [pattern, kind] of patterns) {
      const match = pattern.exec(line)
      if (match === null) continue
      found.push({ name: match[1]!, kind, start: i, end: lastLine(lines, i) })
      break
    }
  }
  const containers = found.filter((definition) => definition.kind === "class" || definition.kind === "interface")
  return found.map((definition) => {
    const inside = definition.kind === "function" &&
      containers.some((container) => container.start < definition.start && container.end >= definition.end)
    return new Definition({
      path,
      name: definition.name,
      kind: inside ? "method" : definition.kind,
      line: definition.start + 1,
      end_line: definition.end + 1
    }, { disableValidation: true })
  })
}
