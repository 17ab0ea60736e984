/**
 * Maps keyed by specifiers (`package.json` `exports` and `imports`, tsconfig `paths`): which key
 * applies to a specifier, and the targets its value gives under every condition.
 */
import { record } from "./EcmaConfigFacts.js"

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
export const bestKey = (keys: ReadonlyArray<string>, specifier: string): { readonly key: string; readonly star: string | undefined } | undefined => {
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
export const exportTargets = (exports: unknown, subpath: string): Array<string> => {
  const map = record(exports)
  if (map === undefined || !isSubpathMap(map)) return subpath === "." ? targetsOf(exports, undefined, false) : []
  const found = bestKey(Object.keys(map), subpath)
  return found === undefined ? [] : targetsOf(map[found.key], found.star, !found.key.includes("*") && found.star !== undefined)
}

export const importTargets = (imports: unknown, specifier: string): Array<string> => {
  const map = record(imports)
  if (map === undefined) return []
  const found = bestKey(Object.keys(map), specifier)
  return found === undefined ? [] : targetsOf(map[found.key], found.star, !found.key.includes("*") && found.star !== undefined)
}
