/**
 * The port that indexes a repository on disk: what files it has (classified), which it skipped
 * and why, their chunks, definitions, imports and test links. Given the previous snapshot it
 * may reuse what did not change, and says what did, so that storage rewrites only those paths.
 */
import { Context, Data, type Effect } from "effect"
import type { Snapshot } from "./Snapshot.js"

/** How far an index run is: files looked at, of those indexed, and skipped. */
export interface Progress {
  readonly seen: number
  readonly indexed: number
  readonly skipped: number
}

/** Paths (relative, `/`-separated) of indexed files that appeared, changed or disappeared since `previous`. */
export interface Changes {
  readonly added: ReadonlyArray<string>
  readonly changed: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
}

export interface Indexed {
  readonly snapshot: Snapshot
  readonly changed: Changes
}

/** The repository could not be indexed (unreadable root, too large, …); `message` is shown to its users. */
export class IndexFailed extends Data.TaggedError("IndexFailed")<{ readonly message: string }> {}

export interface Service {
  /**
   * Indexes the repository at `root` (an absolute directory). `progress` is called as it goes
   * (as often as it likes: the caller throttles what it records).
   */
  readonly index: (
    root: string,
    previous: Snapshot | undefined,
    progress: (progress: Progress) => Effect.Effect<void>
  ) => Effect.Effect<Indexed, IndexFailed>
}

export class RepositoryIndexer extends Context.Tag("@huddle/domain/RepositoryIndexer")<RepositoryIndexer, Service>() {}
