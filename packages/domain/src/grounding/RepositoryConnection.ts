/**
 * A workspace's connected repository: where it comes from (a local path under the operator's
 * roots, or a git URL cloned by the service), how far its indexing is, and which snapshot is
 * stored. A workspace has at most one; connecting again replaces it.
 */
import { Schema } from "effect"
import { FileCategory, SkipReason } from "./Snapshot.js"

export const SourceKind = Schema.Literal("path", "git")
export type SourceKind = typeof SourceKind.Type

/**
 * `pending`: an index run is wanted and not started; `indexing`: one runs; `ready`: the last run
 * stored its snapshot; `failed`: the last run failed (`error` says why; an earlier snapshot, if
 * any, is still there).
 */
export const IndexStatus = Schema.Literal("pending", "indexing", "ready", "failed")
export type IndexStatus = typeof IndexStatus.Type

const Count = Schema.NonNegativeInt

export class IndexProgress extends Schema.Class<IndexProgress>("IndexProgress")({
  /** Files looked at so far. */
  seen: Count,
  /** Of those, indexed. */
  indexed: Count,
  /** Of those, skipped. */
  skipped: Count
}) {}

export const noProgress = new IndexProgress({ seen: 0, indexed: 0, skipped: 0 })

/** What the last successful run changed in the stored snapshot (indexed files, by path). */
export class IndexChanges extends Schema.Class<IndexChanges>("IndexChanges")({
  added: Count,
  changed: Count,
  removed: Count
}) {}

/** The stored connection. */
export class RepositoryConnection extends Schema.Class<RepositoryConnection>("RepositoryConnection")({
  id: Schema.String,
  workspace_id: Schema.String,
  source: SourceKind,
  /** The real path (for `path`) or the URL as given (for `git`, credentials included: never shown as is). */
  location: Schema.String,
  status: IndexStatus,
  error: Schema.NullOr(Schema.String),
  progress: IndexProgress,
  changes: Schema.NullOr(IndexChanges),
  /** Bumped by every stored snapshot: whoever caches something built from the snapshot keys it by this. */
  index_version: Count,
  /** Index runs asked for (connecting is the first) and those served (succeeded or failed). */
  requested: Count,
  served: Count,
  connected_by: Schema.NullOr(Schema.String),
  connected_at: Schema.DateTimeUtc,
  started_at: Schema.NullOr(Schema.DateTimeUtc),
  finished_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/** A git URL as shown to users: a password in it is masked. */
export const displayUrl = (url: string): string =>
  url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@]*)@/i, (_, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(":")
    return `${scheme}${colon === -1 ? userinfo : `${userinfo.slice(0, colon)}:***`}@`
  })

/** `text` with every occurrence of the URL replaced by its display form (for git's error messages). */
export const maskUrl = (text: string, url: string): string => text.split(url).join(displayUrl(url))

const where = {
  source: SourceKind,
  path: Schema.NullOr(Schema.String).annotations({ description: "The connected directory (for source `path`)" }),
  git_url: Schema.NullOr(Schema.String).annotations({ description: "The cloned URL, a password in it masked (for source `git`)" }),
  status: IndexStatus
}

/** A repository as workspace lists show it. */
export class RepositorySummary extends Schema.Class<RepositorySummary>("RepositorySummary")({
  ...where,
  index_version: Count,
  finished_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

export const FileCounts = Schema.Struct({
  total: Count,
  by_category: Schema.Record({ key: FileCategory, value: Count })
})
export type FileCounts = typeof FileCounts.Type

/** How many skipped paths of each reason a status names; `by_reason` says how many there are. */
export const skippedPathsShown = 100

export const SkippedFiles = Schema.Struct({
  total: Count,
  by_reason: Schema.Record({ key: SkipReason, value: Count }),
  paths: Schema.Record({ key: SkipReason, value: Schema.Array(Schema.String) }).annotations({
    description:
      `The skipped paths of each reason, in path order, the first ${skippedPathsShown} (by_reason has how many there are); a vendored or build-output tree is one path ending in /`
  })
})
export type SkippedFiles = typeof SkippedFiles.Type

/** A repository's full status, `GET /v1/workspaces/{id}/repository`. */
export class RepositoryStatus extends Schema.Class<RepositoryStatus>("RepositoryStatus")({
  workspace_id: Schema.String,
  ...where,
  error: Schema.NullOr(Schema.String),
  progress: IndexProgress.annotations({ description: "The current (or last) run's progress" }),
  changes: Schema.NullOr(IndexChanges).annotations({ description: "What the last stored run changed; null before the first" }),
  index_version: Count.annotations({ description: "How many snapshots were stored; 0 before the first" }),
  connected_at: Schema.DateTimeUtc,
  started_at: Schema.NullOr(Schema.DateTimeUtc),
  finished_at: Schema.NullOr(Schema.DateTimeUtc),
  files: Schema.NullOr(FileCounts).annotations({ description: "The stored snapshot's indexed files by category; null before the first" }),
  skipped: Schema.NullOr(SkippedFiles).annotations({ description: "The stored snapshot's skipped files by reason, with their paths; null before the first" })
}) {}

const location = (connection: RepositoryConnection) => ({
  source: connection.source,
  path: connection.source === "path" ? connection.location : null,
  git_url: connection.source === "git" ? displayUrl(connection.location) : null,
  status: connection.status
})

export const summaryOf = (connection: RepositoryConnection): RepositorySummary =>
  new RepositorySummary({ ...location(connection), index_version: connection.index_version, finished_at: connection.finished_at })

export interface SnapshotCounts {
  readonly files: FileCounts
  readonly skipped: SkippedFiles
}

export const statusOf = (connection: RepositoryConnection, counts: SnapshotCounts | null): RepositoryStatus =>
  new RepositoryStatus({
    workspace_id: connection.workspace_id,
    ...location(connection),
    error: connection.error,
    progress: connection.progress,
    changes: connection.changes,
    index_version: connection.index_version,
    connected_at: connection.connected_at,
    started_at: connection.started_at,
    finished_at: connection.finished_at,
    files: counts?.files ?? null,
    skipped: counts?.skipped ?? null
  })
