import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { OrgCredits } from "@huddle/domain/orgs/OrgCredits"
import { Organizations } from "@huddle/domain/orgs/Organizations"
import { OrgSettings } from "@huddle/domain/orgs/OrgSettings"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { requestOf } from "../shared/SpendParams.js"
import { Spend } from "@huddle/domain/spend/Spend"
import { withPrincipal } from "../shared/withPrincipal.js"

export const OrgAdminHttp = HttpApiBuilder.group(Api, "orgAdmin", (handlers) =>
  Effect.gen(function*() {
    const orgs = yield* Organizations
    const settings = yield* OrgSettings
    const credits = yield* OrgCredits
    const spend = yield* Spend
    return handlers
      .handle("invite", ({ path, payload }) => withPrincipal((p) => orgs.invite(p, path.orgId, payload)))
      .handle("members", ({ path, urlParams }) => withPrincipal((p) => orgs.members(p, path.orgId, urlParams)))
      .handle("setRole", ({ path, payload }) => withPrincipal((p) => orgs.setRole(p, path.orgId, path.member, payload.role)))
      .handle("removeMember", ({ path }) => withPrincipal((p) => orgs.removeMember(p, path.orgId, path.member)))
      .handle("dashboard", ({ path }) => withPrincipal((p) => orgs.dashboard(p, path.orgId)))
      .handle("auditLog", ({ path, urlParams }) =>
        withPrincipal((p) =>
          orgs.auditLog(p, path.orgId, {
            limit: urlParams.limit,
            cursor: urlParams.cursor,
            eventType: urlParams.event_type,
            startAt: urlParams.start_at
          })
        ))
      .handle("spend", ({ path, urlParams }) => withPrincipal((p) => spend.org(p, path.orgId, requestOf(urlParams))))
      .handle("getPolicies", ({ path }) => withPrincipal((p) => settings.adminPolicies(p, path.orgId)))
      .handle("setPolicies", ({ path, payload }) => withPrincipal((p) => settings.setPolicies(p, path.orgId, payload)))
      .handle("getPreferences", ({ path }) => withPrincipal((p) => settings.defaults(p, path.orgId)))
      .handle("setPreferences", ({ path, payload }) => withPrincipal((p) => settings.setDefaults(p, path.orgId, payload)))
      .handle("setCap", ({ path, payload }) => withPrincipal((p) => credits.setCap(p, path.orgId, path.member, payload)))
  }))
