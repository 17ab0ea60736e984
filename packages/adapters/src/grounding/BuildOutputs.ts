/**
 * A resolution target that names a build output (`dist/x.js`, `dist/x.d.ts`, not indexed) mapped
 * back to the indexed source it is built from: by a tsconfig's output directories, else, as a last
 * guess, `<package>/dist|build|out/…` to `<package>/src/…`.
 */
import { join, under } from "./RepoPaths.js"
import type { OutputMapping } from "./TsConfigs.js"

/** The repository's indexed files, and what Node and TypeScript try for a path. */
export interface Project {
  readonly paths: ReadonlySet<string>
  /** What Node and TypeScript try for a path: as a file (with extensions, source for an emitted name), then as a directory. */
  readonly candidates: (path: string) => ReadonlyArray<string>
}

const declaration = /\.d\.([mc]?ts)$/
const sourceExtensionsOf: Record<string, ReadonlyArray<string>> = { ts: ["ts", "tsx"], mts: ["mts"], cts: ["cts"] }
const builtDirectories = ["dist", "build", "out"]

/**
 * For a target path, the indexed file it loads: itself, or the source it is built from. `outputs` are
 * every config's mappings, longest output directory first; `packageDirectory` is the package the
 * target belongs to, when resolution went through one.
 */
export const sourceLocator = (project: Project, outputs: ReadonlyArray<OutputMapping>) => {
  const first = (candidates: ReadonlyArray<string>) => candidates.find((candidate) => project.paths.has(candidate))
  const rebuilt = (path: string) => {
    const dts = declaration.exec(path)
    const stem = dts === null ? path : path.slice(0, -dts[0].length)
    return first(dts === null ? project.candidates(path) : (sourceExtensionsOf[dts[1]!] ?? []).map((extension) => `${stem}.${extension}`))
  }
  return (target: string, packageDirectory: string | undefined): string | undefined => {
    const found = first(project.candidates(target))
    if (found !== undefined) return found
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
}
