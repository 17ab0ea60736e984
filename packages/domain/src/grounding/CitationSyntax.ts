/**
 * The citations written in a unit of an answer: `path:12`, `path:12-30`, `path#L12-L30`, the
 * same in backticks, and markdown links, each with its span in the unit.
 */
import { type Files, resolvePath } from "./CitedFiles.js"

type Form = "colon" | "fragment" | "link"

export interface Found {
  readonly form: Form
  readonly path: string
  readonly start: number | null
  readonly end: number | null
  /** The span in the unit, wrappers included. */
  readonly from: number
  readonly to: number
  /** The core `path:lines` span (for colon and fragment forms), without wrappers. */
  readonly coreFrom: number
  readonly coreTo: number
  readonly backticks: boolean
  /** A link's text. */
  readonly label: string
}

const LINK = /\[([^[\]\n]*)\]\(([^()\s]+)\)/g
const CORE =
  /(?<![\w./:@+~#$-])((?:\.{1,2}\/|\/|\.(?=[\w@+~]))?[\w@+~](?:[\w.@+~/-]*\w)?)(?::L?(\d{1,7})(?:[-–]L?(\d{1,7}))?(?::\d{1,5})?|#L(\d{1,7})(?:-L?(\d{1,7}))?)(?![\w]|[-–]\d)/g
export const CODE_SPAN = /`([^`\n]+)`/g
/** Extensions of files people cite: a `name.ext:12` without a `/` is a citation only with one of these (or when the file exists). */
const EXTENSIONS = new Set(
  (
    "ts tsx mts cts js jsx mjs cjs py pyi rb go rs java kt kts scala swift c h cc cpp cxx hpp hh cs fs m mm php pl pm r lua dart " +
    "ex exs erl hrl clj cljs elm hs ml mli nim zig v sol sh bash zsh fish ps1 bat sql graphql gql proto thrift vue svelte astro " +
    "html htm css scss sass less md mdx rst txt adoc json jsonc json5 yaml yml toml ini cfg conf env xml gradle cmake mk tf hcl lock"
  ).split(" ")
)

/** Whether a written path can be a citation's: it has a `/`, a known extension, or names an indexed file. */
export const isPathLike = (path: string, files: Files | undefined): boolean => {
  if (!/[A-Za-z]/.test(path) || path.includes("//")) return false
  if (path.includes("/")) return true
  const dot = path.lastIndexOf(".")
  if (dot > 0 && EXTENSIONS.has(path.slice(dot + 1).toLowerCase())) return true
  return files !== undefined && resolvePath(files, path) !== undefined
}

/** The citations written in `unit`, in order; with `files`, a bare `name:12` counts when it names an indexed file. */
export const findIn = (unit: string, files: Files | undefined): Array<Found> => {
  const found: Array<Found> = []
  for (const m of unit.matchAll(LINK)) {
    const target = m[2]!
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue
    const hash = target.indexOf("#")
    const path = hash === -1 ? target : target.slice(0, hash)
    const fragment = hash === -1 ? undefined : target.slice(hash + 1)
    const lines = fragment === undefined ? undefined : /^L(\d{1,7})(?:-L?(\d{1,7}))?$/.exec(fragment)
    if (fragment !== undefined && lines === null) continue
    if (path.length === 0 || !isPathLike(path, files)) continue
    const start = lines?.[1] === undefined ? null : Number(lines[1])
    const end = lines?.[2] === undefined ? start : Number(lines[2])
    const from = m.index
    found.push({ form: "link", path, start, end, from, to: from + m[0].length, coreFrom: from, coreTo: from + m[0].length, backticks: false, label: m[1]! })
  }
  for (const m of unit.matchAll(CORE)) {
    const from = m.index
    const to = from + m[0].length
    if (found.some((f) => f.form === "link" && from < f.to && to > f.from)) continue
    const path = m[1]!
    if (!isPathLike(path, files)) continue
    const start = Number(m[2] ?? m[4])
    const end = m[3] ?? m[5]
    const backticks = unit[from - 1] === "`" && unit[to] === "`"
    found.push({
      form: m[2] !== undefined ? "colon" : "fragment",
      path,
      start,
      end: end === undefined ? start : Number(end),
      from: backticks ? from - 1 : from,
      to: backticks ? to + 1 : to,
      coreFrom: from,
      coreTo: to,
      backticks,
      label: ""
    })
  }
  return found.sort((a, b) => a.from - b.from)
}
