import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { ApiKeys } from "@huddle/domain/accounts/ApiKeys"
import { Effect } from "effect"
import { Api } from "../Api.js"

export const ApiKeysHttp = HttpApiBuilder.group(Api, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => keys.create(principal, { name: payload.name, orgId: payload.org_id })))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (principal) => keys.list(principal, urlParams)))
      .handle("revoke", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => keys.revoke(principal, path.id)))
  }))
