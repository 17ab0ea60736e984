/**
 * The port between a connection's source and a directory to index, under the operator's rules:
 * local paths only inside the allowed roots (compared as real paths, so that neither `..` nor a
 * symlink leads out), git URLs only with the allowed schemes, cloned by the service.
 */
import { Context, type Effect } from "effect"
import type { Forbidden, InvalidRequest } from "../shared/Errors.js"
import type { IndexFailed } from "./RepositoryIndexer.js"
import type { RepositoryConnection } from "./RepositoryConnection.js"

export interface Service {
  /** The directory's real path, when it may be connected. */
  readonly checkPath: (path: string) => Effect.Effect<string, InvalidRequest | Forbidden>
  /** The URL as it will be cloned, when it may be connected. */
  readonly checkGitUrl: (url: string) => Effect.Effect<string, InvalidRequest | Forbidden>
  /**
   * A directory holding the repository as it is now, for an index run: the local path checked
   * again (a symlink may have changed since), or the clone fetched anew.
   */
  readonly checkout: (connection: RepositoryConnection) => Effect.Effect<string, IndexFailed>
  /** Removes the local clones of this instance that belong to no connection in `keep`. */
  readonly prune: (keep: ReadonlySet<string>) => Effect.Effect<void>
}

export class RepositorySources extends Context.Tag("@huddle/domain/RepositorySources")<RepositorySources, Service>() {}
