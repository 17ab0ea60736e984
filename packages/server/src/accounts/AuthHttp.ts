import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { Accounts } from "@huddle/domain/accounts/Accounts"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { SignupResponse } from "./AuthApi.js"
import { SignInThrottle } from "./SignInThrottle.js"

export const AuthHttp = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const throttle = yield* SignInThrottle
    return handlers
      .handle("signup", ({ payload }) =>
        throttle.signup(accounts.signup(payload)).pipe(
          Effect.map((user) => new SignupResponse({ user }))
        ))
      .handle("login", ({ payload }) => throttle.login(payload.email, accounts.login(payload)))
      .handle("logout", () => Effect.flatMap(CurrentPrincipal, accounts.logout))
      .handle("changePassword", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          // An API key is refused without checking a password: nothing to count.
          principal.via === "session"
            ? throttle.passwordCheck(principal.user.email, accounts.changePassword(principal, payload))
            : accounts.changePassword(principal, payload)))
      .handle("resetPassword", ({ payload }) => throttle.reset(accounts.resetPassword(payload)))
  }))
