/**
 * Non-relative JavaScript/TypeScript imports resolved as the toolchain resolves them, within the
 * repository (decision 0036):
 * - `tsconfig`/`jsconfig` `paths` (patterns with one `*`, the longest prefix winning) and
 *   `baseUrl`, read from the configs in the importer's nearest directory that has any, with their
 *   relative `extends` (or one naming a workspace package's file) followed;
 * - a workspace package by its name (npm/yarn `workspaces` in a `package.json`, as an array or
 *   `{ packages }`; `pnpm-workspace.yaml` `packages`; `!` exclusions), and a package by its own
 *   name from inside it when it has `exports` (Node's self-reference): through its `exports` map
 *   (subpaths, `*` patterns, nested conditions, fallback arrays, `null` exclusions), else its
 *   `types`/`typings`/`module`/`main` or the subpath as a file;
 * - `#name` imports through the nearest `package.json` `imports` map.
 * A target that names a build output (`dist/x.js`, `dist/x.d.ts`, not indexed) is mapped back to
 * the source it is built from: by a tsconfig's `outDir`/`declarationDir` and `rootDir` (else its
 * single `include` directory, else its own directory), else, as a last guess, `<package>/dist|build|out/…`
 * to `<package>/src/…`. Anything that resolves outside the indexed files makes no edge.
 */
import { basename, dirname, join } from "./RepoPaths.js"

/** What a configuration file says that resolution needs. */
export type ConfigFacts =
  | {
    readonly kind: "package"
    readonly name?: string | undefined
    readonly main?: string | undefined
    readonly entries: ReadonlyArray<string>
    readonly exports?: unknown
    readonly imports?: unknown
    readonly workspaces?: ReadonlyArray<string> | undefined
  }
  | {
    readonly kind: "tsconfig"
    readonly extends: ReadonlyArray<string>
    readonly include?: ReadonlyArray<string> | undefined
    readonly options: CompilerOptions
  }
  | { readonly kind: "workspace"; readonly packages: ReadonlyArray<string> }

interface CompilerOptions {
  readonly baseUrl?: string | undefined
  readonly paths?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  readonly rootDir?: string | undefined
  readonly outDir?: string | undefined
  readonly declarationDir?: string | undefined
}

/** JSON with the comments and trailing commas that tsconfig files allow. */
const parseJsonc = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    // Comments out, strings kept as they are, then trailing commas out.
  }
  let out = ""
  for (let i = 0; i < text.length;) {
    const c = text[i]!
    if (c === "\"") {
      let j = i + 1
      while (j < text.length && text[j] !== "\"") j += text[j] === "\\" ? 2 : 1
      out += text.slice(i, j + 1)
      i = j + 1
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i)
      i = end < 0 ? text.length : end
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2)
      i = end < 0 ? text.length : end + 2
    } else {
      out += c
      i++
    }
  }
  try {
    return JSON.parse(out.replace(/,(\s*[}\]])/g, "$1"))
  } catch {
    return undefined
  }
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
const text = (value: unknown): string | undefined => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined)
const texts = (value: unknown): Array<string> => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [])

const unquote = (value: string) => value.replace(/^(["'])(.*)\1$/, "$2")

/** `packages:` of a `pnpm-workspace.yaml`, as a block list or a flow list. */
const pnpmPackages = (yaml: string): Array<string> => {
  const found: Array<string> = []
  let inside = false
  for (const line of yaml.split(/\r?\n/)) {
    const key = /^packages\s*:\s*(.*)$/.exec(line)
    if (key !== null) {
      const flow = /^\[(.*)\]/.exec(key[1]!.trim())
      if (flow !== null) found.push(...flow[1]!.split(",").map((item) => unquote(item.trim())).filter((item) => item !== ""))
      inside = flow === null
      continue
    }
    if (!inside || /^\s*(?:#.*)?$/.test(line)) continue
    if (/^\S/.test(line)) {
      inside = false
      continue
    }
    const item = /^\s*-\s*(.+?)\s*(?:#.*)?$/.exec(line)
    if (item !== null) found.push(unquote(item[1]!))
  }
  return found
}

const configName = /^(?:tsconfig(?:\.[\w.-]+)?|jsconfig)\.json$/

/** The facts of a file that steers ECMAScript resolution (`package.json`, a tsconfig, `pnpm-workspace.yaml`); else `undefined`. */
export const configFactsOf = (path: string, content: string): ConfigFacts | undefined => {
  const name = basename(path)
  if (name === "pnpm-workspace.yaml" || name === "pnpm-workspace.yml") return { kind: "workspace", packages: pnpmPackages(content) }
  if (name === "package.json") {
    const json = record(parseJsonc(content))
    if (json === undefined) return undefined
    const workspaces = Array.isArray(json.workspaces) ? texts(json.workspaces) : record(json.workspaces) ? texts(record(json.workspaces)!.packages) : undefined
    return {
      kind: "package",
      name: text(json.name),
      main: text(json.main),
      // What a bare import of the package loads without `exports`: TypeScript reads its types first.
      entries: [json.types, json.typings, json.module, json.main].map(text).filter((entry): entry is string => entry !== undefined),
      exports: json.exports,
      imports: json.imports,
      workspaces
    }
  }
  // A config may be named anything when another `extends` it (`@co/config/base.json`).
  if (configName.test(name) || (name.endsWith(".json") && content.includes("\"compilerOptions\""))) {
    const json = record(parseJsonc(content))
    if (json === undefined) return undefined
    const options = record(json.compilerOptions) ?? {}
    const paths = record(options.paths)
    return {
      kind: "tsconfig",
      extends: typeof json.extends === "string" ? [json.extends] : texts(json.extends),
      include: Array.isArray(json.include) ? texts(json.include) : undefined,
      options: {
        baseUrl: text(options.baseUrl),
        paths: paths === undefined ? undefined : Object.fromEntries(Object.entries(paths).map(([key, value]) => [key, texts(value)])),
        rootDir: text(options.rootDir),
        outDir: text(options.outDir),
        declarationDir: text(options.declarationDir)
      }
    }
  }
  return undefined
}

/** A workspace glob (`packages/*`, `apps/**`) as a test of a directory relative to the workspace root. */
const globTest = (glob: string): RegExp => {
  const cleaned = glob.replace(/^\.\//, "").replace(/\/+$/, "")
  let source = ""
  for (let i = 0; i < cleaned.length; i++) {
    const c = cleaned[i]!
    if (c === "*" && cleaned[i + 1] === "*") {
      source += ".*"
      i++
      if (cleaned[i + 1] === "/") i++
    } else if (c === "*") source += "[^/]*"
    else if (c === "?") source += "[^/]"
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&")
  }
  return new RegExp(`^${source}$`)
}

/** `dir` relative to `root` (both repository paths), or `undefined` when outside it. */
const under = (root: string, path: string): string | undefined =>
  root === "" ? path : path === root ? "" : path.startsWith(`${root}/`) ? path.slice(root.length + 1) : undefined

const matchPattern = (key: string, specifier: string): string | undefined => {
  const star = key.indexOf("*")
  if (star < 0) return key === specifier ? "" : undefined
  const prefix = key.slice(0, star)
  const suffix = key.slice(star + 1)
  return specifier.length >= prefix.length + suffix.length && specifier.startsWith(prefix) && specifier.endsWith(suffix)
    ? specifier.slice(prefix.length, specifier.length - suffix.length)
    : undefined
}

/**
 * The entries of a map keyed by specifiers (`exports`/`imports` subpaths, tsconfig `paths`) that
 * apply to `specifier`: an exact key, else the `*` pattern with the longest prefix (Node's and
 * TypeScript's order), with what the `*` stands for.
 */
const bestKey = (keys: ReadonlyArray<string>, specifier: string): { readonly key: string; readonly star: string | undefined } | undefined => {
  if (keys.includes(specifier) && !specifier.includes("*")) return { key: specifier, star: undefined }
  let best: { key: string; star: string; prefix: number } | undefined
  for (const key of keys) {
    let star: string | undefined
    let prefix: number
    if (key.includes("*")) {
      star = matchPattern(key, specifier)
      prefix = key.indexOf("*")
    } else {
      // A legacy folder mapping (`"./features/": "./src/features/"`).
      star = key.endsWith("/") && specifier.startsWith(key) ? specifier.slice(key.length) : undefined
      prefix = key.length
    }
    if (star === undefined) continue
    if (best === undefined || prefix > best.prefix || (prefix === best.prefix && key.length > best.key.length)) best = { key, star, prefix }
  }
  return best
}

/** The targets of an `exports`/`imports` value, every condition in order, with `*` substituted. */
const targetsOf = (value: unknown, star: string | undefined, folder: boolean): Array<string> => {
  if (typeof value === "string") return [star === undefined ? value : folder ? `${value}${star}` : value.split("*").join(star)]
  if (Array.isArray(value)) return value.flatMap((item) => targetsOf(item, star, folder))
  const conditions = record(value)
  // Every condition is tried in its order: the one a build would load and the one TypeScript reads come from the same source.
  return conditions === undefined ? [] : Object.values(conditions).flatMap((item) => targetsOf(item, star, folder))
}

const isSubpathMap = (value: Record<string, unknown>) => Object.keys(value).some((key) => key.startsWith("."))

/** The targets `exports` gives `subpath` (`.` or `./x`): relative to the package, as written. */
const exportTargets = (exports: unknown, subpath: string): Array<string> => {
  const map = record(exports)
  if (map === undefined || !isSubpathMap(map)) return subpath === "." ? targetsOf(exports, undefined, false) : []
  const found = bestKey(Object.keys(map), subpath)
  return found === undefined ? [] : targetsOf(map[found.key], found.star, !found.key.includes("*") && found.star !== undefined)
}

const importTargets = (imports: unknown, specifier: string): Array<string> => {
  const map = record(imports)
  if (map === undefined) return []
  const found = bestKey(Object.keys(map), specifier)
  return found === undefined ? [] : targetsOf(map[found.key], found.star, !found.key.includes("*") && found.star !== undefined)
}

const declaration = /\.d\.([mc]?ts)$/
const sourceExtensionsOf: Record<string, ReadonlyArray<string>> = { ts: ["ts", "tsx"], mts: ["mts"], cts: ["cts"] }
const builtDirectories = ["dist", "build", "out"]

interface Project {
  readonly paths: ReadonlySet<string>
  /** What Node and TypeScript try for a path: as a file (with extensions, source for an emitted name), then as a directory. */
  readonly candidates: (path: string) => ReadonlyArray<string>
}

interface OutputMapping {
  readonly outDir: string
  readonly rootDir: string
}

interface Locations {
  readonly outDir?: string
  readonly rootDir?: string
  readonly declarationDir?: string
  readonly include?: ReadonlyArray<string>
}

interface ResolvedConfig {
  readonly directory: string
  readonly baseUrl?: string | undefined
  readonly paths?: { readonly base: string; readonly map: Readonly<Record<string, ReadonlyArray<string>>> } | undefined
  /** Its directories as repository paths, after `extends` (each relative to the config that set it). */
  readonly locations: Locations
  readonly outputs: ReadonlyArray<OutputMapping>
}

export interface EcmaPackages {
  /** The indexed file a non-relative `specifier` in `from` loads, if it is in the repository. */
  readonly resolve: (from: string, specifier: string) => string | undefined
}

/** Resolution of non-relative specifiers over the repository's indexed `paths` and its configuration files (`configs`, by path). */
export const ecmaPackages = (project: Project, configs: ReadonlyMap<string, ConfigFacts>): EcmaPackages => {
  const manifests = new Map<string, Extract<ConfigFacts, { kind: "package" }>>()
  const tsconfigs = new Map<string, Extract<ConfigFacts, { kind: "tsconfig" }>>()
  const tsconfigDirectories = new Map<string, Array<string>>()
  const workspaceRoots: Array<{ readonly root: string; readonly globs: ReadonlyArray<string> }> = []
  for (const [path, facts] of configs) {
    const directory = dirname(path)
    if (facts.kind === "package") {
      manifests.set(directory, facts)
      if (facts.workspaces !== undefined) workspaceRoots.push({ root: directory, globs: facts.workspaces })
    } else if (facts.kind === "workspace") workspaceRoots.push({ root: directory, globs: facts.packages })
    else {
      tsconfigs.set(path, facts)
      const list = tsconfigDirectories.get(directory)
      if (list) list.push(path)
      else tsconfigDirectories.set(directory, [path])
    }
  }

  // Workspace members by name: a package directory a workspace's globs match (and no `!` glob excludes).
  const members = new Map<string, Array<string>>()
  for (const { globs, root } of workspaceRoots) {
    const include = globs.filter((glob) => !glob.startsWith("!")).map(globTest)
    const exclude = globs.filter((glob) => glob.startsWith("!")).map((glob) => globTest(glob.slice(1)))
    for (const [directory, manifest] of manifests) {
      const relative = under(root, directory)
      if (relative === undefined || relative === "" || manifest.name === undefined) continue
      if (!include.some((test) => test.test(relative)) || exclude.some((test) => test.test(relative))) continue
      const list = members.get(manifest.name)
      if (list === undefined) members.set(manifest.name, [directory])
      else if (!list.includes(directory)) list.push(directory)
    }
  }

  const packageOf = (specifier: string): { readonly name: string; readonly subpath: string } | undefined => {
    const parts = specifier.split("/")
    const size = specifier.startsWith("@") ? 2 : 1
    if (parts.length < size || parts.slice(0, size).some((part) => part === "" || part === "." || part === "..")) return undefined
    const rest = parts.slice(size).join("/")
    return { name: parts.slice(0, size).join("/"), subpath: rest === "" ? "." : `./${rest}` }
  }

  const resolvedConfigs = new Map<string, ResolvedConfig | undefined>()
  /** A tsconfig with what its `extends` chain gives it; options are relative to the config that sets them. */
  const resolveConfig = (path: string, seen: ReadonlySet<string> = new Set()): ResolvedConfig | undefined => {
    if (resolvedConfigs.has(path)) return resolvedConfigs.get(path)
    const facts = tsconfigs.get(path)
    if (facts === undefined || seen.has(path)) return undefined
    const directory = dirname(path)
    let baseUrl: string | undefined
    let paths: ResolvedConfig["paths"]
    let locations: Locations = {}
    for (const parent of facts.extends) {
      const extended = extendedPath(directory, parent)
      const base = extended === undefined ? undefined : resolveConfig(extended, new Set([...seen, path]))
      if (base === undefined) continue
      baseUrl = base.baseUrl ?? baseUrl
      paths = base.paths ?? paths
      locations = { ...locations, ...base.locations }
    }
    const own = facts.options
    const at = (value: string) => join(directory, value) ?? directory
    if (own.baseUrl !== undefined) baseUrl = at(own.baseUrl)
    // `paths` are relative to `baseUrl`, else to the config that sets them.
    if (own.paths !== undefined) paths = { base: baseUrl ?? directory, map: own.paths }
    else if (paths !== undefined && own.baseUrl !== undefined) paths = { base: baseUrl!, map: paths.map }
    locations = {
      ...locations,
      ...(own.outDir === undefined ? {} : { outDir: at(own.outDir) }),
      ...(own.rootDir === undefined ? {} : { rootDir: at(own.rootDir) }),
      ...(own.declarationDir === undefined ? {} : { declarationDir: at(own.declarationDir) }),
      ...(facts.include === undefined ? {} : { include: facts.include.map(at) })
    }
    // Without `rootDir`, the sources' common root: the one directory `include` names, else the config's own.
    const single = locations.include?.length === 1 ? locations.include[0]!.replace(/\/\*\*(?:\/\*(?:\.\w+)?)?$/, "") : undefined
    const rootDir = locations.rootDir ?? (single !== undefined && !single.includes("*") && !/\.\w+$/.test(single) ? single : directory)
    const outputs = [locations.outDir, locations.declarationDir]
      .filter((out): out is string => out !== undefined && out !== rootDir)
      .map((outDir) => ({ outDir, rootDir }))
    const resolved: ResolvedConfig = { directory, baseUrl, paths, locations, outputs }
    resolvedConfigs.set(path, resolved)
    return resolved
  }

  /** The config file an `extends` names: relative, or a file of a workspace package. */
  const extendedPath = (directory: string, value: string): string | undefined => {
    const withJson = (path: string | undefined) =>
      path === undefined ? undefined : tsconfigs.has(path) ? path : tsconfigs.has(`${path}.json`) ? `${path}.json` : tsconfigs.has(`${path}/tsconfig.json`) ? `${path}/tsconfig.json` : undefined
    if (value.startsWith("./") || value.startsWith("../")) return withJson(join(directory, value))
    const named = packageOf(value)
    const packageDirectory = named === undefined ? undefined : members.get(named.name)?.[0]
    return packageDirectory === undefined ? undefined : withJson(named!.subpath === "." ? packageDirectory : join(packageDirectory, named!.subpath))
  }

  // Every mapping from a build output to its sources, longest output directory first.
  const outputs = [...tsconfigs.keys()]
    .flatMap((path) => resolveConfig(path)?.outputs ?? [])
    .sort((a, b) => b.outDir.length - a.outDir.length)

  const first = (candidates: ReadonlyArray<string>) => candidates.find((candidate) => project.paths.has(candidate))

  /** The indexed file a target path loads: itself, or the source it is built from. */
  const sourceOf = (target: string, packageDirectory: string | undefined): string | undefined => {
    const found = first(project.candidates(target))
    if (found !== undefined) return found
    const rebuilt = (path: string) => {
      const dts = declaration.exec(path)
      const stem = dts === null ? path : path.slice(0, -dts[0].length)
      return first(dts === null ? project.candidates(path) : (sourceExtensionsOf[dts[1]!] ?? []).map((extension) => `${stem}.${extension}`))
    }
    for (const { outDir, rootDir } of outputs) {
      const rest = under(outDir, target)
      if (rest === undefined) continue
      const mapped = rebuilt(rootDir === "" ? rest : rest === "" ? rootDir : `${rootDir}/${rest}`)
      if (mapped !== undefined) return mapped
    }
    if (packageDirectory === undefined) return undefined
    // No config says how it is built (a bundler's `dist/`): the same path under `src/`.
    const inside = under(packageDirectory, target)
    const top = inside?.split("/")[0]
    if (inside === undefined || top === undefined || !builtDirectories.includes(top)) return undefined
    const source = join(packageDirectory, `src${inside.slice(top.length)}`)
    return source === undefined ? undefined : rebuilt(source)
  }

  const viaManifest = (directory: string, manifest: Extract<ConfigFacts, { kind: "package" }>, subpath: string): string | undefined => {
    if (manifest.exports !== undefined && manifest.exports !== null) {
      for (const target of exportTargets(manifest.exports, subpath)) {
        // Targets must stay inside the package, as Node requires.
        if (!target.startsWith("./")) continue
        const path = join(directory, target)
        const found = path === undefined || under(directory, path) === undefined ? undefined : sourceOf(path, directory)
        if (found !== undefined) return found
      }
      return undefined
    }
    if (subpath === ".") {
      for (const entry of manifest.entries) {
        const path = join(directory, entry)
        const found = path === undefined ? undefined : sourceOf(path, directory)
        if (found !== undefined) return found
      }
      return sourceOf(directory === "" ? "index" : `${directory}/index`, directory)
    }
    const path = join(directory, subpath)
    return path === undefined ? undefined : sourceOf(path, directory)
  }

  /** The nearest directory at or above `from`'s with a `package.json`. */
  const nearestPackage = (from: string): string | undefined => {
    for (let directory = dirname(from); ; directory = dirname(directory)) {
      if (manifests.has(directory)) return directory
      if (directory === "") return undefined
    }
  }

  const nearestConfigs = (from: string): ReadonlyArray<ResolvedConfig> => {
    for (let directory = dirname(from); ; directory = dirname(directory)) {
      const found = tsconfigDirectories.get(directory)
      if (found !== undefined) return found.map((path) => resolveConfig(path)).filter((config): config is ResolvedConfig => config !== undefined)
      if (directory === "") return []
    }
  }

  const viaConfigs = (from: string, specifier: string): string | undefined => {
    const configsOfFile = nearestConfigs(from)
    for (const config of configsOfFile) {
      if (config.paths === undefined) continue
      const found = bestKey(Object.keys(config.paths.map), specifier)
      if (found === undefined) continue
      for (const target of config.paths.map[found.key] ?? []) {
        const path = join(config.paths.base, found.star === undefined ? target : target.split("*").join(found.star))
        const source = path === undefined ? undefined : sourceOf(path, undefined)
        if (source !== undefined) return source
      }
    }
    for (const config of configsOfFile) {
      if (config.baseUrl === undefined) continue
      const path = join(config.baseUrl, specifier)
      const source = path === undefined ? undefined : sourceOf(path, undefined)
      if (source !== undefined) return source
    }
    return undefined
  }

  const commonPrefix = (a: string, b: string) => {
    let n = 0
    while (n < a.length && n < b.length && a[n] === b[n]) n++
    return n
  }

  // What a specifier loads depends only on the importer's directory: asked once per directory.
  const resolved = new Map<string, string | undefined>()
  const resolve = (from: string, specifier: string): string | undefined => {
    const key = `${dirname(from)}\0${specifier}`
    if (resolved.has(key)) return resolved.get(key)
    const found = resolveUncached(from, specifier)
    resolved.set(key, found)
    return found
  }

  const resolveUncached = (from: string, specifier: string): string | undefined => {
    // `node:fs`, URLs and loaders' schemes are never repository files.
    if (specifier.includes(":") || /\s/.test(specifier)) return undefined
    if (specifier.startsWith("#")) {
      const directory = nearestPackage(from)
      const manifest = directory === undefined ? undefined : manifests.get(directory)
      if (directory === undefined || manifest === undefined) return undefined
      for (const target of importTargets(manifest.imports, specifier)) {
        const path = target.startsWith("./") ? join(directory, target) : undefined
        const found = path === undefined ? undefined : sourceOf(path, directory)
        if (found !== undefined) return found
      }
      return undefined
    }
    // TypeScript applies `paths` before looking for packages.
    const configured = viaConfigs(from, specifier)
    if (configured !== undefined) return configured
    const named = packageOf(specifier)
    if (named === undefined) return undefined
    // A package importing itself by name (only with `exports`, as in Node), else a workspace member.
    const own = nearestPackage(from)
    const ownManifest = own === undefined ? undefined : manifests.get(own)
    if (own !== undefined && ownManifest?.name === named.name && ownManifest.exports !== undefined) {
      return viaManifest(own, ownManifest, named.subpath)
    }
    const directories = members.get(named.name)
    if (directories === undefined) return undefined
    // Two members of one name (nested workspaces): the one nearest the importer.
    const directory = [...directories].sort((a, b) => commonPrefix(b, from) - commonPrefix(a, from))[0]!
    return viaManifest(directory, manifests.get(directory)!, named.subpath)
  }

  return { resolve }
}
