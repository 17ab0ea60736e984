/**
 * The port that keeps workspaces' repository connections and their stored snapshots, shared by
 * every instance. One instance at a time indexes a repository: it holds the repository's lease
 * (a holder token and an expiry, renewed while it works; a dead instance's lease lapses), and
 * every write of an index run is refused once the lease is someone else's.
 */
import { Context, type DateTime, type Duration, type Effect, type Option } from "effect"
import type { IndexChanges, IndexProgress, RepositoryConnection, SnapshotCounts } from "./RepositoryConnection.js"
import type { LineRange } from "./RepositoryFile.js"
import type { Chunk, IndexedFile, Snapshot } from "./Snapshot.js"
import type { SnapshotDelta } from "./SnapshotDelta.js"

export interface Lease {
  readonly repositoryId: string
  /** Unique to one job: two jobs of one instance exclude each other too. */
  readonly holder: string
  readonly duration: Duration.Duration
}

export interface Service {
  /** Stores a new connection for its workspace, replacing the previous one (and its snapshot). */
  readonly connect: (connection: RepositoryConnection) => Effect.Effect<void>
  /** Whether the workspace had a connection; it goes with its snapshot. */
  readonly disconnect: (workspaceId: string) => Effect.Effect<boolean>
  readonly find: (workspaceId: string) => Effect.Effect<Option.Option<RepositoryConnection>>
  readonly findById: (repositoryId: string) => Effect.Effect<Option.Option<RepositoryConnection>>
  /** The connections of these workspaces (those that have one). */
  readonly findMany: (workspaceIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<RepositoryConnection>>
  /** Asks for another index run: `pending` unless one is running (which then runs again when it ends). */
  readonly requestIndex: (workspaceId: string) => Effect.Effect<Option.Option<RepositoryConnection>>
  /** Connections that want an index run and that nobody holds (never held, released, or lapsed). */
  readonly waiting: Effect.Effect<ReadonlyArray<string>>
  /** Every connection's id (to tell which local clones are still wanted). */
  readonly ids: Effect.Effect<ReadonlyArray<string>>

  /**
   * Takes (or extends) the lease when the repository wants an index run and nobody else holds a
   * live lease; the connection as it then is, or none.
   */
  readonly claim: (lease: Lease) => Effect.Effect<Option.Option<RepositoryConnection>>
  /** Extends a lease still held; false when it was lost (lapsed and taken, or the connection is gone). */
  readonly renew: (lease: Lease) => Effect.Effect<boolean>
  /** Gives the lease up if no run is wanted any more; false (lease kept) when one was asked for meanwhile. */
  readonly releaseIfIdle: (lease: Lease) => Effect.Effect<boolean>
  /** Gives the lease up whatever is wanted (the job is interrupted). */
  readonly release: (lease: Lease) => Effect.Effect<void>

  /** Marks a run started (status `indexing`, progress reset); false when the lease was lost. */
  readonly started: (lease: Lease, at: DateTime.Utc) => Effect.Effect<boolean>
  readonly progress: (lease: Lease, progress: IndexProgress) => Effect.Effect<void>
  /**
   * Applies the delta to the stored snapshot and marks the run served and `ready` (the index
   * version goes up by one), all in one transaction; false (nothing written) when the lease was lost.
   */
  readonly store: (
    lease: Lease,
    run: {
      readonly delta: SnapshotDelta
      readonly served: number
      readonly progress: IndexProgress
      readonly changes: IndexChanges
      readonly at: DateTime.Utc
    }
  ) => Effect.Effect<boolean>
  /** Marks the run served and `failed` with `error`; the stored snapshot stays. */
  readonly failed: (lease: Lease, run: { readonly served: number; readonly error: string; readonly at: DateTime.Utc }) => Effect.Effect<boolean>

  /** The stored snapshot, none before the first. */
  readonly snapshot: (repositoryId: string) => Effect.Effect<Option.Option<Snapshot>>
  /** The stored snapshot's files by category and skipped files by reason, with the first skipped paths of each. */
  readonly counts: (repositoryId: string) => Effect.Effect<SnapshotCounts>
  /** An indexed file of the stored snapshot and its chunks that meet `range`, in order; none for a path not indexed. */
  readonly file: (
    repositoryId: string,
    path: string,
    range: LineRange
  ) => Effect.Effect<Option.Option<{ readonly file: IndexedFile; readonly chunks: ReadonlyArray<Chunk> }>>
}

export class RepositoryStore extends Context.Tag("@huddle/domain/RepositoryStore")<RepositoryStore, Service>() {}
