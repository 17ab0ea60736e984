import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Workspaces } from "@huddle/domain/workspaces/Workspaces"
import { Repositories } from "@huddle/domain/grounding/Repositories"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { withPrincipal } from "../shared/withPrincipal.js"

export const WorkspacesHttp = HttpApiBuilder.group(Api, "workspaces", (handlers) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const repositories = yield* Repositories
    return handlers
      .handle("list", ({ urlParams }) => withPrincipal((p) => workspaces.list(p, { limit: urlParams.limit, cursor: urlParams.cursor })))
      .handle("get", ({ path }) => withPrincipal((p) => workspaces.get(p, path.id)))
      .handle("repository", ({ path }) => withPrincipal((p) => repositories.status(p, path.id)))
      .handle("file", ({ path, urlParams }) =>
        withPrincipal((p) => repositories.file(p, path.id, urlParams.path, { from: urlParams.from, to: urlParams.to })))
      .handle("connect", ({ path, payload }) => withPrincipal((p) => repositories.connect(p, path.id, payload)))
      .handle("disconnect", ({ path }) => withPrincipal((p) => repositories.disconnect(p, path.id)))
      .handle("reindex", ({ path }) => withPrincipal((p) => repositories.reindex(p, path.id)))
      .handle("createForOrg", ({ path, payload }) => withPrincipal((p) => workspaces.createForOrg(p, path.orgId, payload.name)))
      .handle("deleteForOrg", ({ path }) => withPrincipal((p) => workspaces.deleteForOrg(p, path.orgId, path.id)))
  }))
