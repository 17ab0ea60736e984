/**
 * The workspaces a caller may use, and org workspaces' lifecycle. Everyone has a personal
 * workspace (made on first use); an org's admins create and delete the org's workspaces, which
 * every member uses (for huddles and memories) and sees listed, each with its repository's
 * status in brief.
 */
import { Context, DateTime, Effect, Layer, Option, ParseResult, Schema } from "effect"
import { AuditLog } from "../audit/AuditLog.js"
import { RepositorySummary, summaryOf } from "../grounding/RepositoryConnection.js"
import { RepositoryStore } from "../grounding/RepositoryStore.js"
import { MembershipRepository } from "../orgs/MembershipRepository.js"
import { OrgAccess, reaches } from "../orgs/OrgAccess.js"
import { Conflict, type Forbidden, InvalidRequest, type NotFound } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { fromRows, type Page, type PageRequest } from "../shared/Page.js"
import { Transactor } from "../shared/Transactor.js"
import type { Principal } from "../identity/Principal.js"
import { Workspace, WorkspaceName } from "../accounts/Workspace.js"
import * as WorkspaceAccess from "../accounts/WorkspaceAccess.js"
import { WorkspaceRepository } from "../accounts/WorkspaceRepository.js"
import { traced } from "../observability/Traced.js"

/** A workspace as its users see it. */
export class WorkspaceView extends Schema.Class<WorkspaceView>("WorkspaceView")({
  id: Schema.String,
  name: Schema.String,
  personal: Schema.Boolean,
  /** The owner of a personal workspace; null for an org's. */
  owner_id: Schema.NullOr(Schema.String),
  /** The org of an org workspace; null for a personal one. */
  org_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  repository: Schema.NullOr(RepositorySummary).annotations({ description: "The connected repository in brief; null when none is" })
}) {}

export interface Service {
  readonly list: (principal: Principal, page: PageRequest) => Effect.Effect<Page<WorkspaceView>>
  readonly get: (principal: Principal, workspaceId: string) => Effect.Effect<WorkspaceView, NotFound>
  readonly createForOrg: (
    principal: Principal,
    orgId: string,
    name: string
  ) => Effect.Effect<WorkspaceView, NotFound | Forbidden | Conflict | InvalidRequest>
  readonly deleteForOrg: (principal: Principal, orgId: string, workspaceId: string) => Effect.Effect<void, NotFound | Forbidden>
}

export class Workspaces extends Context.Tag("@huddle/domain/Workspaces")<Workspaces, Service>() {}

const validName = (name: string): Effect.Effect<string, InvalidRequest> =>
  Schema.decodeUnknown(WorkspaceName)(name).pipe(
    Effect.mapError((error) =>
      new InvalidRequest({ message: ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "name is invalid", field: "name" })
    )
  )

export const make = Effect.gen(function*() {
  const repository = yield* WorkspaceRepository
  const workspaces = yield* WorkspaceAccess.make
  const memberships = yield* MembershipRepository
  const access = yield* OrgAccess
  const repositories = yield* RepositoryStore
  const ids = yield* Ids
  const audit = yield* AuditLog
  const tx = yield* Transactor

  const views = (list: ReadonlyArray<Workspace>) =>
    Effect.map(repositories.findMany(list.map((workspace) => workspace.id)), (connections) => {
      const byWorkspace = new Map(connections.map((connection) => [connection.workspace_id, connection]))
      return list.map((workspace) => {
        const connection = byWorkspace.get(workspace.id)
        return new WorkspaceView({ ...workspace, repository: connection === undefined ? null : summaryOf(connection) })
      })
    })

  const list: Service["list"] = (principal, page) =>
    Effect.gen(function*() {
      // Made on first use; a key bound to an org has none, and lists that org's workspaces only.
      const personal = yield* workspaces.personal(principal).pipe(Effect.as(true), Effect.catchTag("NotFound", () => Effect.succeed(false)))
      const orgIds = (yield* memberships.listForUser(principal.user.id)).filter((org) => reaches(principal, org.id)).map((org) => org.id)
      const rows = yield* repository.list({ ownerId: personal ? principal.user.id : null, orgIds }, page)
      const { data, next_cursor } = fromRows(rows, page.limit)
      return { data: yield* views(data), next_cursor }
    })

  const get: Service["get"] = (principal, workspaceId) =>
    workspaces.usable(principal, workspaceId).pipe(
      Effect.flatMap(({ workspace }) => views([workspace])),
      Effect.map((found) => found[0]!)
    )

  const createForOrg: Service["createForOrg"] = (principal, orgId, input) =>
    Effect.gen(function*() {
      yield* access.admin(principal, orgId)
      const name = yield* validName(input)
      const workspace = new Workspace({
        id: yield* ids.next("wsp"),
        owner_id: null,
        org_id: orgId,
        name,
        personal: false,
        created_at: yield* DateTime.now
      })
      const created = yield* tx.atomically(
        repository.createForOrg(workspace).pipe(
          Effect.tap((done) =>
            done
              ? audit.record({ orgId, eventType: "workspace.created", actorId: principal.user.id, target: workspace.id, details: { name } })
              : Effect.void
          )
        )
      )
      if (!created) return yield* new Conflict({ message: `The organization already has a workspace named "${name}"` })
      return new WorkspaceView({ ...workspace, repository: null })
    })

  const deleteForOrg: Service["deleteForOrg"] = (principal, orgId, workspaceId) =>
    Effect.gen(function*() {
      yield* access.admin(principal, orgId)
      const workspace = yield* repository.findById(workspaceId).pipe(
        Effect.map(Option.filter((found) => found.org_id === orgId)),
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(WorkspaceAccess.workspaceNotFound), onSome: Effect.succeed }))
      )
      yield* tx.atomically(
        repository.delete(workspace.id).pipe(
          Effect.zipRight(audit.record({
            orgId,
            eventType: "workspace.deleted",
            actorId: principal.user.id,
            target: workspace.id,
            details: { name: workspace.name }
          }))
        )
      )
    })

  return Workspaces.of(traced("Workspaces", { list, get, createForOrg, deleteForOrg }))
})

export const layer = Layer.effect(Workspaces, make)
