/**
 * Local paths under the operator's roots (`HUDDLE_REPO_ROOTS`): a path must resolve, as a real
 * path, to a directory inside one of them, refused alike whether or not it exists when it is
 * outside; and a `file:` git URL, confined the same way, with everything git would read through
 * the repository it names.
 */
import { promises as fs } from "node:fs"
import * as path from "node:path"
import { Forbidden, InvalidRequest } from "@huddle/domain/shared/Errors"
import { Effect } from "effect"
import { fileUrlPath } from "./GitUrls.js"

const rootsVariable = "HUDDLE_REPO_ROOTS"

export const invalid = (message: string, field: "path" | "git_url") => new InvalidRequest({ message, field })

/** Whether `child` is `parent` or inside it (both absolute and normalised). */
export const isInside = (parent: string, child: string): boolean => {
  const relative = path.relative(parent, child)
  return relative === "" || (!path.isAbsolute(relative) && relative.split(path.sep)[0] !== "..")
}

/** The roots as configured, and as given (resolved) and as real paths; a root that does not exist allows nothing. */
export interface Roots {
  readonly configured: ReadonlyArray<string>
  readonly existing: Effect.Effect<ReadonlyArray<{ readonly given: string; readonly real: string }>>
}

export const rootsOf = (configured: ReadonlyArray<string>): Roots => ({
  configured,
  existing: Effect.promise(async () => {
    const out: Array<{ readonly given: string; readonly real: string }> = []
    for (const root of configured) {
      const given = path.resolve(root)
      const real = await fs.realpath(given).catch(() => undefined)
      if (real !== undefined) out.push({ given, real })
    }
    return out
  })
})

const noRoots = () =>
  new Forbidden({
    message: `Local paths are not accepted: the operator has allowed no directories (set ${rootsVariable} to allow some)`
  })
const outsideOf = (field: "path" | "git_url") =>
  new Forbidden({ message: `${field} is outside the directories the operator allows (${rootsVariable})` })
/** How a message names the path: a `path` itself, or the one a `file:` git URL names. */
const named = (field: "path" | "git_url") => field === "path" ? "path" : "git_url's path"

/** The directory's real path, when it is inside a root; the same refusal for any path outside. */
export const resolvePath = (
  roots: Roots,
  given: string,
  field: "path" | "git_url" = "path"
): Effect.Effect<string, InvalidRequest | Forbidden> =>
  Effect.gen(function*() {
    if (roots.configured.length === 0) return yield* noRoots()
    if (!path.isAbsolute(given)) return yield* invalid(`${named(field)} must be absolute`, field)
    const allowedRoots = yield* roots.existing
    if (allowedRoots.length === 0) return yield* noRoots()
    const lexical = path.resolve(given)
    if (!allowedRoots.some((root) => isInside(root.given, lexical) || isInside(root.real, lexical))) return yield* outsideOf(field)
    const real = yield* Effect.promise(() => fs.realpath(lexical).catch(() => undefined))
    if (real === undefined) return yield* invalid(`${named(field)} does not exist or cannot be read`, field)
    // A symlink inside a root may lead out of it: only the real path counts.
    if (!allowedRoots.some((root) => isInside(root.real, real))) return yield* outsideOf(field)
    const stat = yield* Effect.promise(() => fs.stat(real).catch(() => undefined))
    if (stat === undefined || !stat.isDirectory()) return yield* invalid(`${named(field)} is not a directory`, field)
    return real
  })

const insideRoots = (roots: Roots, real: string) => Effect.map(roots.existing, (all) => all.some((root) => isInside(root.real, real)))

/**
 * The git directory a `file:` URL's checked directory holds, as git's `upload-pack` finds it
 * (`<dir>/.git`, a `.git` file's `gitdir:`, else the directory itself when bare), when it and
 * everything git would read through it — the common directory of a worktree, the object
 * stores its `alternates` name, any symlink in it — are inside the roots. It is the path git
 * is then given, so git has nothing left to guess (given a directory that is no repository,
 * git would try `<dir>.git`, which may be outside).
 */
const gitDirectoryOf = (roots: Roots, directory: string): Effect.Effect<string, InvalidRequest | Forbidden> =>
  Effect.gen(function*() {
    const notRepository = invalid("git_url's path is not a git repository", "git_url")
    const dotGit = path.join(directory, ".git")
    const entry = yield* Effect.promise(() => fs.lstat(dotGit).catch(() => undefined))
    let candidate = directory
    if (entry?.isFile() === true) {
      const text = yield* Effect.promise(() => fs.readFile(dotGit, "utf8").catch(() => ""))
      const target = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim()
      if (target === undefined) return yield* notRepository
      candidate = path.resolve(directory, target)
    } else if (entry !== undefined) candidate = dotGit
    const gitDir = yield* Effect.promise(() => fs.realpath(candidate).catch(() => undefined))
    if (gitDir === undefined) return yield* notRepository
    if (!(yield* insideRoots(roots, gitDir))) return yield* outsideOf("git_url")
    const present = (name: string) => Effect.promise(() => fs.lstat(path.join(gitDir, name)).then(() => true, () => false))
    // What upload-pack takes for a repository (HEAD, objects, refs), and nothing it would look at first.
    if (!(yield* present("HEAD")) || (yield* present(".git"))) return yield* notRepository
    const leaks = yield* Effect.promise(() => leadsOutside(roots, gitDir))
    if (leaks) return yield* outsideOf("git_url")
    return gitDir
  })

/**
 * Whether anything git reads through `gitDir` lies outside the roots: a symlink (to a pack, a
 * ref, the objects), the `commondir` of a worktree, an `alternates` object store — followed
 * into those directories too, a bounded number of them.
 */
const leadsOutside = async (roots: Roots, gitDir: string): Promise<boolean> => {
  const allowedRoots = await Effect.runPromise(roots.existing)
  const inside = (real: string) => allowedRoots.some((root) => isInside(root.real, real))
  const pending = [gitDir]
  const seen = new Set<string>()
  while (pending.length > 0) {
    const dir = pending.pop()!
    if (seen.has(dir)) continue
    if (seen.size >= 16) return true
    seen.add(dir)
    const indirections = [
      ...(await fs.readFile(path.join(dir, "commondir"), "utf8").then((text) => [path.resolve(dir, text.trim())], () => [])),
      ...(await fs.readFile(path.join(dir, "objects", "info", "alternates"), "utf8").then(
        (text) => text.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"))
          .map((line) => path.resolve(dir, "objects", line)),
        () => []
      ))
    ]
    for (const target of indirections) {
      const real = await fs.realpath(target).catch(() => undefined)
      if (real === undefined) continue
      if (!inside(real)) return true
      pending.push(real)
    }
    const walk = async (current: string): Promise<boolean> => {
      const entries = await fs.readdir(current, { withFileTypes: true }).catch(() => [])
      for (const entry of entries) {
        const full = path.join(current, entry.name)
        if (entry.isSymbolicLink()) {
          const real = await fs.realpath(full).catch(() => undefined)
          if (real !== undefined && !inside(real)) return true
        } else if (entry.isDirectory() && await walk(full)) return true
      }
      return false
    }
    if (await walk(dir)) return true
  }
  return false
}

/**
 * A `file:` URL is a local path: confined to the roots exactly like one (`..`, symlinks and
 * percent-encoded separators included), then handed to git as the real path of the git
 * directory checked, never as the URL given (git reads hosts, brackets and escapes in
 * `file://` URLs in ways of its own).
 */
export const localGitUrl = (roots: Roots, url: string): Effect.Effect<string, InvalidRequest | Forbidden> =>
  Effect.gen(function*() {
    const local = fileUrlPath(url)
    if ("refused" in local) return yield* invalid(local.refused, "git_url")
    const directory = yield* resolvePath(roots, local.path, "git_url")
    const gitDir = yield* gitDirectoryOf(roots, directory)
    // git decodes %XX in a URL's path: a literal "%" is written as one.
    return `file://${gitDir.replace(/%/g, "%25")}`
  })
