import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { Memories } from "@huddle/domain/memories/Memories"
import { Effect } from "effect"
import { Api } from "../Api.js"

export const MemoriesHttp = HttpApiBuilder.group(Api, "memories", (handlers) =>
  Effect.gen(function*() {
    const memories = yield* Memories
    const as = <A, E>(f: (principal: CurrentPrincipal["Type"]) => Effect.Effect<A, E>) => Effect.flatMap(CurrentPrincipal, f)
    return handlers
      .handle("create", ({ payload }) =>
        as((p) =>
          memories.create(p, {
            content: payload.content,
            scope: payload.scope,
            orgId: payload.org_id,
            workspaceId: payload.workspace_id
          })
        ))
      .handle("list", ({ urlParams }) =>
        as((p) =>
          memories.list(
            p,
            { scope: urlParams.scope ?? null, orgId: urlParams.org_id ?? null, workspaceId: urlParams.workspace_id ?? null },
            { limit: urlParams.limit, cursor: urlParams.cursor }
          )
        ))
      .handle("get", ({ path }) => as((p) => memories.get(p, path.id)))
      .handle("update", ({ path, payload }) => as((p) => memories.update(p, path.id, payload.content)))
      .handle("delete", ({ path }) => as((p) => memories.remove(p, path.id)))
  }))
