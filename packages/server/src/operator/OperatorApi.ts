/**
 * The operator API: what only the operator of the deployment may do (mint credits, read any
 * ledger, revoke a user's keys). It authenticates with `HUDDLE_OPERATOR_TOKEN`, a credential that
 * is not a user; with no token configured every endpoint answers 404, as if it did not exist.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import { PasswordReset } from "@huddle/domain/accounts/Accounts"
import { User } from "@huddle/domain/identity/User"
import { LedgerEntry } from "@huddle/domain/credits/LedgerEntry"
import { GrantResult, OrgBalance } from "@huddle/domain/operator/Operator"
import { Id as WireId, Line } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import { ListParams, page } from "../shared/Lists.js"
import * as RateLimit from "../shared/RateLimit.js"
import { SpendParams } from "../shared/SpendParams.js"
import { SpendReport } from "@huddle/domain/spend/SpendQuery"

const Id = WireId.pipe(Schema.minLength(1, { message: () => "must not be empty" }))

/** Either a user (`user_id`), or an org's balance (`org_id` and `balance`). */
const Target = {
  user_id: Schema.optional(Id),
  org_id: Schema.optional(Id),
  balance: Schema.optional(OrgBalance)
}

const oneTarget = (target: { readonly user_id?: string | undefined; readonly org_id?: string | undefined; readonly balance?: string | undefined }) =>
  target.user_id !== undefined
    ? target.org_id === undefined && target.balance === undefined || "give either user_id, or org_id with balance, not both"
    : target.org_id !== undefined && target.balance !== undefined || "give user_id, or org_id with balance (subscription or addon)"

export const GrantRequest = Schema.Struct({
  ...Target,
  amount: Schema.Int.pipe(Schema.between(1, 1_000_000_000_000, { message: () => "amount must be an integer from 1 to 10^12" })),
  reason: Line.pipe(
    Schema.compose(Schema.Trim),
    Schema.minLength(1, { message: () => "reason must not be empty" }),
    Schema.maxLength(500, { message: () => "reason must be at most 500 characters" })
  )
}).pipe(Schema.filter(oneTarget))

export const LedgerParams = Schema.Struct({ ...ListParams.fields, ...Target }).pipe(Schema.filter(oneTarget))

export const LedgerPage = Schema.Struct({ ...page(LedgerEntry).fields, balance: Schema.Int })

export class OperatorAuthenticated extends HttpApiMiddleware.Tag<OperatorAuthenticated>()("OperatorAuthenticated", {
  failure: Schema.Union(Envelope.Unauthorized, Envelope.NotFound),
  security: {
    operator: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "The operator token (`HUDDLE_OPERATOR_TOKEN`); not a user's key or session")
    )
  }
}) {}

const UserRef = Schema.Struct({ user: Line.pipe(Schema.minLength(1), Schema.maxLength(254)) })

export class OperatorApi extends HttpApiGroup.make("operator")
  .add(
    HttpApiEndpoint.post("grant", "/operator/credits/grants")
      .annotate(OpenApi.Summary, "Grant credits")
      .setPayload(GrantRequest)
      .addSuccess(GrantResult, { status: 201 })
      .annotate(OpenApi.Description, "Mint credits into a user's personal balance or an org's subscription or add-on balance, with a reason (a ledger row and an audit event).")
  )
  .add(
    HttpApiEndpoint.get("ledger", "/operator/credits/ledger")
      .annotate(OpenApi.Summary, "Read an account's ledger")
      .setUrlParams(LedgerParams)
      .addSuccess(LedgerPage)
      .annotate(OpenApi.Description, "An account's ledger, newest first, each row with the balance after it, and the balance now.")
  )
  .add(
    HttpApiEndpoint.get("spend", "/operator/spend")
      .annotate(OpenApi.Summary, "Read the deployment's spend")
      .setUrlParams(SpendParams)
      .addSuccess(SpendReport)
      .addError(Envelope.InvalidRequest)
      .annotate(
        OpenApi.Description,
        "Credits taken (net of what was returned) and reservations settled, from the ledger, over `[from, to)` (at most 366 days), " +
          "grouped by `group_by` (day, week or month; model, tier, member, source), ordered by those keys, paged with `limit` and `cursor`; " +
          "`totals` are of the whole range."
      )
  )
  .add(
    HttpApiEndpoint.get("user", "/operator/users/:user")
      .annotate(OpenApi.Summary, "Look up a user")
      .setPath(UserRef)
      .addSuccess(User)
      .annotate(OpenApi.Description, "A user by id or email.")
  )
  .add(
    HttpApiEndpoint.post("revokeKeys", "/operator/users/:user/revoke-keys")
      .annotate(OpenApi.Summary, "Revoke a user's API keys")
      .setPath(UserRef)
      .addSuccess(Schema.Struct({ revoked: Schema.Int }))
      .annotate(OpenApi.Description, "Revoke every API key of a user (by id or email); they stop working at once, on every instance.")
  )
  .add(
    HttpApiEndpoint.post("passwordReset", "/operator/users/:user/password-reset")
      .annotate(OpenApi.Summary, "Issue a password-reset token")
      .setPath(UserRef)
      .addSuccess(PasswordReset, { status: 201 })
      .annotate(
        OpenApi.Description,
        "A one-time token (shown once, stored as a digest, valid 24 h) that the user (by id or email) redeems at `POST /v1/auth/password/reset` " +
          "to set a new password, which ends all their web sessions. Issuing another cancels the earlier one. Hand it over out of band."
      )
  )
  .addError(Envelope.NotFound)
  .middleware(OperatorAuthenticated)
  // Rate limits count per user credential; the operator is none, and is trusted.
  .annotate(RateLimit.Class, "none")
  .annotate(OpenApi.Title, "Operator")
  .annotate(OpenApi.Description, "Operator-only administration, authenticated by the operator token.")
{}
