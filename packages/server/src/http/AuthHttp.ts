import { HttpApiBuilder } from "@effect/platform"
import { CurrentPrincipal } from "@huddle/domain/Principal"
import { Accounts } from "@huddle/domain/services/Accounts"
import { Effect, Redacted } from "effect"
import { SignupResponse } from "../api/AuthApi.js"
import { Api } from "../Api.js"

export const AuthHttp = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("signup", ({ payload }) =>
        accounts.signup({ email: payload.email, password: Redacted.make(payload.password) }).pipe(
          Effect.map((user) => new SignupResponse({ user }))
        ))
      .handle("login", ({ payload }) =>
        accounts.login({ email: payload.email, password: Redacted.make(payload.password) }))
      .handle("logout", () => Effect.flatMap(CurrentPrincipal, accounts.logout))
  }))
