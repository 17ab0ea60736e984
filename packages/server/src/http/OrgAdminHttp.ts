import { HttpApiBuilder } from "@effect/platform"
import { CurrentPrincipal } from "@huddle/domain/Principal"
import { OrgCredits } from "@huddle/domain/services/OrgCredits"
import { Organizations } from "@huddle/domain/services/Organizations"
import { OrgSettings } from "@huddle/domain/services/OrgSettings"
import { Effect } from "effect"
import { Api } from "../Api.js"

export const OrgAdminHttp = HttpApiBuilder.group(Api, "orgAdmin", (handlers) =>
  Effect.gen(function*() {
    const orgs = yield* Organizations
    const settings = yield* OrgSettings
    const credits = yield* OrgCredits
    const as = <A, E>(f: (principal: CurrentPrincipal["Type"]) => Effect.Effect<A, E>) => Effect.flatMap(CurrentPrincipal, f)
    return handlers
      .handle("invite", ({ path, payload }) => as((p) => orgs.invite(p, path.orgId, payload)))
      .handle("members", ({ path, urlParams }) => as((p) => orgs.members(p, path.orgId, urlParams)))
      .handle("setRole", ({ path, payload }) => as((p) => orgs.setRole(p, path.orgId, path.member, payload.role)))
      .handle("removeMember", ({ path }) => as((p) => orgs.removeMember(p, path.orgId, path.member)))
      .handle("dashboard", ({ path }) => as((p) => orgs.dashboard(p, path.orgId)))
      .handle("auditLog", ({ path, urlParams }) =>
        as((p) =>
          orgs.auditLog(p, path.orgId, {
            limit: urlParams.limit,
            cursor: urlParams.cursor,
            eventType: urlParams.event_type,
            startAt: urlParams.start_at
          })
        ))
      .handle("getPolicies", ({ path }) => as((p) => settings.adminPolicies(p, path.orgId)))
      .handle("setPolicies", ({ path, payload }) => as((p) => settings.setPolicies(p, path.orgId, payload)))
      .handle("getPreferences", ({ path }) => as((p) => settings.defaults(p, path.orgId)))
      .handle("setPreferences", ({ path, payload }) => as((p) => settings.setDefaults(p, path.orgId, payload)))
      .handle("grantCredits", ({ path, payload }) => as((p) => credits.grant(p, path.orgId, payload)))
  }))
