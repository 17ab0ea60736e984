/** Workspaces, read to place every request, cached until a workspace changes. */
import { WorkspaceRepository } from "@huddle/domain/accounts/WorkspaceRepository"
import type { Workspace } from "@huddle/domain/accounts/Workspace"
import { Effect, Layer, type Option } from "effect"
import { ChangeFeed } from "./ChangeFeed.js"
import * as Metrics from "@huddle/domain/observability/Metrics"
import * as InvalidatedCache from "./InvalidatedCache.js"

export const layer = Layer.effect(
  WorkspaceRepository,
  Effect.gen(function*() {
    const metrics = yield* Metrics.Metrics
    const inner = yield* WorkspaceRepository
    const feed = yield* ChangeFeed
    const wrote = Effect.sync(() => feed.wrote("workspaces"))
    // The trigger sends the owner; workspaces change rarely, so a change clears the lookups by id.
    const personal = InvalidatedCache.make<Option.Option<Workspace>>(feed, { name: "personal_workspaces", invalidatedBy: { workspaces: (ownerId) => [ownerId] } }, metrics)
    const byId = InvalidatedCache.make<Option.Option<Workspace>>(feed, { name: "workspaces", invalidatedBy: { workspaces: () => "all" } }, metrics)
    return WorkspaceRepository.of({
      ...inner,
      ensurePersonal: (candidate) => Effect.ensuring(inner.ensurePersonal(candidate), wrote),
      createForOrg: (workspace) => Effect.ensuring(inner.createForOrg(workspace), wrote),
      delete: (id) => Effect.ensuring(inner.delete(id), wrote),
      findById: (id) => byId.get(id, inner.findById(id)),
      findPersonal: (ownerId) => personal.get(ownerId, inner.findPersonal(ownerId))
    })
  })
)
