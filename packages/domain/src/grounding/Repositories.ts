/**
 * Connecting a workspace to a repository, and what its users see of it. The owner of a personal
 * workspace, or an admin of an org workspace's org, connects (a local path or a git URL; again
 * to replace it), re-indexes and disconnects; whoever may use the workspace reads its status.
 * Indexing runs in the background (`IndexJobs`); the status tells how far it is.
 */
import { Context, DateTime, Effect, Layer, Option } from "effect"
import * as WorkspaceAccess from "../accounts/WorkspaceAccess.js"
import type { Principal } from "../identity/Principal.js"
import type { Workspace } from "../accounts/Workspace.js"
import { AuditLog } from "../audit/AuditLog.js"
import { type Forbidden, InvalidRequest, NotFound } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { Transactor } from "../shared/Transactor.js"
import { IndexJobs } from "./IndexJobs.js"
import {
  displayUrl,
  noProgress,
  RepositoryConnection,
  type RepositoryStatus,
  type SourceKind,
  statusOf
} from "./RepositoryConnection.js"
import { clip, linesOf, RepositoryFile } from "./RepositoryFile.js"
import { RepositorySources } from "./RepositorySources.js"
import { RepositoryStore } from "./RepositoryStore.js"
import { traced } from "../observability/Traced.js"

/** What a connect request names: exactly one of the two. */
export interface SourceInput {
  readonly path?: string | undefined
  readonly git_url?: string | undefined
}

export interface Service {
  readonly connect: (
    principal: Principal,
    workspaceId: string,
    source: SourceInput
  ) => Effect.Effect<RepositoryStatus, NotFound | Forbidden | InvalidRequest>
  readonly disconnect: (principal: Principal, workspaceId: string) => Effect.Effect<void, NotFound | Forbidden>
  readonly status: (principal: Principal, workspaceId: string) => Effect.Effect<RepositoryStatus, NotFound>
  readonly reindex: (principal: Principal, workspaceId: string) => Effect.Effect<RepositoryStatus, NotFound | Forbidden>
  /**
   * An indexed file's text (lines `from..to`, at most `maxLines`) from the stored snapshot, for
   * whoever may read the status; a path that is not indexed is not found.
   */
  readonly file: (
    principal: Principal,
    workspaceId: string,
    path: string,
    range: { readonly from?: number | undefined; readonly to?: number | undefined }
  ) => Effect.Effect<RepositoryFile, NotFound>
}

export class Repositories extends Context.Tag("@huddle/domain/Repositories")<Repositories, Service>() {}

export const notConnected = new NotFound({ message: "No repository is connected to this workspace" })

/** The source a request names, or why it names none or both. */
export const sourceOf = (input: SourceInput): Effect.Effect<{ readonly kind: SourceKind; readonly value: string }, InvalidRequest> =>
  input.path !== undefined && input.git_url !== undefined
    ? Effect.fail(new InvalidRequest({ message: "Give either path or git_url, not both", field: "git_url" }))
    : input.path !== undefined
    ? Effect.succeed({ kind: "path", value: input.path })
    : input.git_url !== undefined
    ? Effect.succeed({ kind: "git", value: input.git_url })
    : Effect.fail(new InvalidRequest({ message: "path or git_url is required: the repository's directory or its git URL", field: "path" }))

export const make = Effect.gen(function*() {
  const workspaces = yield* WorkspaceAccess.make
  const store = yield* RepositoryStore
  const sources = yield* RepositorySources
  const jobs = yield* IndexJobs
  const ids = yield* Ids
  const audit = yield* AuditLog
  const tx = yield* Transactor

  const statusNow = (connection: RepositoryConnection) =>
    connection.index_version === 0
      ? Effect.succeed(statusOf(connection, null))
      : Effect.map(store.counts(connection.id), (counts) => statusOf(connection, counts))

  /** Org workspaces' repository changes are the org admins' business: they go to the org's audit log. */
  const record = (principal: Principal, workspace: Workspace, eventType: "repository.connected" | "repository.disconnected", details: Record<string, unknown>) =>
    workspace.org_id === null
      ? Effect.void
      : audit.record({ orgId: workspace.org_id, eventType, actorId: principal.user.id, target: workspace.id, details })

  const connect: Service["connect"] = (principal, workspaceId, input) =>
    Effect.gen(function*() {
      const workspace = yield* workspaces.manageable(principal, workspaceId)
      const source = yield* sourceOf(input)
      const location = source.kind === "path" ? yield* sources.checkPath(source.value) : yield* sources.checkGitUrl(source.value)
      const now = yield* DateTime.now
      const connection = new RepositoryConnection({
        id: yield* ids.next("rep"),
        workspace_id: workspace.id,
        source: source.kind,
        location,
        status: "pending",
        error: null,
        progress: noProgress,
        changes: null,
        index_version: 0,
        requested: 1,
        served: 0,
        connected_by: principal.user.id,
        connected_at: now,
        started_at: null,
        finished_at: null
      })
      yield* tx.atomically(Effect.zipRight(
        store.connect(connection),
        record(principal, workspace, "repository.connected", {
          source: source.kind,
          ...(source.kind === "path" ? { path: location } : { git_url: displayUrl(location) })
        })
      ))
      yield* jobs.kick(connection.id)
      return statusOf(connection, null)
    })

  const disconnect: Service["disconnect"] = (principal, workspaceId) =>
    Effect.gen(function*() {
      const workspace = yield* workspaces.manageable(principal, workspaceId)
      const disconnected = yield* tx.atomically(
        store.disconnect(workspace.id).pipe(Effect.tap((done) => done ? record(principal, workspace, "repository.disconnected", {}) : Effect.void))
      )
      if (!disconnected) return yield* notConnected
    })

  const status: Service["status"] = (principal, workspaceId) =>
    Effect.gen(function*() {
      const { workspace } = yield* workspaces.usable(principal, workspaceId)
      const connection = yield* store.find(workspace.id)
      if (Option.isNone(connection)) return yield* notConnected
      return yield* statusNow(connection.value)
    })

  const reindex: Service["reindex"] = (principal, workspaceId) =>
    Effect.gen(function*() {
      const workspace = yield* workspaces.manageable(principal, workspaceId)
      const connection = yield* store.requestIndex(workspace.id)
      if (Option.isNone(connection)) return yield* notConnected
      yield* jobs.kick(connection.value.id)
      return yield* statusNow(connection.value)
    })

  const file: Service["file"] = (principal, workspaceId, path, asked) =>
    Effect.gen(function*() {
      const { workspace } = yield* workspaces.usable(principal, workspaceId)
      const connection = yield* store.find(workspace.id)
      if (Option.isNone(connection)) return yield* notConnected
      // Clipping needs the file's length, which the same read returns: ask for every line that
      // may be shown, then clip what came back.
      const wide = clip(asked, Number.MAX_SAFE_INTEGER)
      const found = connection.value.index_version === 0 ? Option.none() : yield* store.file(connection.value.id, path, wide)
      if (Option.isNone(found)) return yield* new NotFound({ message: `No indexed file at this path: ${path}` })
      const { chunks, file: indexed } = found.value
      const range = clip(asked, indexed.lines)
      return new RepositoryFile({
        workspace_id: workspace.id,
        path: indexed.path,
        category: indexed.category,
        language: indexed.language,
        bytes: indexed.bytes,
        index_version: connection.value.index_version,
        total_lines: indexed.lines,
        start_line: range.from,
        end_line: range.to,
        text: linesOf(chunks, range).join("\n")
      })
    })

  return Repositories.of(traced("Repositories", { connect, disconnect, status, reindex, file }))
})

export const layer = Layer.effect(Repositories, make)
