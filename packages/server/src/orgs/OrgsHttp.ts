import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { OrgCredits } from "@huddle/domain/orgs/OrgCredits"
import { Organizations } from "@huddle/domain/orgs/Organizations"
import { OrgSettings } from "@huddle/domain/orgs/OrgSettings"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { withPrincipal } from "../shared/withPrincipal.js"

export const OrgsHttp = HttpApiBuilder.group(Api, "orgs", (handlers) =>
  Effect.gen(function*() {
    const orgs = yield* Organizations
    const settings = yield* OrgSettings
    const credits = yield* OrgCredits
    return handlers
      .handle("create", ({ payload }) => withPrincipal((p) => orgs.create(p, payload.name)))
      .handle("list", () => withPrincipal((p) => orgs.list(p)).pipe(Effect.map((data) => ({ data, next_cursor: null }))))
      .handle("delete", ({ path }) => withPrincipal((p) => orgs.remove(p, path.orgId)))
      .handle("leave", ({ path }) => withPrincipal((p) => orgs.leave(p, path.orgId)))
      .handle("policies", ({ path }) => withPrincipal((p) => settings.policies(p, path.orgId)))
      .handle("credits", ({ path }) => withPrincipal((p) => credits.view(p, path.orgId)))
  }))
