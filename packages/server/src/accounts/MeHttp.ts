import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { Accounts } from "@huddle/domain/accounts/Accounts"
import { Effect } from "effect"
import { Api } from "../Api.js"

export const MeHttp = HttpApiBuilder.group(Api, "me", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("me", () => Effect.flatMap(CurrentPrincipal, accounts.profile))
      .handle("setPreferences", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => accounts.setPreferences(principal, payload)))
      .handle("auditLog", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (principal) => accounts.auditLog(principal, urlParams)))
      .handle("ledger", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (principal) => accounts.ledger(principal, urlParams)))
  }))
