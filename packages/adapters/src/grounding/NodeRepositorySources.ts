/**
 * Repository sources on this machine, under the operator's rules (docs/operations.md):
 *
 * - a local path must resolve, as a real path (symlinks followed, `..` applied), to a directory
 *   inside one of `HUDDLE_REPO_ROOTS` (real paths too); with no roots, every path is refused. A
 *   path outside the roots is refused before the file system is asked anything about it, so the
 *   answer never tells whether it exists. It is checked again before every index run;
 * - a git URL must use a scheme the operator allows (`HUDDLE_REPO_GIT_SCHEMES`), with nothing
 *   git could read as an option or a transport helper (`-…`, `ext::…`); it is cloned shallow
 *   into `<repo dir>/<workspace id>/<repository id>` by `git` run with an argument array (no
 *   shell), no terminal prompts, a timeout, only the allowed protocols (submodules and
 *   redirects included), and symlinks checked out as plain files, so nothing in a clone points
 *   outside it. Every index run fetches it anew.
 */
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { promises as fs } from "node:fs"
import * as path from "node:path"
import { maskUrl, type RepositoryConnection } from "@huddle/domain/grounding/RepositoryConnection"
import { IndexFailed } from "@huddle/domain/grounding/RepositoryIndexer"
import { RepositorySources } from "@huddle/domain/grounding/RepositorySources"
import { Forbidden, InvalidRequest } from "@huddle/domain/shared/Errors"
import { Duration, Effect, Layer } from "effect"

/** The git protocols an operator may allow (git's own names; `ext` runs commands and never is). */
export const gitSchemes = ["https", "http", "ssh", "git", "file"] as const
export type GitScheme = typeof gitSchemes[number]

export interface Options {
  /** Directories under which local paths may be connected (`HUDDLE_REPO_ROOTS`); none: no local path. */
  readonly roots: ReadonlyArray<string>
  /** Schemes git URLs may use (`HUDDLE_REPO_GIT_SCHEMES`; default `https`). */
  readonly gitSchemes?: ReadonlyArray<GitScheme> | undefined
  /** Where clones live (`HUDDLE_REPO_DIR`, default `<HUDDLE_DATA_DIR>/repos`). */
  readonly cloneDir: string
  /** The longest a clone or fetch may take (`HUDDLE_REPO_GIT_TIMEOUT`, default 2 minutes). */
  readonly gitTimeout?: Duration.Duration | undefined
}

export const defaultGitTimeout = Duration.minutes(2)

const rootsVariable = "HUDDLE_REPO_ROOTS"
const schemesVariable = "HUDDLE_REPO_GIT_SCHEMES"

const invalid = (message: string, field: "path" | "git_url") => new InvalidRequest({ message, field })

/** Whether `child` is `parent` or inside it (both absolute and normalised). */
export const isInside = (parent: string, child: string): boolean => {
  const relative = path.relative(parent, child)
  return relative === "" || (!path.isAbsolute(relative) && relative.split(path.sep)[0] !== "..")
}

/** The scheme git would use for `url` (`ssh` for scp-like `user@host:path`), or why it is refused. */
export const gitUrlScheme = (url: string): { readonly scheme: string } | { readonly refused: string } => {
  if (url.length === 0) return { refused: "git_url must not be empty" }
  if (/\s/.test(url)) return { refused: "git_url must not contain white space" }
  if (url.startsWith("-")) return { refused: "git_url must not start with \"-\"" }
  // git's `<transport>::<address>` runs a remote helper (`ext::` runs any command).
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url)) return { refused: "git_url must not name a transport helper (\"<transport>::<address>\")" }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)
  if (scheme !== null) {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return { refused: "git_url is not a valid URL" }
    }
    const name = scheme[1]!.toLowerCase()
    if (name !== "file") {
      if (parsed.hostname === "") return { refused: "git_url must name a host" }
      // `ssh://-oProxyCommand=…` would reach ssh as an option.
      if (parsed.hostname.startsWith("-") || decodeURIComponent(parsed.username).startsWith("-")) {
        return { refused: "git_url's host and user must not start with \"-\"" }
      }
    }
    return { scheme: name === "git+ssh" || name === "ssh+git" ? "ssh" : name }
  }
  // scp-like syntax: [user@]host:path, with no slash before the colon.
  const scp = /^([^/:]+):/.exec(url)
  if (scp !== null && !/^[A-Za-z]:$/.test(`${scp[1]}:`)) {
    const host = scp[1]!.slice(scp[1]!.lastIndexOf("@") + 1)
    if (scp[1]!.startsWith("-") || host.startsWith("-")) return { refused: "git_url's host and user must not start with \"-\"" }
    return { scheme: "ssh" }
  }
  return { refused: "git_url must be a URL such as https://host/owner/repo.git; connect a local directory with path" }
}

interface GitRun {
  readonly stdout: string
  readonly stderr: string
}

class GitFailed {
  constructor(readonly message: string) {}
}

export const make = (options: Options) =>
  Effect.gen(function*() {
    const allowed = new Set<string>(options.gitSchemes ?? ["https"])
    const timeout = options.gitTimeout ?? defaultGitTimeout
    const cloneDir = path.resolve(options.cloneDir)

    /** The roots as given (resolved) and as real paths; a root that does not exist allows nothing. */
    const roots = Effect.promise(async () => {
      const out: Array<{ readonly given: string; readonly real: string }> = []
      for (const root of options.roots) {
        const given = path.resolve(root)
        const real = await fs.realpath(given).catch(() => undefined)
        if (real !== undefined) out.push({ given, real })
      }
      return out
    })

    const noRoots = new Forbidden({
      message: `Local paths are not accepted: the operator has allowed no directories (set ${rootsVariable} to allow some)`
    })
    const outside = new Forbidden({ message: `path is outside the directories the operator allows (${rootsVariable})` })

    /** The directory's real path, when it is inside a root; the same refusal for any path outside. */
    const resolvePath = (
      given: string
    ): Effect.Effect<string, InvalidRequest | Forbidden> =>
      Effect.gen(function*() {
        if (options.roots.length === 0) return yield* noRoots
        if (!path.isAbsolute(given)) return yield* invalid("path must be absolute", "path")
        const allowedRoots = yield* roots
        if (allowedRoots.length === 0) return yield* noRoots
        const lexical = path.resolve(given)
        if (!allowedRoots.some((root) => isInside(root.given, lexical) || isInside(root.real, lexical))) return yield* outside
        const real = yield* Effect.promise(() => fs.realpath(lexical).catch(() => undefined))
        if (real === undefined) return yield* invalid("path does not exist or cannot be read", "path")
        // A symlink inside a root may lead out of it: only the real path counts.
        if (!allowedRoots.some((root) => isInside(root.real, real))) return yield* outside
        const stat = yield* Effect.promise(() => fs.stat(real).catch(() => undefined))
        if (stat === undefined || !stat.isDirectory()) return yield* invalid("path is not a directory", "path")
        return real
      })

    const checkGitUrl = (url: string): Effect.Effect<string, InvalidRequest | Forbidden> => {
      const scheme = gitUrlScheme(url)
      if ("refused" in scheme) return Effect.fail(invalid(scheme.refused, "git_url"))
      if (!allowed.has(scheme.scheme)) {
        return Effect.fail(
          new Forbidden({
            message: `git URLs with scheme "${scheme.scheme}" are not accepted; the operator allows ${
              [...allowed].join(", ") || "none"
            } (${schemesVariable})`
          })
        )
      }
      return Effect.succeed(url)
    }

    /** Only the allowed protocols, for every step git takes (redirects and submodules too). */
    const gitConfig = [
      "-c",
      "protocol.allow=never",
      ...[...allowed].flatMap((scheme) => ["-c", `protocol.${scheme}.allow=always`]),
      ...(allowed.has("file") ? [] : ["-c", "protocol.file.allow=never"]),
      "-c",
      "core.symlinks=false"
    ]

    const git = (args: ReadonlyArray<string>, url: string): Effect.Effect<GitRun, GitFailed> =>
      Effect.async<GitRun, GitFailed>((resume, signal) => {
        execFile(
          "git",
          [...gitConfig, ...args],
          {
            signal,
            timeout: Duration.toMillis(timeout),
            killSignal: "SIGKILL",
            maxBuffer: 4 * 1024 * 1024,
            env: {
              ...process.env,
              GIT_TERMINAL_PROMPT: "0",
              GIT_SSH_COMMAND: process.env["GIT_SSH_COMMAND"] ?? "ssh -o BatchMode=yes",
              LC_ALL: "C"
            }
          },
          (error, stdout, stderr) => {
            if (error === null) return resume(Effect.succeed({ stdout, stderr }))
            const code = (error as NodeJS.ErrnoException).code
            const message = code === "ENOENT"
              ? "git is not installed on the server"
              : (error as { killed?: boolean }).killed
              ? `git ${args[0]} did not finish within ${Duration.format(timeout)}`
              : stderr.trim().split("\n").filter((line) => line.trim() !== "").slice(-3).join(" ") || error.message
            resume(Effect.fail(new GitFailed(maskUrl(message, url).slice(0, 500))))
          }
        )
      })

    const exists = (file: string) => Effect.promise(() => fs.stat(file).then(() => true, () => false))
    const remove = (dir: string) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))

    const clone = (connection: RepositoryConnection): Effect.Effect<string, IndexFailed> =>
      Effect.gen(function*() {
        const url = connection.location
        // Refused URLs were refused on connect; an operator may have narrowed the schemes since.
        yield* checkGitUrl(url).pipe(Effect.mapError((error) => new IndexFailed({ message: error.message })))
        const dir = path.join(cloneDir, connection.workspace_id, connection.id)
        if (yield* exists(path.join(dir, ".git"))) {
          const fetched = yield* git(["-C", dir, "fetch", "--depth", "1", "--no-tags", "origin"], url).pipe(
            Effect.zipRight(git(["-C", dir, "reset", "--hard", "--quiet", "FETCH_HEAD"], url)),
            Effect.zipRight(git(["-C", dir, "clean", "-ffdxq"], url)),
            Effect.as(true),
            // A clone that cannot be brought up to date is cloned again.
            Effect.catchAll(() => Effect.succeed(false))
          )
          if (fetched) return dir
        }
        const fresh = `${dir}.tmp-${randomBytes(4).toString("hex")}`
        yield* Effect.promise(() => fs.mkdir(path.dirname(dir), { recursive: true }))
        yield* git(["clone", "--depth", "1", "--no-tags", "--single-branch", "--", url, fresh], url).pipe(
          Effect.tapError(() => remove(fresh)),
          Effect.mapError((error) => new IndexFailed({ message: `Cloning failed: ${error.message}` })),
          Effect.onInterrupt(() => remove(fresh))
        )
        yield* remove(dir)
        yield* Effect.promise(() => fs.rename(fresh, dir))
        return dir
      })

    const checkout = (connection: RepositoryConnection): Effect.Effect<string, IndexFailed> =>
      connection.source === "git"
        ? clone(connection)
        : resolvePath(connection.location).pipe(
          Effect.mapError((error) => new IndexFailed({ message: `The repository's directory can no longer be indexed: ${error.message}` }))
        )

    // Only what this code made is ever removed, whatever else the directory holds.
    const prune = (keep: ReadonlySet<string>) =>
      Effect.promise(async () => {
        const workspaces = await fs.readdir(cloneDir, { withFileTypes: true }).catch(() => [])
        for (const workspace of workspaces) {
          if (!workspace.isDirectory() || !/^wsp_[0-9a-z]+$/.test(workspace.name)) continue
          const dir = path.join(cloneDir, workspace.name)
          const clones = await fs.readdir(dir).catch(() => [])
          let left = clones.length
          for (const name of clones) {
            const repositoryId = name.split(".tmp-")[0]!
            if (keep.has(repositoryId) || !/^rep_[0-9a-z]+$/.test(repositoryId)) continue
            await fs.rm(path.join(dir, name), { recursive: true, force: true })
            left--
          }
          if (left === 0) await fs.rmdir(dir).catch(() => undefined)
        }
      })

    return RepositorySources.of({ checkPath: resolvePath, checkGitUrl, checkout, prune })
  })

export const layer = (options: Options) => Layer.effect(RepositorySources, make(options))
