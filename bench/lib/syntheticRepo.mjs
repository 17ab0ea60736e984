/**
 * A generated monorepo for the grounding benchmark, the same for the same seed: TypeScript
 * packages, a JavaScript app, Python and Go services, each source a few functions and classes
 * (2 to 12 KB) that import one another as their language does (relative ES imports, Python
 * packages under a `pyproject.toml`, Go packages of a `go.mod` module), tests that import the
 * sources they exercise, documentation and configuration; and what an indexer must leave out:
 * a lockfile and other locks, a checked-in Go `vendor/` tree, a minified bundle, images, a
 * protobuf-generated file and one with a generated header, and a `node_modules/` and `dist/`
 * that `.gitignore` excludes.
 *
 * Identifiers are made of a vocabulary drawn Zipf-like (a few words everywhere, most rare), so
 * that the index sees the term frequencies of a real codebase rather than uniform noise.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"

const domainWords = (
  "account address admin agent alert archive asset audit auth backoff balance batch billing block bucket budget buffer " +
  "cache call card cart catalog channel charge check checkout claim client cluster code column comment commit config " +
  "connection consumer contact content context cookie credit cursor customer dashboard data debit delivery device " +
  "digest discount document domain draft email encoder endpoint entry event exporter feature feed field file filter " +
  "flag form gateway grant graph group handler hash header health history hook identity image importer index inventory " +
  "invoice item job key label ledger limit link listener loader lock log mailbox manifest mapper market member message " +
  "metric migration mode model monitor node notice notification offer order owner bundle page parser partition " +
  "password payload payment peer permission pipeline plan plugin policy pool post preference price profile project " +
  "provider quota query queue quote rate receipt record refund region registry release report request reservation " +
  "resource response result retry review role route rule schedule schema scope secret segment sequence session " +
  "setting shard shipment signal snapshot source span status stock store stream subscription supplier sync table " +
  "task team template tenant ticket timer token topic trace transaction transfer trigger upload usage user vault " +
  "vendor version voucher wallet warehouse webhook widget window worker workflow workspace"
).split(" ")
const verbs = (
  "apply build cancel check close collect compute create decode delete encode ensure expire fetch find flush format " +
  "get handle index load lookup mark merge normalize open parse pick prepare publish read record refresh register " +
  "release remove render replay reserve resolve restore retry save schedule send serialize settle split start stop " +
  "submit sync track transform update upsert validate verify watch write"
).split(" ")
const syllables = ["ar", "be", "co", "da", "el", "fi", "go", "ha", "in", "jo", "ka", "lu", "mo", "ne", "or", "pa", "qui", "ro", "su", "ta", "um", "ve", "wi", "xo", "yu", "ze"]

const cap = (w) => w[0].toUpperCase() + w.slice(1)
const camel = (ws) => ws.map((w, i) => (i === 0 ? w : cap(w))).join("")
const pascal = (ws) => ws.map(cap).join("")
const snake = (ws) => ws.join("_")
const kebab = (ws) => ws.join("-")

/** The generator's randomness: xorshift32 from the seed, so a seed always gives the same repository. */
const rng = (seed) => {
  let state = (Number(seed) >>> 0) || 1
  const random = () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4294967296
  }
  const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1))
  const pick = (list) => list[Math.floor(random() * list.length)]
  // The k-th element with probability ~1/k.
  const zipf = (list) => list[Math.min(list.length - 1, Math.floor(Math.exp(random() * Math.log(list.length + 1))) - 1)]
  return { random, int, pick, zipf }
}

/**
 * Writes the repository under `dir` (which must exist and be empty). Returns what it wrote and
 * what questions can be asked about it: `modules` (sources, with the names they define), `tests`,
 * `counts`.
 */
export const generate = (dir, { files: wanted = 5000, seed = 1 } = {}) => {
  const r = rng(seed)
  // Words: the domain's, then made-up ones (a codebase's own jargon), drawn Zipf-like.
  const made = Array.from({ length: 1500 }, () => Array.from({ length: r.int(2, 3) }, () => r.pick(syllables)).join(""))
  const vocabulary = [...domainWords].sort(() => r.random() - 0.5).concat(made)
  const word = () => r.zipf(vocabulary)
  // A directory named like a vendored, build-output, test or docs tree would change what the indexer makes of its files.
  const reserved = new Set(["vendor", "dist", "build", "out", "target", "coverage", "test", "tests", "spec", "docs", "doc", "man", "cache"])
  const area = () => {
    for (;;) {
      const w = r.zipf(vocabulary)
      if (!reserved.has(w)) return w
    }
  }
  const sentence = (n = r.int(5, 12)) => {
    const ws = Array.from({ length: n }, () => (r.random() < 0.3 ? r.pick(["the", "a", "when", "is", "to", "of", "and", "before", "after", "if"]) : word()))
    return `${cap(ws.join(" "))}.`
  }

  const written = []
  let bytes = 0
  const write = (path, text) => {
    const absolute = join(dir, path)
    mkdirSync(dirname(absolute), { recursive: true })
    writeFileSync(absolute, text)
    written.push(path)
    bytes += Buffer.byteLength(text)
  }

  // Shares of the wanted files: sources and tests by language, then docs and configuration.
  const share = (f) => Math.round(wanted * f)
  const plan = {
    ts: share(0.36), tsTest: share(0.1), js: share(0.09), jsTest: share(0.02),
    py: share(0.16), pyTest: share(0.04), go: share(0.12), goTest: share(0.04)
  }

  const modules = []
  const taken = new Set()
  const unique = (path) => {
    let p = path
    for (let n = 2; taken.has(p); n++) p = path.replace(/(\.[a-z]+)$/, `${n}$1`)
    taken.add(p)
    return p
  }
  const topicOf = () => (r.random() < 0.6 ? [word(), word()] : [word()])
  const exportsOf = (topic) => {
    const names = { class: pascal(topic), functions: [] }
    const n = r.int(3, 7)
    for (let i = 0; i < n; i++) names.functions.push([r.pick(verbs), ...(r.random() < 0.5 ? topic : [word()]), ...(r.random() < 0.25 ? [word()] : [])])
    return names
  }

  // --- layout: the modules of each language, before any text (importers need their names)
  const tsPackages = Array.from({ length: 12 }, (_, i) => `${i === 0 ? "core" : word()}${i === 0 ? "" : i}`)
  for (let i = 0; i < plan.ts; i++) {
    const pkg = tsPackages[i % tsPackages.length]
    const topic = topicOf()
    const name = r.random() < 0.5 ? camel(topic) : kebab(topic)
    modules.push({ language: "typescript", group: pkg, path: unique(`packages/${pkg}/src/${area()}/${name}.ts`), topic, names: exportsOf(topic) })
  }
  for (let i = 0; i < plan.js; i++) {
    const topic = topicOf()
    modules.push({ language: "javascript", group: "web", path: unique(`apps/web/src/${area()}/${camel(topic)}.js`), topic, names: exportsOf(topic) })
  }
  const pyServices = Array.from({ length: 4 }, (_, i) => ({ service: `${word()}-service${i}`, pkg: `${word()}_svc${i}` }))
  for (let i = 0; i < plan.py; i++) {
    const { service, pkg } = pyServices[i % pyServices.length]
    const sub = area()
    const topic = topicOf()
    modules.push({ language: "python", group: service, pkg, sub, module: snake(topic), path: unique(`services/${service}/${pkg}/${sub}/${snake(topic)}.py`), topic, names: exportsOf(topic) })
  }
  const goServices = Array.from({ length: 4 }, (_, i) => `${word()}d${i}`)
  for (let i = 0; i < plan.go; i++) {
    const service = goServices[i % goServices.length]
    const pkg = area()
    const topic = topicOf()
    modules.push({ language: "go", group: service, pkg, path: unique(`services/${service}/internal/${pkg}/${snake(topic)}.go`), topic, names: exportsOf(topic) })
  }
  const byGroup = new Map()
  for (const m of modules) {
    if (!byGroup.has(m.group)) byGroup.set(m.group, [])
    byGroup.get(m.group).push(m)
  }
  const goPackageNames = (m) => m.names.functions.map((ws) => pascal(ws))

  const relative = (from, to) => {
    const a = from.split("/").slice(0, -1)
    const b = to.split("/")
    let i = 0
    while (i < a.length && i < b.length - 1 && a[i] === b[i]) i++
    const up = a.length - i
    return `${up === 0 ? "./" : "../".repeat(up)}${b.slice(i).join("/")}`
  }

  // --- bodies: statements over the names in scope, in each language's syntax
  const body = (lang, scope, depth, lines, indent) => {
    const pad = " ".repeat(indent)
    const local = () => (scope.locals.length > 0 && r.random() < 0.6 ? r.pick(scope.locals) : camel([word(), ...(r.random() < 0.4 ? [word()] : [])]))
    const id = (ws) => (lang === "python" ? snake(ws) : camel(ws))
    const callee = () => {
      const x = r.random()
      if (x < 0.3 && scope.imported.length > 0) return r.pick(scope.imported)
      if (x < 0.5 && scope.own.length > 0) return r.pick(scope.own)
      return id([r.pick(verbs), word()])
    }
    const prop = () => (lang === "go" ? pascal([word()]) : lang === "python" ? snake([word(), ...(r.random() < 0.3 ? [word()] : [])]) : camel([word(), ...(r.random() < 0.3 ? [word()] : [])]))
    const n = r.int(3, 9)
    for (let s = 0; s < n; s++) {
      const v = lang === "python" ? snake([word()]) : local()
      const x = r.random()
      if (x < 0.12) lines.push(lang === "python" ? `${pad}# ${sentence()}` : `${pad}// ${sentence()}`)
      if (x < 0.35) {
        scope.locals.push(v)
        if (lang === "go") lines.push(`${pad}${v}, err := ${callee()}(${local()}, ${local()}.${prop()})`, `${pad}if err != nil {`, `${pad}\treturn nil, fmt.Errorf("${word()} ${word()}: %w", err)`, `${pad}}`)
        else if (lang === "python") lines.push(`${pad}${v} = ${callee()}(${snake([word()])}, ${snake([word()])}=${r.int(1, 500)})`)
        else lines.push(`${pad}const ${v} = ${r.random() < 0.3 ? "await " : ""}${callee()}(${local()}, ${local()}.${prop()})`)
      } else if (x < 0.5 && depth < 2) {
        if (lang === "go") lines.push(`${pad}for _, ${v} := range ${local()}.${prop()} {`)
        else if (lang === "python") lines.push(`${pad}for ${v} in ${snake([word()])}.${prop()}:`)
        else lines.push(`${pad}for (const ${v} of ${local()}.${prop()}) {`)
        body(lang, { ...scope, locals: [...scope.locals, v] }, depth + 1, lines, indent + (lang === "go" ? 1 : 4))
        if (lang !== "python") lines.push(`${pad}}`)
      } else if (x < 0.65) {
        if (lang === "go") lines.push(`${pad}if ${local()}.${prop()} == nil {`, `${pad}\treturn nil, errors.New("${sentence(5)}")`, `${pad}}`)
        else if (lang === "python") lines.push(`${pad}if ${snake([word()])} is None:`, `${pad}    raise ValueError("${sentence(5)}")`)
        else lines.push(`${pad}if (${local()}.${prop()} === undefined) {`, `${pad}  throw new Error("${sentence(5)}")`, `${pad}}`)
      } else if (x < 0.8) {
        if (lang === "go") lines.push(`${pad}${local()}.${prop()} = ${callee()}(${local()})`)
        else if (lang === "python") lines.push(`${pad}self.${prop()} = ${callee()}(${snake([word()])})`)
        else lines.push(`${pad}${local()}.${prop()} = ${callee()}(${local()}, "${word()}")`)
      } else if (x < 0.9) {
        if (lang === "go") lines.push(`${pad}log.Printf("${word()} ${word()} %v", ${local()})`)
        else if (lang === "python") lines.push(`${pad}logger.info("${word()} ${word()} %s", ${snake([word()])})`)
        else lines.push(`${pad}logger.debug("${word()} ${word()}", { ${prop()}: ${local()} })`)
      } else {
        if (lang === "go") lines.push(`${pad}${callee()}(${local()}, ${r.int(1, 100)})`)
        else if (lang === "python") lines.push(`${pad}${callee()}(${snake([word()])})`)
        else lines.push(`${pad}${callee()}(${local()}, ${r.int(1, 100)})`)
      }
    }
    if (lang === "go") lines.push(`${" ".repeat(indent)}return ${local()}, nil`)
    else if (lang === "python") lines.push(`${pad}return ${snake([word()])}`)
    else lines.push(`${pad}return ${local()}`)
  }

  const typeName = () => pascal([word(), ...(r.random() < 0.5 ? [r.pick(["options", "result", "state", "config", "event", "record"])] : [])])

  // TypeScript and JavaScript: imports of other modules of the package, then interfaces,
  // functions and a class, until the file has its size.
  const renderEcma = (m, target) => {
    const ts = m.language === "typescript"
    const lines = []
    const peers = byGroup.get(m.group)
    const imported = []
    for (let k = r.int(2, 5); k > 0; k--) {
      const other = r.pick(peers)
      if (other === m) continue
      const names = [...new Set([other.names.class, ...other.names.functions.slice(0, r.int(1, 3)).map(camel)])]
      imported.push(...names)
      lines.push(`import { ${names.join(", ")} } from "${relative(m.path, other.path).replace(/\.ts$/, ".js")}"`)
    }
    if (ts && r.random() < 0.3 && m.group !== "core") lines.push(`import { ${pascal([word()])} } from "@mono/core"`)
    lines.push(`import { logger } from "${r.random() < 0.5 ? "../log.js" : "@mono/log"}"`, "")
    const own = m.names.functions.map(camel)
    const scope = () => ({ locals: [], imported, own })
    let size = lines.join("\n").length
    let f = 0
    const members = []
    if (ts) members.push("interface")
    members.push("class")
    while (size < target) {
      const kind = members.shift() ?? (f < m.names.functions.length || r.random() >= 0.3 ? "function" : "interface")
      const out = []
      out.push(`/**`, ` * ${sentence()}`, ` */`)
      if (kind === "interface") {
        out.push(`export interface ${m.names.class}${r.pick(["Options", "State", "Settings", ""])}${f > 0 ? f : ""} {`)
        for (let p = r.int(3, 8); p > 0; p--) out.push(`  readonly ${camel([word()])}${r.random() < 0.3 ? "?" : ""}: ${r.pick(["string", "number", "boolean", typeName(), `ReadonlyArray<${typeName()}>`])}`)
        out.push("}")
      } else if (kind === "class") {
        out.push(`export class ${m.names.class} {`, `  private readonly ${camel([word(), "cache"])} = new Map<string, ${typeName()}>()`, "")
        out.push(`  constructor(private readonly ${camel([word()])}${ts ? `: ${typeName()}` : ""}) {}`)
        for (let k = r.int(2, 4); k > 0; k--) {
          const method = camel([r.pick(verbs), word()])
          own.push(`this.${method}`)
          out.push("", `  ${r.random() < 0.3 ? "async " : ""}${method}(${camel([word()])}${ts ? `: ${typeName()}` : ""}, ${camel([word()])}${ts ? "?: number" : ""})${ts ? `: ${typeName()}` : ""} {`)
          body("ecma", scope(), 1, out, 4)
          out.push("  }")
        }
        out.push("}")
      } else {
        const name = f < m.names.functions.length ? camel(m.names.functions[f]) : camel([r.pick(verbs), word()])
        f++
        if (r.random() < 0.5) out.push(`export function ${name}(${camel([word()])}${ts ? `: ${typeName()}` : ""}, ${camel([word()])}${ts ? `: ${typeName()}` : ""})${ts ? `: ${typeName()}` : ""} {`)
        else out.push(`export const ${name} = ${r.random() < 0.3 ? "async " : ""}(${camel([word()])}${ts ? `: ${typeName()}` : ""})${ts ? `: ${typeName()}` : ""} => {`)
        body("ecma", scope(), 1, out, 2)
        out.push("}")
      }
      out.push("")
      lines.push(...out)
      size += out.join("\n").length
    }
    return lines.join("\n")
  }

  const renderPython = (m, target) => {
    const lines = [`"""${sentence()}"""`, "", "from __future__ import annotations", "", "import logging", r.random() < 0.5 ? "from dataclasses import dataclass, field" : "from typing import Any, Optional"]
    const peers = byGroup.get(m.group)
    const imported = []
    for (let k = r.int(2, 4); k > 0; k--) {
      const other = r.pick(peers)
      if (other === m) continue
      const names = [...new Set([other.names.class, ...other.names.functions.slice(0, r.int(1, 2)).map(snake)])]
      imported.push(...names)
      const beside = dirname(other.path) === dirname(m.path)
      lines.push(beside && r.random() < 0.5 ? `from .${other.module} import ${names.join(", ")}` : `from ${other.pkg}.${other.sub}.${other.module} import ${names.join(", ")}`)
    }
    lines.push("", "logger = logging.getLogger(__name__)", "")
    const own = m.names.functions.map(snake)
    let size = lines.join("\n").length
    let f = 0
    let classDone = false
    while (size < target) {
      const out = [""]
      if (!classDone) {
        classDone = true
        out.push(`class ${m.names.class}:`, `    """${sentence()}"""`, "", `    def __init__(self, ${snake([word()])}, ${snake([word()])}=None):`, `        self.${snake([word()])} = ${snake([word()])}`, "")
        for (let k = r.int(2, 4); k > 0; k--) {
          const method = snake([r.pick(verbs), word()])
          out.push(`    def ${method}(self, ${snake([word()])}, ${snake([word()])}=None):`, `        """${sentence()}"""`)
          body("python", { locals: [], imported, own }, 1, out, 8)
          out.push("")
        }
      } else {
        const name = f < m.names.functions.length ? snake(m.names.functions[f]) : snake([r.pick(verbs), word()])
        f++
        out.push(`def ${name}(${snake([word()])}, ${snake([word()])}=None):`, `    """${sentence()}"""`)
        body("python", { locals: [], imported, own }, 1, out, 4)
      }
      out.push("")
      lines.push(...out)
      size += out.join("\n").length
    }
    return lines.join("\n")
  }

  const goModuleOf = (service) => `example.com/mono/${service}`
  const renderGo = (m, target) => {
    const peers = byGroup.get(m.group).filter((o) => o.pkg !== m.pkg)
    const imports = new Set(["errors", "fmt", "log"])
    const imported = []
    for (let k = r.int(1, 3); k > 0 && peers.length > 0; k--) {
      const other = r.pick(peers)
      imports.add(`${goModuleOf(m.group)}/internal/${other.pkg}`)
      imported.push(...goPackageNames(other).slice(0, 2).map((n) => `${other.pkg}.${n}`))
    }
    const lines = [`// Package ${m.pkg}: ${sentence()}`, `package ${m.pkg}`, "", "import (", ...[...imports].sort().map((i) => `\t"${i}"`), ")", ""]
    const own = goPackageNames(m)
    let size = lines.join("\n").length
    let f = 0
    let typeDone = false
    while (size < target) {
      const out = [`// ${sentence()}`]
      if (!typeDone) {
        typeDone = true
        out.push(`type ${m.names.class} struct {`)
        for (let p = r.int(3, 7); p > 0; p--) out.push(`\t${pascal([word()])} ${r.pick(["string", "int64", "bool", "[]string", "map[string]int", "*" + pascal([word()])])}`)
        out.push("}", "")
        for (let k = r.int(2, 3); k > 0; k--) {
          out.push(`// ${sentence()}`, `func (s *${m.names.class}) ${pascal([r.pick(verbs), word()])}(${camel([word()])} string) (*${pascal([word()])}, error) {`)
          body("go", { locals: [], imported, own }, 1, out, 1)
          out.push("}", "")
        }
      } else {
        const name = f < own.length ? own[f] : pascal([r.pick(verbs), word()])
        f++
        out.push(`func ${name}(${camel([word()])} string, ${camel([word()])} int) (*${pascal([word()])}, error) {`)
        body("go", { locals: [], imported, own }, 1, out, 1)
        out.push("}", "")
      }
      lines.push(...out)
      size += out.join("\n").length
    }
    return lines.join("\n").replace(/^ +/gm, (s) => "\t".repeat(Math.max(1, s.length)))
  }

  const sizeOf = () => Math.round(2048 * Math.exp(r.random() * Math.log(6)))
  for (const m of modules) {
    const target = sizeOf()
    const text = m.language === "python" ? renderPython(m, target) : m.language === "go" ? renderGo(m, target) : renderEcma(m, target)
    write(m.path, text)
  }

  // --- tests: each exercises a source module, imported as its language does
  const tests = []
  const testOf = (language, count) => {
    const sources = modules.filter((m) => m.language === language)
    for (let i = 0; i < count; i++) {
      const m = r.pick(sources)
      const cases = r.int(3, 10)
      let path
      let text
      if (language === "typescript" || language === "javascript") {
        path = language === "typescript" ? unique(m.path.replace("/src/", "/test/").replace(/\.ts$/, ".test.ts")) : unique(m.path.replace(/\.js$/, ".test.js"))
        const names = [m.names.class, ...m.names.functions.map(camel)]
        const lines = [`import { describe, expect, it } from "vitest"`, `import { ${names.join(", ")} } from "${relative(path, m.path).replace(/\.ts$/, ".js")}"`, "", `describe("${m.names.class}", () => {`]
        for (let c = 0; c < cases; c++) {
          const fn = r.pick(names.slice(1))
          lines.push(`  it("${sentence(6).toLowerCase().slice(0, -1)}", () => {`, `    const ${camel([word()])} = { ${camel([word()])}: "${word()}", ${camel([word()])}: ${r.int(1, 99)} }`, `    const result = ${fn}(${camel([word()])}, ${r.int(1, 9)})`, `    expect(result.${camel([word()])}).toEqual("${word()}")`, `    expect(() => ${fn}(undefined)).toThrow("${sentence(4)}")`, "  })", "")
        }
        lines.push("})", "")
        text = lines.join("\n")
      } else if (language === "python") {
        const service = m.path.split("/").slice(0, 2).join("/")
        path = unique(`${service}/tests/test_${m.module}.py`)
        const names = [m.names.class, ...m.names.functions.map(snake)]
        const lines = ["import pytest", "", `from ${m.pkg}.${m.sub}.${m.module} import ${names.join(", ")}`, ""]
        for (let c = 0; c < cases; c++) {
          const fn = r.pick(names.slice(1))
          lines.push("", `def test_${snake([r.pick(verbs), word(), word()])}():`, `    """${sentence()}"""`, `    ${snake([word()])} = ${m.names.class}(${snake([word()])}="${word()}")`, `    result = ${fn}(${snake([word()])}, ${r.int(1, 9)})`, `    assert result.${snake([word()])} == "${word()}"`, `    with pytest.raises(ValueError):`, `        ${fn}(None)`, "")
        }
        text = lines.join("\n")
      } else {
        path = unique(m.path.replace(/\.go$/, "_test.go"))
        const lines = [`package ${m.pkg}`, "", "import \"testing\"", ""]
        for (let c = 0; c < cases; c++) {
          const fn = r.pick(goPackageNames(m))
          lines.push(`func Test${pascal([r.pick(verbs), word(), word()])}(t *testing.T) {`, `\tgot, err := ${fn}("${word()}", ${r.int(1, 99)})`, "\tif err != nil {", `\t\tt.Fatalf("${word()}: %v", err)`, "\t}", `\tif got.${pascal([word()])} != "${word()}" {`, `\t\tt.Errorf("${sentence(4)}")`, "\t}", "}", "")
        }
        text = lines.join("\n")
      }
      write(path, text)
      tests.push({ path, source: m.path })
    }
  }
  testOf("typescript", plan.tsTest)
  testOf("javascript", plan.jsTest)
  testOf("python", plan.pyTest)
  testOf("go", plan.goTest)

  // --- configuration: each package's and service's, the repository's
  const deps = Array.from({ length: 40 }, (_, i) => `${r.pick(["", "@acme/"])}${word()}-${r.pick(["utils", "client", "kit", "core", "lib"])}${i}`)
  const packageJson = (name, extra = {}) => `${JSON.stringify({ name, version: `1.${r.int(0, 20)}.${r.int(0, 9)}`, private: true, type: "module", main: "dist/index.js", scripts: { build: "tsc -b", test: "vitest run" }, dependencies: Object.fromEntries(Array.from({ length: r.int(2, 8) }, () => [r.pick(deps), `^${r.int(1, 9)}.${r.int(0, 30)}.0`])), ...extra }, null, 2)}\n`
  const configs = []
  const config = (path, text) => {
    write(path, text)
    configs.push(path)
  }
  config("package.json", packageJson("mono", { workspaces: ["packages/*", "apps/*"] }))
  config("tsconfig.json", `${JSON.stringify({ compilerOptions: { strict: true, module: "NodeNext", target: "ES2022" }, references: tsPackages.map((p) => ({ path: `packages/${p}` })) }, null, 2)}\n`)
  config(".gitignore", "node_modules/\ndist/\n*.log\n.env\n")
  config(".editorconfig", "root = true\n\n[*]\nindent_style = space\nindent_size = 2\n")
  for (const p of tsPackages) {
    config(`packages/${p}/package.json`, packageJson(`@mono/${p}`))
    config(`packages/${p}/tsconfig.json`, `${JSON.stringify({ extends: "../../tsconfig.base.json", compilerOptions: { outDir: "dist", rootDir: "src" }, include: ["src"] }, null, 2)}\n`)
  }
  config("apps/web/package.json", packageJson("@mono/web"))
  config("apps/web/vite.config.js", `import { defineConfig } from "vite"\n\nexport default defineConfig({ server: { port: ${r.int(3000, 9000)} } })\n`)
  for (const { service, pkg } of pyServices) {
    config(`services/${service}/pyproject.toml`, `[project]\nname = "${service}"\nversion = "0.${r.int(1, 9)}.0"\nrequires-python = ">=3.11"\ndependencies = [${Array.from({ length: 4 }, () => `"${word()}>=${r.int(1, 5)}.0"`).join(", ")}]\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n`)
    write(`services/${service}/${pkg}/__init__.py`, `"""${sentence()}"""\n`)
    for (const sub of new Set(modules.filter((m) => m.group === service).map((m) => m.sub))) write(`services/${service}/${pkg}/${sub}/__init__.py`, "")
  }
  for (const service of goServices) {
    config(`services/${service}/go.mod`, `module ${goModuleOf(service)}\n\ngo 1.22\n\nrequire (\n\tgithub.com/${word()}/${word()} v1.${r.int(0, 9)}.0\n)\n`)
    write(`services/${service}/cmd/${service}/main.go`, `package main\n\nimport (\n\t"log"\n\n\t"${goModuleOf(service)}/internal/${modules.find((m) => m.group === service).pkg}"\n)\n\nfunc main() {\n\tlog.Println("${sentence()}")\n}\n`)
  }
  for (let i = 0; i < Math.max(4, Math.round(wanted * 0.006)); i++) {
    config(`.github/workflows/${word()}${i}.yml`, `name: ${word()}\non: [push, pull_request]\njobs:\n  ${word()}:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm ci && npm test\n`)
  }
  for (let i = 0; configs.length < share(0.03); i++) {
    config(`config/${word()}${i}.${r.pick(["yaml", "json", "toml"])}`, Array.from({ length: r.int(10, 60) }, () => `${snake([word()])}: ${r.random() < 0.5 ? r.int(1, 10000) : `"${word()}"`}`).join("\n") + "\n")
  }

  // --- documentation: the repository's, each package's README
  const docs = []
  const doc = (path) => {
    const lines = [`# ${cap(word())} ${word()}`, "", sentence(), ""]
    const target = r.int(1000, 8000)
    while (lines.join("\n").length < target) {
      const m = r.pick(modules)
      lines.push(`## ${cap(word())} ${word()}`, "", `${sentence()} See \`${m.path}\` and \`${m.language === "python" ? snake(m.names.functions[0]) : camel(m.names.functions[0])}\`. ${sentence()} ${sentence()}`, "", `- ${sentence()}`, `- ${sentence()}`, "")
    }
    write(path, lines.join("\n"))
    docs.push(path)
  }
  doc("README.md")
  doc("CHANGELOG.md")
  for (const p of tsPackages) doc(`packages/${p}/README.md`)
  for (let i = 0; docs.length < share(0.04); i++) doc(`docs/${area()}/${kebab([word(), word()])}${i}.md`)

  // --- what the index must leave out
  const lock = { name: "mono", lockfileVersion: 3, packages: Object.fromEntries(Array.from({ length: 1200 }, (_, i) => [`node_modules/${deps[i % deps.length]}-${i}`, { version: `${r.int(1, 9)}.${r.int(0, 30)}.${r.int(0, 9)}`, resolved: `https://registry.npmjs.org/x/-/x-${i}.tgz`, integrity: `sha512-${"x".repeat(86)}` }])) }
  write("package-lock.json", JSON.stringify(lock, null, 2))
  write("services/" + pyServices[0].service + "/poetry.lock", Array.from({ length: 300 }, (_, i) => `[[package]]\nname = "${word()}${i}"\nversion = "1.0.${i}"\n`).join("\n"))
  write("services/" + goServices[0] + "/go.sum", Array.from({ length: 300 }, (_, i) => `github.com/${word()}/${word()}${i} v1.${i}.0 h1:${"a".repeat(43)}=`).join("\n") + "\n")
  for (let i = 0; i < 120; i++) {
    write(`services/${goServices[0]}/vendor/github.com/${word()}/${word()}${i % 12}/${word()}${i}.go`, `package ${word().replace(/[^a-z]/g, "") || "v"}\n\n// ${sentence()}\nfunc ${pascal([r.pick(verbs), word()])}() {}\n`)
  }
  write("apps/web/public/vendor.min.js", `!function(){${Array.from({ length: 4000 }, (_, i) => `var a${i}=${i}`).join(";")}}();\n`)
  for (let i = 0; i < 6; i++) write(`apps/web/public/img/${word()}${i}.png`, Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]), Buffer.alloc(2048, i)]))
  write(`services/${goServices[1]}/internal/api/api.pb.go`, `// Code generated by protoc-gen-go. DO NOT EDIT.\npackage api\n\n${"type X struct{}\n".repeat(200)}`)
  write("packages/core/src/generated/schema.ts", `// @generated by schema-gen: do not edit\n${Array.from({ length: 200 }, (_, i) => `export const field${i} = "${word()}"`).join("\n")}\n`)
  const tracked = written.length
  // Ignored by .gitignore: never listed by git, never entered by the walk.
  for (let i = 0; i < 400; i++) write(`node_modules/${deps[i % deps.length]}/lib/${word()}${i}.js`, `module.exports = function ${camel([word(), word()])}() { return ${i} }\n`)
  for (let i = 0; i < 40; i++) write(`packages/${tsPackages[i % tsPackages.length]}/dist/${word()}${i}.js`, `export const x${i} = ${i}\n`)

  return {
    modules,
    tests,
    counts: {
      sources: modules.length,
      tests: tests.length,
      docs: docs.length,
      configs: configs.length,
      tracked,
      ignored: written.length - tracked,
      files: written.length,
      bytes
    }
  }
}
