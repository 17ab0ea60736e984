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
import { type Project, sourceLocator } from "./BuildOutputs.js"
import type { ConfigFacts, PackageFacts, TsconfigFacts } from "./EcmaConfigFacts.js"
import { dirname, join, under } from "./RepoPaths.js"
import { bestKey, exportTargets, importTargets } from "./SpecifierMaps.js"
import { type ResolvedConfig, tsconfigResolver } from "./TsConfigs.js"
import { packageOf, type WorkspaceRoot, workspaceMembers } from "./Workspaces.js"

type SourceOf = ReturnType<typeof sourceLocator>

export interface EcmaPackages {
  /** The indexed file a non-relative `specifier` in `from` loads, if it is in the repository. */
  readonly resolve: (from: string, specifier: string) => string | undefined
}

/** Resolution of non-relative specifiers over the repository's indexed `paths` and its configuration files (`configs`, by path). */
export const ecmaPackages = (project: Project, configs: ReadonlyMap<string, ConfigFacts>): EcmaPackages => {
  const manifests = new Map<string, PackageFacts>()
  const tsconfigs = new Map<string, TsconfigFacts>()
  const tsconfigDirectories = new Map<string, Array<string>>()
  const workspaceRoots: Array<WorkspaceRoot> = []
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

  const members = workspaceMembers(workspaceRoots, manifests)
  const resolveConfig = tsconfigResolver(tsconfigs, members)

  // Every mapping from a build output to its sources, longest output directory first.
  const outputs = [...tsconfigs.keys()]
    .flatMap((path) => resolveConfig(path)?.outputs ?? [])
    .sort((a, b) => b.outDir.length - a.outDir.length)
  const sourceOf = sourceLocator(project, outputs)

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
      return viaManifest(sourceOf, own, ownManifest, named.subpath)
    }
    const directories = members.get(named.name)
    if (directories === undefined) return undefined
    // Two members of one name (nested workspaces): the one nearest the importer.
    const directory = [...directories].sort((a, b) => commonPrefix(b, from) - commonPrefix(a, from))[0]!
    return viaManifest(sourceOf, directory, manifests.get(directory)!, named.subpath)
  }

  return { resolve }
}

/** What `subpath` of the package in `directory` loads: through its `exports`, else its entries or the subpath as a file. */
const viaManifest = (sourceOf: SourceOf, directory: string, manifest: PackageFacts, subpath: string): string | undefined => {
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
