/**
 * Clones kept up to date with `git`, run with an argument array (no shell), no terminal prompts, a
 * timeout, only the allowed protocols (submodules and redirects included) and symlinks checked out
 * as plain files: shallow, into `<clone dir>/<workspace id>/<repository id>`, fetched anew each
 * run; and the clones of repositories no longer connected removed.
 */
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { promises as fs } from "node:fs"
import * as path from "node:path"
import { maskUrl, type RepositoryConnection } from "@huddle/domain/grounding/RepositoryConnection"
import { IndexFailed } from "@huddle/domain/grounding/RepositoryIndexer"
import { Duration, Effect } from "effect"

interface GitRun {
  readonly stdout: string
  readonly stderr: string
}

class GitFailed {
  constructor(readonly message: string) {}
}

/** How git is run: the schemes it may use, how long it may take, where clones live, whether private hosts are allowed. */
export interface GitSettings {
  readonly allowed: ReadonlySet<string>
  readonly timeout: Duration.Duration
  /** Resolved. */
  readonly cloneDir: string
  readonly privateHosts: boolean
}

/** Only the allowed protocols, for every step git takes (redirects and submodules too). */
const gitConfig = (settings: GitSettings) => [
  "-c",
  "protocol.allow=never",
  ...[...settings.allowed].flatMap((scheme) => ["-c", `protocol.${scheme}.allow=always`]),
  ...(settings.allowed.has("file") ? [] : ["-c", "protocol.file.allow=never"]),
  "-c",
  "core.symlinks=false",
  // A redirect would lead to a host nobody checked (a public server bouncing git inwards).
  ...(settings.privateHosts ? [] : ["-c", "http.followRedirects=false"])
]

/** What git said, without the server's own paths (`Cloning into '<dir>'…`). */
const told = (cloneDir: string, stderr: string) =>
  stderr.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("Cloning into")).slice(-3).join(" ")
    .split(cloneDir).join("<clone>")

/** `git` with `args`, after the settings' configuration and `pin`; its failure told without secrets in `url` or the server's paths. */
const runGit = (settings: GitSettings) => {
  const config = gitConfig(settings)
  const { cloneDir, timeout } = settings
  return (args: ReadonlyArray<string>, url: string, pin: ReadonlyArray<string> = []): Effect.Effect<GitRun, GitFailed> =>
    Effect.async<GitRun, GitFailed>((resume, signal) => {
      execFile(
        "git",
        [...config, ...pin, ...args],
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
            : told(cloneDir, stderr) || error.message.split(cloneDir).join("<clone>")
          resume(Effect.fail(new GitFailed(maskUrl(message, url).slice(0, 500))))
        }
      )
    })
}

const exists = (file: string) => Effect.promise(() => fs.stat(file).then(() => true, () => false))
const remove = (dir: string) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))

/**
 * The clone of `connection` brought up to date from `url` (git given `pin` too), else cloned
 * afresh beside it and swapped in.
 */
export const cloneOf = (settings: GitSettings) => {
  const git = runGit(settings)
  return (connection: RepositoryConnection, url: string, pin: ReadonlyArray<string>): Effect.Effect<string, IndexFailed> =>
    Effect.gen(function*() {
      const dir = path.join(settings.cloneDir, connection.workspace_id, connection.id)
      if (yield* exists(path.join(dir, ".git"))) {
        const fetched = yield* git(["-C", dir, "fetch", "--depth", "1", "--no-tags", "origin"], url, pin).pipe(
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
      yield* git(["clone", "--depth", "1", "--no-tags", "--single-branch", "--", url, fresh], url, pin).pipe(
        Effect.tapError(() => remove(fresh)),
        Effect.mapError((error) => new IndexFailed({ message: `Cloning failed: ${error.message}` })),
        Effect.onInterrupt(() => remove(fresh))
      )
      yield* remove(dir)
      yield* Effect.promise(() => fs.rename(fresh, dir))
      return dir
    })
}

/** Removes the clones of repositories not in `keep`; only what this code made is ever removed, whatever else the directory holds. */
export const prune = (cloneDir: string, keep: ReadonlySet<string>) =>
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
