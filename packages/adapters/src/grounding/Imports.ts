/**
 * The import graph between indexed files. Two steps: what a file says (its import specifiers, read
 * lexically from its text, cheap enough to redo for every file on every run), then resolving them
 * against the repository's files, which may have changed since:
 * - JavaScript/TypeScript (`import … from "./x"`, `export … from`, `require`, `import()`): relative
 *   specifiers, with the extensions, `package.json` `main` and `index` files Node and TypeScript
 *   try (`.`, `..` and a trailing `/` name a directory only, as in Node), and `./x.js` meaning
 *   `./x.ts` as in a TypeScript project; non-relative ones through tsconfig `paths`/`baseUrl`,
 *   workspace packages' `exports`/`main` and `#imports`, built paths mapped back to their sources
 *   (`EcmaPackages`);
 * - Python: relative (`from .x import y`) and absolute (`import pkg.mod`, `from pkg import mod`)
 *   imports, absolute ones looked up from the repository root, `src/`, each project root (a
 *   directory with `pyproject.toml`, `setup.py` or `setup.cfg`) and the importer's own directory;
 * - Go: packages of a module declared by a `go.mod` in the repository (an edge to each non-test file
 *   of the package's directory);
 * - Java: `import a.b.C` to the file declaring class `C` in package `a.b`;
 * - Rust: `mod x;` to `x.rs` or `x/mod.rs`; C/C++: `#include "x.h"`; Ruby: `require_relative`.
 * Imports of anything outside the repository (packages, the standard library) make no edge.
 */
import { ImportEdge } from "@huddle/domain/grounding/Snapshot"
import { type ConfigFacts, configFactsOf } from "./EcmaConfigFacts.js"
import { ecmaPackages, type EcmaPackages } from "./EcmaPackages.js"
import { basename, dirname, join } from "./RepoPaths.js"

/**
 * What a file says about imports: what it imports, which names it answers to (a Go module, a Java
 * class), and for a file that steers JavaScript resolution (`package.json`, a tsconfig,
 * `pnpm-workspace.yaml`) what it says.
 */
export interface ImportFacts {
  readonly specifiers: ReadonlyArray<string>
  readonly provides: ReadonlyArray<string>
  readonly config?: ConfigFacts | undefined
}

const none: ImportFacts = { specifiers: [], provides: [] }

const extensionOf = (path: string): string => {
  const name = basename(path)
  const dot = name.lastIndexOf(".")
  return dot <= 0 ? "" : name.slice(dot + 1).toLowerCase()
}

const allMatches = (pattern: RegExp, text: string, group = 1): Array<string> => {
  const found: Array<string> = []
  for (const match of text.matchAll(pattern)) {
    const value = match[group]
    if (value !== undefined) found.push(value)
  }
  return found
}

const ecmaStatic = /(?:^|[^\w$.])(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]*?\s*from\s*)?["']([^"'\n]+)["']/g
const ecmaCall = /(?:^|[^\w$.])(?:require|import)\s*\(\s*["']([^"'\n]+)["']\s*\)/g

const pythonFrom = /^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)/gm
const pythonImport = /^[ \t]*import[ \t]+([^\n#;]+)/gm

const goBlock = /^import\s*\(([^)]*)\)/gm
const goSingle = /^import\s+(?:[\w.]+\s+)?"([^"\n]+)"/gm
const goModule = /^module\s+("?)([^\s"]+)\1/m

const javaPackage = /^\s*package\s+([\w.]+)\s*;/m
const javaImport = /^\s*import\s+(static\s+)?([\w.]+?)(\.\*)?\s*;/gm

/** What `text` (the content of `path`, in `language`) imports and provides. */
export const importFactsOf = (path: string, language: string, text: string): ImportFacts => {
  switch (language) {
    case "typescript":
    case "javascript":
    case "vue":
    case "svelte":
    case "astro": {
      const specifiers = [...allMatches(ecmaStatic, text), ...allMatches(ecmaCall, text)].filter((specifier) => specifier.trim() !== "")
      return { specifiers: [...new Set(specifiers)], provides: [] }
    }
    case "python": {
      const specifiers: Array<string> = []
      for (const match of text.matchAll(pythonFrom)) {
        const names = match[2]!.replace(/[()\\\n]/g, " ").split(",")
          .map((name) => name.trim().split(/\s+/)[0] ?? "").filter((name) => /^\w+$/.test(name))
        specifiers.push(`${match[1]!}|${names.join(",")}`)
      }
      for (const match of text.matchAll(pythonImport)) {
        for (const part of match[1]!.split(",")) {
          const module = part.trim().split(/\s+/)[0]
          if (module !== undefined && /^[\w.]+$/.test(module)) specifiers.push(module)
        }
      }
      return { specifiers: [...new Set(specifiers)], provides: [] }
    }
    case "go": {
      const specifiers = allMatches(goSingle, text)
      for (const block of allMatches(goBlock, text)) specifiers.push(...allMatches(/"([^"\n]+)"/g, block))
      return { specifiers: [...new Set(specifiers)], provides: [] }
    }
    case "java": {
      const declared = javaPackage.exec(text)?.[1]
      const name = basename(path).replace(/\.java$/, "")
      const specifiers: Array<string> = []
      for (const match of text.matchAll(javaImport)) {
        if (match[3] !== undefined) continue
        // `import static a.b.C.member`: the class is the name without its last part.
        specifiers.push(match[1] !== undefined ? match[2]!.replace(/\.[^.]+$/, "") : match[2]!)
      }
      return { specifiers: [...new Set(specifiers)], provides: [declared === undefined ? name : `${declared}.${name}`] }
    }
    case "rust":
      return { specifiers: allMatches(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/gm, text).map((name) => `mod:${name}`), provides: [] }
    case "c":
    case "cpp":
    case "objective-c":
      return { specifiers: allMatches(/^\s*#\s*(?:include|import)\s+"([^"\n]+)"/gm, text), provides: [] }
    case "ruby":
      return { specifiers: allMatches(/^\s*require_relative\s*\(?\s*["']([^"'\n]+)["']/gm, text), provides: [] }
    default: {
      const config = configFactsOf(path, text)
      if (config !== undefined) return { specifiers: [], provides: [], config }
      if (basename(path) === "go.mod") {
        const module = goModule.exec(text)?.[2]
        return module === undefined ? none : { specifiers: [], provides: [`go:${module}`] }
      }
      return none
    }
  }
}

const ecmaExtensions = ["ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs", "mts", "cts", "json", "vue", "svelte"]
const ecmaIndexes = ["ts", "tsx", "js", "jsx", "mjs", "cjs"]
// What TypeScript tries for a specifier written with the extension of its output.
const emittedToSource: Record<string, ReadonlyArray<string>> = {
  js: ["ts", "tsx", "d.ts"], jsx: ["tsx"], mjs: ["mts", "d.mts"], cjs: ["cts", "d.cts"]
}

interface Repository {
  readonly paths: ReadonlySet<string>
  /** A directory's `package.json` `main`, by directory. */
  readonly mains: ReadonlyMap<string, string>
  /** Non-relative ECMAScript specifiers. */
  readonly packages: EcmaPackages
  readonly goFilesByDirectory: ReadonlyMap<string, ReadonlyArray<string>>
  readonly goModules: ReadonlyArray<{ readonly directory: string; readonly module: string }>
  readonly javaClasses: ReadonlyMap<string, string>
  readonly pythonRoots: ReadonlyArray<string>
  readonly bySuffix: (suffix: string) => ReadonlyArray<string>
}

/** The files Node and TypeScript try for `target` as a file: as written, with an extension, its source for an emitted name. */
const fileCandidates = (target: string): Array<string> => {
  if (target === "") return []
  const candidates: Array<string> = []
  const extension = extensionOf(target)
  if (extension !== "") {
    candidates.push(target)
    for (const source of emittedToSource[extension] ?? []) candidates.push(`${target.slice(0, -extension.length)}${source}`)
  }
  for (const candidate of ecmaExtensions) candidates.push(`${target}.${candidate}`)
  return candidates
}

const indexCandidates = (directory: string): Array<string> =>
  ecmaIndexes.map((candidate) => (directory === "" ? `index.${candidate}` : `${directory}/index.${candidate}`))

const isRelative = (specifier: string) =>
  specifier.startsWith("./") || specifier.startsWith("../") || specifier === "." || specifier === ".."

const resolveEcma = (repo: Repository, from: string, specifier: string): Array<string> => {
  if (!isRelative(specifier)) {
    const found = repo.packages.resolve(from, specifier)
    return found === undefined ? [] : [found]
  }
  const target = join(dirname(from), specifier)
  if (target === undefined) return []
  // `.`, `..` and `x/` name a directory: Node does not try `x.js` for them.
  const directoryOnly = /(?:^|\/)\.{1,2}$|\/$/.test(specifier)
  const candidates = directoryOnly ? [] : fileCandidates(target)
  // A directory: its package.json's main (as a file, then as a directory), then its index.
  const main = repo.mains.get(target)
  const mainTarget = main === undefined ? undefined : join(target, main)
  if (mainTarget !== undefined && mainTarget !== target) candidates.push(...fileCandidates(mainTarget), ...indexCandidates(mainTarget))
  candidates.push(...indexCandidates(target))
  const found = candidates.find((candidate) => repo.paths.has(candidate))
  return found === undefined ? [] : [found]
}

const pythonModule = (repo: Repository, base: string, dotted: string): string | undefined => {
  const path = dotted === "" ? base : join(base, dotted.split(".").join("/"))
  if (path === undefined) return undefined
  const init = path === "" ? "__init__.py" : `${path}/__init__.py`
  for (const candidate of dotted === "" ? [init] : [`${path}.py`, `${path}.pyi`, init]) {
    if (repo.paths.has(candidate)) return candidate
  }
  return undefined
}

const resolvePython = (repo: Repository, from: string, specifier: string): Array<string> => {
  const [module, names] = specifier.split("|") as [string, string | undefined]
  const dots = /^\.*/.exec(module)![0].length
  const dotted = module.slice(dots)
  let bases: ReadonlyArray<string>
  if (dots > 0) {
    let base: string | undefined = dirname(from)
    for (let level = 1; level < dots && base !== undefined; level++) base = base === "" ? undefined : dirname(base)
    if (base === undefined) return []
    bases = [base]
  } else {
    bases = [dirname(from), ...repo.pythonRoots]
  }
  for (const base of bases) {
    const submodules = (names ?? "").split(",").filter((name) => name !== "")
      .map((name) => pythonModule(repo, base, dotted === "" ? name : `${dotted}.${name}`))
      .filter((path): path is string => path !== undefined)
    if (submodules.length > 0) return submodules
    // No imported name is a module: the module itself (`from .x import f`), or the package (`from . import f`).
    const found = pythonModule(repo, base, dotted)
    if (found !== undefined) return [found]
  }
  return []
}

const resolveGo = (repo: Repository, specifier: string): ReadonlyArray<string> => {
  let best: { directory: string; module: string } | undefined
  for (const candidate of repo.goModules) {
    if ((specifier === candidate.module || specifier.startsWith(`${candidate.module}/`)) &&
      (best === undefined || candidate.module.length > best.module.length)) best = candidate
  }
  if (best === undefined) return []
  const rest = specifier.slice(best.module.length + 1)
  const directory = best.directory === "" ? rest : rest === "" ? best.directory : `${best.directory}/${rest}`
  return repo.goFilesByDirectory.get(directory) ?? []
}

const resolveRustModule = (repo: Repository, from: string, name: string): Array<string> => {
  const file = basename(from)
  // `mod x;` in `lib.rs`, `main.rs` or `mod.rs` is beside it; in `a.rs`, it is in `a/`.
  const base = /^(?:lib|main|mod)\.rs$/.test(file) ? dirname(from) : join(dirname(from), file.replace(/\.rs$/, ""))
  if (base === undefined) return []
  const prefix = base === "" ? "" : `${base}/`
  const found = [`${prefix}${name}.rs`, `${prefix}${name}/mod.rs`].find((candidate) => repo.paths.has(candidate))
  return found === undefined ? [] : [found]
}

const resolveInclude = (repo: Repository, from: string, specifier: string): Array<string> => {
  const beside = join(dirname(from), specifier)
  if (beside !== undefined && repo.paths.has(beside)) return [beside]
  // An include path (`include/`, `src/`): the one file in the repository with that ending, if only one.
  const matches = repo.bySuffix(specifier.replace(/^(?:\.\.?\/)+/, ""))
  return matches.length === 1 ? [matches[0]!] : []
}

const resolveRuby = (repo: Repository, from: string, specifier: string): Array<string> => {
  const target = join(dirname(from), specifier)
  if (target === undefined) return []
  const found = [target, `${target}.rb`].find((candidate) => repo.paths.has(candidate))
  return found === undefined ? [] : [found]
}

const pythonProjectFiles = new Set(["pyproject.toml", "setup.py", "setup.cfg"])

const repository = (
  files: ReadonlyArray<{ readonly path: string; readonly language: string }>,
  facts: ReadonlyMap<string, ImportFacts>
): Repository => {
  const paths = new Set(files.map((file) => file.path))
  const goFilesByDirectory = new Map<string, Array<string>>()
  const goModules: Array<{ directory: string; module: string }> = []
  const javaClasses = new Map<string, string>()
  const pythonRoots = new Set<string>(["", "src"])
  const mains = new Map<string, string>()
  const configs = new Map<string, ConfigFacts>()
  for (const file of files) {
    const name = basename(file.path)
    if (file.language === "go" && !name.endsWith("_test.go")) {
      const directory = dirname(file.path)
      const list = goFilesByDirectory.get(directory)
      if (list) list.push(file.path)
      else goFilesByDirectory.set(directory, [file.path])
    }
    if (pythonProjectFiles.has(name)) {
      const directory = dirname(file.path)
      pythonRoots.add(directory)
      pythonRoots.add(directory === "" ? "src" : `${directory}/src`)
    }
    const said = facts.get(file.path)
    for (const provided of said?.provides ?? []) {
      if (provided.startsWith("go:")) goModules.push({ directory: dirname(file.path), module: provided.slice(3) })
      else if (file.language === "java") javaClasses.set(provided, file.path)
    }
    if (said?.config !== undefined) {
      configs.set(file.path, said.config)
      // What a relative import of its directory loads (`require("../")`): its `main`.
      if (said.config.kind === "package" && said.config.main !== undefined) mains.set(dirname(file.path), said.config.main)
    }
  }
  let suffixes: Map<string, Array<string>> | undefined
  const bySuffix = (suffix: string): ReadonlyArray<string> => {
    if (suffixes === undefined) {
      // Built on first use (C and C++ includes only): every path under each of its trailing segments.
      suffixes = new Map()
      for (const path of paths) {
        const parts = path.split("/")
        for (let i = 0; i < parts.length; i++) {
          const key = parts.slice(i).join("/")
          const list = suffixes.get(key)
          if (list) list.push(path)
          else suffixes.set(key, [path])
        }
      }
    }
    return suffixes.get(suffix) ?? []
  }
  const candidates = (target: string) => [...fileCandidates(target), ...indexCandidates(target)]
  const packages = ecmaPackages({ paths, candidates }, configs)
  return { paths, mains, packages, goFilesByDirectory, goModules, javaClasses, pythonRoots: [...pythonRoots], bySuffix }
}

/** The import edges between `files`, from what each said (`facts`, by path). Sorted, without duplicates or self-imports. */
export const resolveImports = (
  files: ReadonlyArray<{ readonly path: string; readonly language: string }>,
  facts: ReadonlyMap<string, ImportFacts>
): Array<ImportEdge> => {
  const repo = repository(files, facts)
  const edges = new Map<string, ImportEdge>()
  for (const file of files) {
    const said = facts.get(file.path)
    if (said === undefined) continue
    for (const specifier of said.specifiers) {
      let targets: ReadonlyArray<string>
      switch (file.language) {
        case "python":
          targets = resolvePython(repo, file.path, specifier)
          break
        case "go":
          targets = resolveGo(repo, specifier)
          break
        case "java": {
          const target = repo.javaClasses.get(specifier)
          targets = target === undefined ? [] : [target]
          break
        }
        case "rust":
          targets = resolveRustModule(repo, file.path, specifier.slice(4))
          break
        case "c":
        case "cpp":
        case "objective-c":
          targets = resolveInclude(repo, file.path, specifier)
          break
        case "ruby":
          targets = resolveRuby(repo, file.path, specifier)
          break
        default:
          targets = resolveEcma(repo, file.path, specifier)
      }
      for (const to of targets) {
        if (to !== file.path) edges.set(`${file.path}\0${to}`, new ImportEdge({ from: file.path, to }, { disableValidation: true }))
      }
    }
  }
  return [...edges.values()].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : a.to < b.to ? -1 : a.to > b.to ? 1 : 0))
}
