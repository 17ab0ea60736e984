/**
 * A tsconfig/jsconfig with what its `extends` chain gives it (`baseUrl`, `paths`, and the
 * directories that say where its build output comes from), each option relative to the config
 * that sets it.
 */
import type { TsconfigFacts } from "./EcmaConfigFacts.js"
import { dirname, join } from "./RepoPaths.js"
import { packageOf } from "./Workspaces.js"

/** A build output directory and the sources it is built from. */
export interface OutputMapping {
  readonly outDir: string
  readonly rootDir: string
}

interface Locations {
  readonly outDir?: string
  readonly rootDir?: string
  readonly declarationDir?: string
  readonly include?: ReadonlyArray<string>
}

export interface ResolvedConfig {
  readonly directory: string
  readonly baseUrl?: string | undefined
  readonly paths?: { readonly base: string; readonly map: Readonly<Record<string, ReadonlyArray<string>>> } | undefined
  /** Its directories as repository paths, after `extends` (each relative to the config that set it). */
  readonly locations: Locations
  readonly outputs: ReadonlyArray<OutputMapping>
}

/** Resolution of the configs in `tsconfigs` (by path), remembered; `members` are the workspace packages an `extends` may name. */
export const tsconfigResolver = (
  tsconfigs: ReadonlyMap<string, TsconfigFacts>,
  members: ReadonlyMap<string, ReadonlyArray<string>>
): (path: string) => ResolvedConfig | undefined => {
  const resolvedConfigs = new Map<string, ResolvedConfig | undefined>()
  const resolveConfig = (path: string, seen: ReadonlySet<string> = new Set()): ResolvedConfig | undefined => {
    if (resolvedConfigs.has(path)) return resolvedConfigs.get(path)
    const facts = tsconfigs.get(path)
    if (facts === undefined || seen.has(path)) return undefined
    const directory = dirname(path)
    let baseUrl: string | undefined
    let paths: ResolvedConfig["paths"]
    let locations: Locations = {}
    for (const parent of facts.extends) {
      const extended = extendedPath(tsconfigs, members, directory, parent)
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
  return (path) => resolveConfig(path)
}

/** The config file an `extends` names: relative, or a file of a workspace package. */
const extendedPath = (
  tsconfigs: ReadonlyMap<string, TsconfigFacts>,
  members: ReadonlyMap<string, ReadonlyArray<string>>,
  directory: string,
  value: string
): string | undefined => {
  const withJson = (path: string | undefined) =>
    path === undefined ? undefined : tsconfigs.has(path) ? path : tsconfigs.has(`${path}.json`) ? `${path}.json` : tsconfigs.has(`${path}/tsconfig.json`) ? `${path}/tsconfig.json` : undefined
  if (value.startsWith("./") || value.startsWith("../")) return withJson(join(directory, value))
  const named = packageOf(value)
  const packageDirectory = named === undefined ? undefined : members.get(named.name)?.[0]
  return packageDirectory === undefined ? undefined : withJson(named!.subpath === "." ? packageDirectory : join(packageDirectory, named!.subpath))
}
