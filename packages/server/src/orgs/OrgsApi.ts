import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { OrgMembership } from "@huddle/domain/orgs/Membership"
import { Organization, OrgName } from "@huddle/domain/orgs/Organization"
import { OrgPolicies } from "@huddle/domain/settings/Policy"
import { OrgCreditsView } from "@huddle/domain/orgs/OrgCredits"
import { Id } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import * as Idempotency from "../shared/Idempotency.js"
import { page } from "../shared/Lists.js"
import { RateLimited } from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"

export const OrgIdPath = Schema.Struct({ orgId: Id })

export class OrgsApi extends HttpApiGroup.make("orgs")
  .add(
    HttpApiEndpoint.post("create", "/orgs")
      .annotate(OpenApi.Summary, "Create an organization")
      .annotateContext(Idempotency.keyed)
      .setPayload(Schema.Struct({ name: OrgName }))
      .addSuccess(Organization, { status: 201 })
      .addError(Envelope.SessionRequired)
      .annotate(OpenApi.Description, "Create an organization (web session only). The creator becomes its admin.")
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs")
      .annotate(OpenApi.Summary, "List the caller's organizations")
      .addSuccess(page(OrgMembership))
      .annotate(OpenApi.Description, "The organizations the caller belongs to, each with the caller's role.")
  )
  .add(
    HttpApiEndpoint.del("delete", "/orgs/:orgId")
      .annotate(OpenApi.Summary, "Delete an organization")
      .setPath(OrgIdPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.Forbidden)
      .annotate(OpenApi.Description, "Delete the organization with its members, memories and credit balances (admin). Irreversible.")
  )
  .add(
    HttpApiEndpoint.post("leave", "/orgs/:orgId/leave")
      .annotate(OpenApi.Summary, "Leave an organization")
      .annotateContext(Idempotency.keyed)
      .setPath(OrgIdPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.Conflict)
      .annotate(OpenApi.Description, "Leave the organization. The last admin cannot leave.")
  )
  .add(
    HttpApiEndpoint.get("policies", "/orgs/:orgId/policies")
      .annotate(OpenApi.Summary, "Get enforced policies")
      .setPath(OrgIdPath)
      .addSuccess(OrgPolicies)
      .annotate(OpenApi.Description, "The organization's enforced policies, readable by every member.")
  )
  .add(
    HttpApiEndpoint.get("credits", "/orgs/:orgId/credits")
      .annotate(OpenApi.Summary, "Get credit balances")
      .setPath(OrgIdPath)
      .addSuccess(OrgCreditsView)
      .annotate(OpenApi.Description, "The organization's credit pool, the caller's personal balance, and who pays for the caller's requests.")
  )
  .addError(Envelope.NotFound)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "Organizations")
  .annotate(OpenApi.Description, "Organizations the caller belongs to: create, leave, read policies and credits.")
{}
