/** The keys `LexicalIndex` looks names up by: a definition's normalised name, a file's name and its stem. */

/** Lower case, no `_`/`-`: `parse_args` and `parseArgs` meet. */
export const normalise = (name: string): string => name.toLowerCase().replace(/[_-]/g, "")
export const baseName = (path: string): string => path.slice(path.lastIndexOf("/") + 1)
/** A file name up to its first extension (`index.d.ts` → `index`). */
export const stemOf = (name: string): string => {
  const dot = name.indexOf(".", 1)
  return dot === -1 ? name : name.slice(0, dot)
}
