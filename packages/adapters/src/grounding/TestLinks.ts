/**
 * Which tests exercise which source files. A test links to a source file it imports (`import`),
 * directly or through one test helper it imports (a helper being a test file that other test files
 * import: `test/helpers.ts`, `tests/utils.py`); and to the source file it is named after (`name`):
 * `foo.test.ts` ↔ `foo.ts`, `test_foo.py` ↔ `foo.py`, `foo_test.go` ↔ `foo.go` (same package
 * directory), `FooTest.java` ↔ `Foo.java`. A name that fits several source files goes to the one
 * in the same directory, else the one whose directories (beside `src/`, `test/`, …) match best;
 * a tie links none. One link per (source, test) pair; an import is the stronger evidence.
 */
import type { ImportEdge, IndexedFile } from "@huddle/domain/grounding/Snapshot"
import { TestLink } from "@huddle/domain/grounding/Snapshot"

const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1)
const directoriesOf = (path: string): Array<string> => path.split("/").slice(0, -1)

const families: Record<string, string> = {
  ts: "ecma", tsx: "ecma", mts: "ecma", cts: "ecma", js: "ecma", jsx: "ecma", mjs: "ecma", cjs: "ecma",
  py: "python", go: "go", rb: "ruby", java: "jvm", kt: "jvm", kts: "jvm", scala: "jvm", groovy: "jvm",
  cs: "dotnet", swift: "swift", dart: "dart", ex: "elixir", exs: "elixir", rs: "rust",
  c: "c", h: "c", cc: "c", cpp: "c", cxx: "c", hpp: "c", php: "php"
}

const testStems: ReadonlyArray<RegExp> = [
  /^(.+)\.(?:test|spec|e2e)\.([a-z0-9]+)$/,
  /^test_(.+)\.(py)$/,
  /^(.+)_(?:test|spec)\.([a-z]+)$/,
  /^(.+?)(?:Tests?|Spec|IT)\.([a-z]+)$/
]

/** The name of the source a test file is named after, with its language family (`foo.test.ts` → `ecma:foo`). */
const testedName = (path: string): string | undefined => {
  const name = basename(path)
  for (const pattern of testStems) {
    const match = pattern.exec(name)
    if (match !== null) {
      const family = families[match[2]!.toLowerCase()]
      return family === undefined ? undefined : `${family}:${match[1]!}`
    }
  }
  return undefined
}

const sourceName = (path: string): string | undefined => {
  const name = basename(path)
  const dot = name.lastIndexOf(".")
  if (dot <= 0) return undefined
  const family = families[name.slice(dot + 1).toLowerCase()]
  return family === undefined ? undefined : `${family}:${name.slice(0, dot)}`
}

// Directories that say where code lives, not what it is about: left out when comparing a test's place with a source's.
const layoutDirectories = new Set(["src", "lib", "test", "tests", "__tests__", "spec", "specs", "main", "java", "kotlin", "scala", "unit", "integration", "e2e", "source", "sources"])

const commonSuffix = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  let n = 0
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++
  return n
}

const commonPrefix = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return n
}

/** The source a test is named after, among candidates of the same name; `undefined` when none or a tie. */
const bestNamed = (test: string, candidates: ReadonlyArray<string>, family: string): string | undefined => {
  const testDirectory = directoriesOf(test).join("/")
  const sameDirectory = candidates.filter((candidate) => directoriesOf(candidate).join("/") === testDirectory)
  if (sameDirectory.length === 1) return sameDirectory[0]
  // A Go test belongs to its directory's package: elsewhere is another package.
  if (family === "go" || sameDirectory.length > 1) return undefined
  const testPlace = directoriesOf(test).filter((directory) => !layoutDirectories.has(directory))
  let best: string | undefined
  let bestScore = -1
  let tie = false
  for (const candidate of candidates) {
    const place = directoriesOf(candidate).filter((directory) => !layoutDirectories.has(directory))
    // The nearest directories first, then the shared prefix (the same package of a monorepo).
    const score = commonSuffix(testPlace, place) * 1000 + commonPrefix(directoriesOf(test), directoriesOf(candidate))
    if (score > bestScore) {
      best = candidate
      bestScore = score
      tie = false
    } else if (score === bestScore) tie = true
  }
  return tie ? undefined : best
}

export const testLinks = (files: ReadonlyArray<IndexedFile>, imports: ReadonlyArray<ImportEdge>): Array<TestLink> => {
  const categories = new Map(files.map((file) => [file.path, file.category]))
  const importsOf = new Map<string, Array<string>>()
  for (const edge of imports) {
    const list = importsOf.get(edge.from)
    if (list) list.push(edge.to)
    else importsOf.set(edge.from, [edge.to])
  }
  const isTest = (path: string) => categories.get(path) === "test"
  const isSource = (path: string) => categories.get(path) === "source"
  // Test runners find test cases by themselves; a test file that other tests import is a helper.
  const helpers = new Set(imports.filter((edge) => isTest(edge.from) && isTest(edge.to)).map((edge) => edge.to))

  const links = new Map<string, TestLink>()
  const add = (source: string, test: string, via: "import" | "name") => {
    const key = `${source}\0${test}`
    const existing = links.get(key)
    if (existing === undefined || (existing.via === "name" && via === "import")) {
      links.set(key, new TestLink({ source, test, via }, { disableValidation: true }))
    }
  }

  const sourcesByName = new Map<string, Array<string>>()
  for (const file of files) {
    if (file.category !== "source") continue
    const name = sourceName(file.path)
    if (name === undefined) continue
    const list = sourcesByName.get(name)
    if (list) list.push(file.path)
    else sourcesByName.set(name, [file.path])
  }

  for (const file of files) {
    if (file.category !== "test" || helpers.has(file.path)) continue
    for (const imported of importsOf.get(file.path) ?? []) {
      if (isSource(imported)) add(imported, file.path, "import")
      else if (helpers.has(imported)) {
        for (const throughHelper of importsOf.get(imported) ?? []) if (isSource(throughHelper)) add(throughHelper, file.path, "import")
      }
    }
    const named = testedName(file.path)
    const candidates = named === undefined ? undefined : sourcesByName.get(named)
    if (named !== undefined && candidates !== undefined) {
      const source = bestNamed(file.path, candidates, named.slice(0, named.indexOf(":")))
      if (source !== undefined) add(source, file.path, "name")
    }
  }
  return [...links.values()].sort((a, b) =>
    a.source < b.source ? -1 : a.source > b.source ? 1 : a.test < b.test ? -1 : a.test > b.test ? 1 : 0
  )
}
