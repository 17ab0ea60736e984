import { HttpApiBuilder } from "@effect/platform"
import { CurrentPrincipal } from "@huddle/domain/Principal"
import { OrgCredits } from "@huddle/domain/services/OrgCredits"
import { Organizations } from "@huddle/domain/services/Organizations"
import { OrgSettings } from "@huddle/domain/services/OrgSettings"
import { Effect } from "effect"
import { Api } from "../Api.js"

export const OrgsHttp = HttpApiBuilder.group(Api, "orgs", (handlers) =>
  Effect.gen(function*() {
    const orgs = yield* Organizations
    const settings = yield* OrgSettings
    const credits = yield* OrgCredits
    const as = <A, E>(f: (principal: CurrentPrincipal["Type"]) => Effect.Effect<A, E>) => Effect.flatMap(CurrentPrincipal, f)
    return handlers
      .handle("create", ({ payload }) => as((p) => orgs.create(p, payload.name)))
      .handle("list", () => as((p) => orgs.list(p)).pipe(Effect.map((data) => ({ data, next_cursor: null }))))
      .handle("delete", ({ path }) => as((p) => orgs.remove(p, path.orgId)))
      .handle("leave", ({ path }) => as((p) => orgs.leave(p, path.orgId)))
      .handle("policies", ({ path }) => as((p) => settings.policies(p, path.orgId)))
      .handle("credits", ({ path }) => as((p) => credits.view(p, path.orgId)))
  }))
