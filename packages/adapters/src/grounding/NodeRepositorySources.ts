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
 * - a `file:` git URL is a local path under the same rules (roots, `..`, symlinks), and so is
 *   every place git would read through the repository it names (`.git` file, common directory,
 *   alternates, symlinks); git is given the checked git directory, never the URL as written.
 * - a git URL's host must be public: a name or address that is (or resolves to) loopback,
 *   private, link-local or otherwise not on the internet is refused, unless the operator allows
 *   them (`HUDDLE_REPO_GIT_PRIVATE_HOSTS=on`), so that connecting a repository cannot reach the
 *   server's own network. Checked on connect and before every clone or fetch; over HTTP(S) git is
 *   pinned to the addresses checked, so a name cannot resolve elsewhere in between, and follows
 *   no redirect. A name that does not resolve here, or a `localhost` one, is refused too.
 *
 * The parts: `AllowedRoots` (local paths and `file:` URLs), `GitUrls` (what git makes of a URL),
 * `PublicHosts` (a host's addresses), `GitClones` (running git).
 */
import { promises as fs } from "node:fs"
import * as path from "node:path"
import { type RepositoryConnection } from "@huddle/domain/grounding/RepositoryConnection"
import { IndexFailed } from "@huddle/domain/grounding/RepositoryIndexer"
import { RepositorySources } from "@huddle/domain/grounding/RepositorySources"
import { Forbidden, type InvalidRequest } from "@huddle/domain/shared/Errors"
import { Duration, Effect, Layer } from "effect"
import { invalid, localGitUrl, resolvePath, rootsOf } from "./AllowedRoots.js"
import { cloneOf, type GitSettings, prune } from "./GitClones.js"
import { gitUrlScheme, withLowerScheme } from "./GitUrls.js"
import { publicHost } from "./PublicHosts.js"

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
  /** Whether git URLs may name hosts that are not public (`HUDDLE_REPO_GIT_PRIVATE_HOSTS=on`); default: they are refused. */
  readonly privateHosts?: boolean | undefined
}

export const defaultGitTimeout = Duration.minutes(2)
const schemesVariable = "HUDDLE_REPO_GIT_SCHEMES"

export const make = (options: Options) =>
  Effect.gen(function*() {
    const allowed = new Set<string>(options.gitSchemes ?? ["https"])
    const settings: GitSettings = {
      allowed,
      timeout: options.gitTimeout ?? defaultGitTimeout,
      cloneDir: path.resolve(options.cloneDir),
      privateHosts: options.privateHosts === true
    }
    const roots = rootsOf(options.roots)
    const clone = cloneOf(settings)

    /** The URL as git is given it, and the settings that pin its host, when it may be cloned. */
    const allowedGitUrl = (given: string): Effect.Effect<{ readonly url: string; readonly pin: ReadonlyArray<string> }, InvalidRequest | Forbidden> => {
      const url = withLowerScheme(given)
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
      if (scheme.scheme === "file") return Effect.map(localGitUrl(roots, url), (local) => ({ url: local, pin: [] }))
      return Effect.map(publicHost(url, scheme.scheme, settings.privateHosts), ({ pin }) => ({ url, pin }))
    }

    // The URL is stored as given (a `file:` one is confined again before every clone).
    const checkGitUrl = (url: string): Effect.Effect<string, InvalidRequest | Forbidden> =>
      Effect.as(allowedGitUrl(url), withLowerScheme(url))

    const checkout = (connection: RepositoryConnection): Effect.Effect<string, IndexFailed> =>
      connection.source === "git"
        // Refused URLs were refused on connect; an operator may have narrowed the schemes since,
        // and a name may resolve elsewhere now.
        ? allowedGitUrl(connection.location).pipe(
          Effect.mapError((error) => new IndexFailed({ message: error.message })),
          Effect.flatMap(({ pin, url }) => clone(connection, url, pin)),
          // The clone's real path: the indexer confines every read to the directory it is given.
          Effect.flatMap((dir) => Effect.promise(() => fs.realpath(dir)))
        )
        : resolvePath(roots, connection.location).pipe(
          Effect.mapError((error) => new IndexFailed({ message: `The repository's directory can no longer be indexed: ${error.message}` }))
        )

    return RepositorySources.of({
      checkPath: (given) => resolvePath(roots, given),
      checkGitUrl,
      checkout,
      prune: (keep) => prune(settings.cloneDir, keep)
    })
  })

export const layer = (options: Options) => Layer.effect(RepositorySources, make(options))
