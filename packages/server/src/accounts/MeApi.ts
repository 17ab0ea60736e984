import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { Profile } from "@huddle/domain/accounts/Accounts"
import { RateLimited } from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"
import { AuditEvent } from "@huddle/domain/audit/Audit"
import { ListParams, page } from "../shared/Lists.js"
// The operator reads any account's ledger in the same shape.
import { LedgerPage } from "../operator/OperatorApi.js"

export class MeApi extends HttpApiGroup.make("me")
  .add(
    HttpApiEndpoint.get("me", "/me")
      .annotate(OpenApi.Summary, "Get the caller")
      .addSuccess(Profile)
      .annotate(OpenApi.Description, "The caller: user, personal credit balance, preferences and organizations (for an API key bound to an organization, that organization only).")
  )
  .add(
    HttpApiEndpoint.put("setPreferences", "/me/preferences")
      .annotate(OpenApi.Summary, "Replace personal preferences")
      .setPayload(Preferences)
      .addSuccess(Preferences)
      .annotate(OpenApi.Description, "Replace the caller's personal preferences; an omitted field is unset (inherited). An API key bound to an organization has no personal context: NOT_FOUND.")
  )
  .add(
    HttpApiEndpoint.get("auditLog", "/me/audit-log")
      .annotate(OpenApi.Summary, "List the caller's security events")
      .setUrlParams(ListParams)
      .addSuccess(page(AuditEvent))
      .annotate(OpenApi.Description, "Account-level security events the caller took part in: API keys created and revoked, organizations deleted. Not for an API key bound to an organization (NOT_FOUND).")
  )
  .add(
    HttpApiEndpoint.get("ledger", "/me/credits/ledger")
      .annotate(OpenApi.Summary, "Read the caller's credit ledger")
      .setUrlParams(ListParams)
      .addSuccess(LedgerPage)
      .annotate(
        OpenApi.Description,
        "The caller's personal credit ledger, newest first (grants, reservations for their requests, settlements returning what was not used, with the tokens a model call was charged for), each row with the balance after it, and the balance now; page with `limit` and `cursor`. Not for an API key bound to an organization (NOT_FOUND)."
      )
  )
  .middleware(RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "Me")
  .annotate(OpenApi.Description, "The caller's own account: profile, balance and ledger, preferences and security events.")
{}
