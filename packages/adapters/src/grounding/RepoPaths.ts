/** Repository-relative paths (`/` separators, no leading `/`; `""` is the root), as the indexer stores them. */

export const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

export const dirname = (path: string): string => {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "" : path.slice(0, slash)
}

/** `base` joined with a relative `specifier`, normalised; `undefined` when it climbs out of the root. */
export const join = (base: string, specifier: string): string | undefined => {
  const parts = base === "" ? [] : base.split("/")
  for (const part of specifier.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") {
      if (parts.length === 0) return undefined
      parts.pop()
    } else parts.push(part)
  }
  return parts.join("/")
}

/** `path` relative to `root` (both repository paths), or `undefined` when outside it. */
export const under = (root: string, path: string): string | undefined =>
  root === "" ? path : path === root ? "" : path.startsWith(`${root}/`) ? path.slice(root.length + 1) : undefined
