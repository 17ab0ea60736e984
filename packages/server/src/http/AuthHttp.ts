import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { CurrentPrincipal } from "@huddle/domain/accounts/Principal"
import { Accounts } from "@huddle/domain/accounts/Accounts"
import { Effect } from "effect"
import { SignupResponse } from "../api/AuthApi.js"
import { Api } from "../Api.js"

export const AuthHttp = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("signup", ({ payload }) =>
        accounts.signup(payload).pipe(
          Effect.map((user) => new SignupResponse({ user }))
        ))
      .handle("login", ({ payload }) =>
        accounts.login(payload))
      .handle("logout", () => Effect.flatMap(CurrentPrincipal, accounts.logout))
  }))
