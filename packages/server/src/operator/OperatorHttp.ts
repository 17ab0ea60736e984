import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { NotFound, Unauthorized } from "@huddle/domain/shared/Errors"
import { type CreditTarget, Operator } from "@huddle/domain/operator/Operator"
import { Effect, Layer, Option, Redacted } from "effect"
import { Api } from "../Api.js"
import { bearerMatches } from "../edge/Secrets.js"
import { requestOf } from "../shared/SpendParams.js"
import { OperatorAuthenticated } from "./OperatorApi.js"
import { Spend } from "@huddle/domain/spend/Spend"

/**
 * The operator token, compared in constant time (digests of equal length, whatever the length of
 * what was sent). Without a token the API is off: 404, as for a path that does not exist.
 */
export const OperatorAuthenticatedLive = (token: Option.Option<Redacted.Redacted>) =>
  Layer.succeed(
    OperatorAuthenticated,
    OperatorAuthenticated.of({
      // The header is read with the one credential parser (the platform's ignores the scheme).
      operator: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request): Effect.Effect<void, NotFound | Unauthorized> => {
          if (Option.isNone(token)) {
            return Effect.fail(new NotFound({ message: "The operator API is off: the operator has set no HUDDLE_OPERATOR_TOKEN" }))
          }
          return bearerMatches(request.headers["authorization"], token.value)
            ? Effect.void
            : Effect.fail(new Unauthorized({ message: "Invalid operator token" }))
        })
    })
  )

const targetOf = (params: { readonly user_id?: string | undefined; readonly org_id?: string | undefined; readonly balance?: "subscription" | "addon" | undefined }): CreditTarget =>
  params.user_id !== undefined ? { user_id: params.user_id } : { org_id: params.org_id!, balance: params.balance! }

export const OperatorHttp = HttpApiBuilder.group(Api, "operator", (handlers) =>
  Effect.map(Effect.all([Operator, Spend]), ([operator, spend]) =>
    handlers
      .handle("grant", ({ payload }) => operator.grant({ target: targetOf(payload), amount: payload.amount, reason: payload.reason }, "api"))
      .handle("ledger", ({ urlParams }) => operator.ledger(targetOf(urlParams), { limit: urlParams.limit, cursor: urlParams.cursor }))
      .handle("spend", ({ urlParams }) => spend.deployment(requestOf(urlParams)))
      .handle("user", ({ path }) => operator.findUser(path.user))
      .handle("revokeKeys", ({ path }) => Effect.map(operator.revokeKeys(path.user, "api"), (revoked) => ({ revoked })))
      .handle("passwordReset", ({ path }) => operator.issuePasswordReset(path.user, "api"))
  ))
