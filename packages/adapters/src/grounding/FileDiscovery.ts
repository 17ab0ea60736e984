/**
 * Which files a repository has. In a git work tree, git says (`git ls-files`: tracked files plus
 * untracked ones that no ignore rule excludes, exactly what the user sees as the repository);
 * elsewhere a directory walk that honours every `.gitignore` on the way down. The walk never
 * follows a symlinked directory, and does not enter vendored or build-output trees (they are
 * reported once each, as `dir/`). Paths are relative to the root's real path, with `/`.
 */
import { execFile } from "node:child_process"
import { realpath, stat } from "node:fs/promises"
import { join, sep } from "node:path"
import { SkippedFile } from "@huddle/domain/grounding/Snapshot"
import ignore, { type Ignore } from "ignore"
import { isInside, listInside, readInside } from "./ConfinedFiles.js"
import { skipForDirectory } from "./FileRules.js"

export interface Discovery {
  /** The root's real path: every file the index holds resolves under it. */
  readonly root: string
  readonly source: "git" | "walk"
  /** Candidate files, sorted; a candidate may still turn out to be a symlink, a directory or gone. */
  readonly paths: ReadonlyArray<string>
  /** What was left out before reading anything: symlinked directories leading out, pruned trees. */
  readonly skipped: ReadonlyArray<SkippedFile>
}

const toPosix = (path: string): string => (sep === "/" ? path : path.split(sep).join("/"))

export { isInside } from "./ConfinedFiles.js"

// git reads these from the environment before its own discovery: set, they would point it elsewhere.
const gitEnvironment = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_OPTIONAL_LOCKS: "0" }
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES"]) {
    delete env[name]
  }
  return env
}

const git = (cwd: string, args: ReadonlyArray<string>, signal?: AbortSignal): Promise<string | undefined> =>
  new Promise((resolve) => {
    // An argument array and no shell: nothing in a path is ever interpreted.
    execFile("git", args, { cwd, env: gitEnvironment(), maxBuffer: 512 * 1024 * 1024, encoding: "utf8", ...(signal ? { signal } : {}) }, (error, stdout) =>
      resolve(error ? undefined : stdout))
  })

/** The files git lists under `root`, or `undefined` when `root` is not in a git work tree (or git is missing). */
const gitFiles = async (root: string, signal?: AbortSignal): Promise<ReadonlyArray<string> | undefined> => {
  const inside = await git(root, ["rev-parse", "--is-inside-work-tree"], signal)
  if (inside?.trim() !== "true") return undefined
  const listed = await git(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], signal)
  if (listed === undefined) return undefined
  // Paths come relative to `root` (git's cwd), `/`-separated; an entry ending in `/` is a nested repository.
  const paths = [...new Set(listed.split("\0").filter((path) => path !== "" && !path.endsWith("/")))]
  // Nothing listed: an empty directory, or one that an enclosing repository ignores (a checkout kept
  // in another's ignored folder), whose files git would never list. The walk sees what is there.
  return paths.length === 0 ? undefined : paths
}

interface IgnoreScope {
  readonly base: string
  readonly rules: Ignore
}

/** Deepest `.gitignore` first, as git lets a nested file override its parents; the first that decides wins. */
const isIgnored = (scopes: ReadonlyArray<IgnoreScope>, path: string, directory: boolean): boolean => {
  for (let i = scopes.length - 1; i >= 0; i--) {
    const scope = scopes[i]!
    const local = (scope.base === "" ? path : path.slice(scope.base.length + 1)) + (directory ? "/" : "")
    const result = scope.rules.test(local)
    if (result.ignored) return true
    if (result.unignored) return false
  }
  return false
}

const walk = async (root: string, signal?: AbortSignal): Promise<{ paths: Array<string>; skipped: Array<SkippedFile> }> => {
  const paths: Array<string> = []
  const skipped: Array<SkippedFile> = []
  const visit = async (directory: string, scopes: ReadonlyArray<IgnoreScope>): Promise<void> => {
    signal?.throwIfAborted()
    const absolute = join(root, directory)
    // Listed through the descriptor of the directory opened and checked, so a directory swapped
    // for a link out after it was seen is not listed (`ConfinedFiles`).
    const entries = listInside(root, absolute)
    if (entries === undefined) {
      if (directory !== "") skipped.push(new SkippedFile({ path: `${directory}/`, reason: "unreadable" }))
      return
    }
    let here = scopes
    if (entries.some((entry) => entry.name === ".gitignore" && entry.isFile())) {
      const text = readInside(root, join(absolute, ".gitignore"))?.toString("utf8") ?? ""
      here = [...scopes, { base: directory, rules: ignore().add(text) }]
    }
    const subdirectories: Array<string> = []
    for (const entry of entries) {
      if (entry.name === ".git" || entry.name === ".hg" || entry.name === ".svn") continue
      const path = directory === "" ? entry.name : `${directory}/${entry.name}`
      if (entry.isDirectory()) {
        if (isIgnored(here, path, true)) continue
        const pruned = skipForDirectory(`${path}/x`)
        if (pruned !== undefined) {
          skipped.push(new SkippedFile({ path: `${path}/`, reason: pruned.reason }))
          continue
        }
        subdirectories.push(path)
      } else if (entry.isSymbolicLink()) {
        if (isIgnored(here, path, false)) continue
        // A link to a file is a candidate (checked against the root when read); a link to a
        // directory is never entered, and is reported only when it leads out of the root.
        const target = await realpath(join(root, path)).catch(() => undefined)
        if (target === undefined) {
          paths.push(path)
          continue
        }
        const isDirectory = await stat(target).then((stats) => stats.isDirectory(), () => false)
        if (!isDirectory) paths.push(path)
        else if (!isInside(root, target)) skipped.push(new SkippedFile({ path, reason: "outside_root" }))
      } else if (entry.isFile()) {
        if (!isIgnored(here, path, false)) paths.push(path)
      }
    }
    for (const subdirectory of subdirectories) await visit(subdirectory, here)
  }
  await visit("", [])
  return { paths, skipped }
}

/**
 * The candidate files of the repository at `root` (which must exist and be a directory: the
 * caller checks). `useGit: false` forces the walk even inside a git work tree.
 */
export const discover = async (root: string, options: { readonly useGit?: boolean; readonly signal?: AbortSignal } = {}): Promise<Discovery> => {
  const realRoot = await realpath(root)
  const listed = options.useGit === false ? undefined : await gitFiles(realRoot, options.signal)
  if (listed !== undefined) {
    return { root: realRoot, source: "git", paths: [...listed].sort(), skipped: [] }
  }
  const walked = await walk(realRoot, options.signal)
  return {
    root: realRoot,
    source: "walk",
    paths: walked.paths.map(toPosix).sort(),
    skipped: walked.skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  }
}
