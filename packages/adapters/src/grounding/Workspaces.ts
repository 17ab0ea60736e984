/**
 * Workspace packages by name (npm/yarn `workspaces`, `pnpm-workspace.yaml` `packages`, with `!`
 * exclusions), and a bare specifier split into its package name and subpath.
 */
import type { PackageFacts } from "./EcmaConfigFacts.js"
import { under } from "./RepoPaths.js"

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

export interface WorkspaceRoot {
  readonly root: string
  readonly globs: ReadonlyArray<string>
}

/** Workspace members by name: a package directory a workspace's globs match (and no `!` glob excludes). */
export const workspaceMembers = (
  workspaceRoots: ReadonlyArray<WorkspaceRoot>,
  manifests: ReadonlyMap<string, PackageFacts>
): ReadonlyMap<string, ReadonlyArray<string>> => {
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
  return members
}

/** A bare specifier's package name (`x`, `@scope/x`) and subpath (`.` or `./rest`); `undefined` when it names none. */
export const packageOf = (specifier: string): { readonly name: string; readonly subpath: string } | undefined => {
  const parts = specifier.split("/")
  const size = specifier.startsWith("@") ? 2 : 1
  if (parts.length < size || parts.slice(0, size).some((part) => part === "" || part === "." || part === "..")) return undefined
  const rest = parts.slice(size).join("/")
  return { name: parts.slice(0, size).join("/"), subpath: rest === "" ? "." : `./${rest}` }
}
