import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { AuditEvent, AuditEventType } from "@huddle/domain/audit/Audit"
import { Role } from "@huddle/domain/orgs/Membership"
import { Member, MemberCap } from "@huddle/domain/orgs/Organization"
import { OrgPolicies } from "@huddle/domain/settings/Policy"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { Dashboard } from "@huddle/domain/orgs/Organizations"
import { EmailInput } from "@huddle/domain/identity/User"
import { Id, Line } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import * as Idempotency from "../shared/Idempotency.js"
import { Instant } from "../shared/Instant.js"
import { ListParams, page } from "../shared/Lists.js"
import { RateLimited } from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"
import { SpendParams } from "../shared/SpendParams.js"
import { OrgIdPath } from "./OrgsApi.js"
import { SpendReport } from "@huddle/domain/spend/SpendQuery"

const MemberPath = Schema.Struct({
  orgId: Id,
  /** A user id, or the email of a pending invitation. */
  member: Line.pipe(Schema.maxLength(254))
})

export const InviteRequest = Schema.Struct({
  email: EmailInput,
  role: Schema.optionalWith(Role, { default: () => "member" as const })
})

export const AuditLogParams = Schema.Struct({
  ...ListParams.fields,
  start_at: Schema.optional(Instant("ISO 8601 date or time, UTC unless an offset is given; only events at or after it")),
  event_type: Schema.optional(AuditEventType)
})

/** A cap, or null to lift it. */
export const CapRequest = Schema.NullOr(MemberCap)

export class OrgAdminApi extends HttpApiGroup.make("orgAdmin")
  .add(
    HttpApiEndpoint.post("invite", "/orgs/:orgId/admin/members/invite")
      .annotate(OpenApi.Summary, "Invite a member")
      .annotateContext(Idempotency.keyed)
      .setPath(OrgIdPath)
      .setPayload(InviteRequest)
      .addSuccess(Member, { status: 201 })
      .addError(Envelope.Conflict)
      .annotate(OpenApi.Description, "Invite an email (role defaults to member). The invitation becomes a membership when that user signs up or logs in.")
  )
  .add(
    HttpApiEndpoint.get("members", "/orgs/:orgId/admin/members")
      .annotate(OpenApi.Summary, "List members and invitations")
      .setPath(OrgIdPath)
      .setUrlParams(ListParams)
      .addSuccess(page(Member))
      .annotate(OpenApi.Description, "Members and pending invitations, by email.")
  )
  .add(
    HttpApiEndpoint.patch("setRole", "/orgs/:orgId/admin/members/:member")
      .annotate(OpenApi.Summary, "Change a member's role")
      .setPath(MemberPath)
      .setPayload(Schema.Struct({ role: Role }))
      .addSuccess(Member)
      .addError(Envelope.Conflict)
      .annotate(OpenApi.Description, "Change a member's role (by user id, or email for a pending invitation). The last admin cannot be demoted.")
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/orgs/:orgId/admin/members/:member")
      .annotate(OpenApi.Summary, "Remove a member")
      .setPath(MemberPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.Conflict)
      .annotate(OpenApi.Description, "Remove a member or withdraw an invitation. The last admin cannot be removed.")
  )
  .add(
    HttpApiEndpoint.get("dashboard", "/orgs/:orgId/admin")
      .annotate(OpenApi.Summary, "Get the admin dashboard")
      .setPath(OrgIdPath)
      .addSuccess(Dashboard)
      .annotate(OpenApi.Description, "Members, pending invitations, the credit pool, usage this month, active policies and recent audit events.")
  )
  .add(
    HttpApiEndpoint.get("auditLog", "/orgs/:orgId/admin/audit-log")
      .annotate(OpenApi.Summary, "List the audit log")
      .setPath(OrgIdPath)
      .setUrlParams(AuditLogParams)
      .addSuccess(page(AuditEvent))
      .annotate(OpenApi.Description, "The audit log, newest first; filter by `start_at` and `event_type`, page with `limit` and `cursor`.")
  )
  .add(
    HttpApiEndpoint.get("spend", "/orgs/:orgId/admin/spend")
      .annotate(OpenApi.Summary, "Read the organization's spend")
      .setPath(OrgIdPath)
      .setUrlParams(SpendParams)
      .addSuccess(SpendReport)
      .addError(Envelope.InvalidRequest)
      .annotate(
        OpenApi.Description,
        "What the org's requests spent, from the ledger: its pool (subscription, add-on) and members' personal balances when they paid for org requests. " +
          "Credits taken (net of what was returned) and reservations settled over `[from, to)` (at most 366 days), grouped by `group_by` " +
          "(day, week or month; model, tier, member, source), ordered by those keys, paged with `limit` and `cursor`; `totals` are of the whole range."
      )
  )
  .add(
    HttpApiEndpoint.get("getPolicies", "/orgs/:orgId/admin/policies")
      .annotate(OpenApi.Summary, "Get policies (admin)")
      .annotate(OpenApi.Description, "The organization's enforced policies, as an admin edits them.")
      .setPath(OrgIdPath)
      .addSuccess(OrgPolicies)
  )
  .add(
    HttpApiEndpoint.put("setPolicies", "/orgs/:orgId/admin/policies")
      .annotate(OpenApi.Summary, "Replace policies")
      .setPath(OrgIdPath)
      .setPayload(OrgPolicies)
      .addSuccess(OrgPolicies)
      .annotate(OpenApi.Description, "Replace the enforced policies; an omitted policy is lifted.")
  )
  .add(
    HttpApiEndpoint.get("getPreferences", "/orgs/:orgId/admin/preferences")
      .annotate(OpenApi.Summary, "Get default preferences")
      .annotate(OpenApi.Description, "The default preferences members inherit.")
      .setPath(OrgIdPath)
      .addSuccess(Preferences)
  )
  .add(
    HttpApiEndpoint.put("setPreferences", "/orgs/:orgId/admin/preferences")
      .annotate(OpenApi.Summary, "Replace default preferences")
      .setPath(OrgIdPath)
      .setPayload(Preferences)
      .addSuccess(Preferences)
      .annotate(OpenApi.Description, "Replace the default preferences members inherit (members may override them).")
  )
  .add(
    HttpApiEndpoint.put("setCap", "/orgs/:orgId/admin/members/:member/cap")
      .annotate(OpenApi.Summary, "Cap a member's spending")
      .setPath(MemberPath)
      .setPayload(CapRequest)
      .addSuccess(Member)
      .annotate(
        OpenApi.Description,
        "Cap what a member may take from the org's pool: `{amount, period: \"month\" | \"total\"}` (a calendar month in UTC, or in total), or `null` to lift it. " +
          "Enforced in the same step that reserves a request's credits; the member's `spent` counts what they have taken (worst case while a request runs, then its real cost). " +
          "Admins allocate the pool this way: only the operator adds credits."
      )
  )
  .addError(Envelope.NotFound)
  .addError(Envelope.Forbidden)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "Organization administration")
  .annotate(OpenApi.Description, "What an organization's admins manage: members, roles, caps, policies, default preferences and the audit log.")
{}
