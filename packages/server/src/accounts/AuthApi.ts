import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { LoginResult } from "@huddle/domain/accounts/Accounts"
import { EmailInput, LoginPassword, Password, User } from "@huddle/domain/identity/User"
import { Line, Secret } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import * as Idempotency from "../shared/Idempotency.js"
import { Authenticated } from "../shared/Security.js"

export const SignupRequest = Schema.Struct({ email: EmailInput, password: Password })
export const LoginRequest = Schema.Struct({ email: EmailInput, password: LoginPassword })
export const PasswordChangeRequest = Schema.Struct({ current_password: LoginPassword, new_password: Password })
export const PasswordResetRequest = Schema.Struct({
  token: Secret(Line.pipe(Schema.maxLength(200)), "token must be the reset token the operator gave you"),
  new_password: Password
})

export class SignupResponse extends Schema.Class<SignupResponse>("SignupResponse")({ user: User }) {}

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("signup", "/auth/signup")
      .annotate(OpenApi.Summary, "Sign up")
      .setPayload(SignupRequest)
      .addSuccess(SignupResponse, { status: 201 })
      .addError(Envelope.Conflict)
      .addError(Envelope.RateLimited)
      .addError(Envelope.ServiceUnavailable)
      .annotate(
        OpenApi.Description,
        "Create an account. New accounts receive a starter grant of personal credits. Sign-ups are limited per client address (429 `RATE_LIMITED` with `Retry-After`)."
      )
  )
  .add(
    HttpApiEndpoint.post("login", "/auth/login")
      .annotate(OpenApi.Summary, "Log in")
      .setPayload(LoginRequest)
      .addSuccess(LoginResult)
      .addError(Envelope.Unauthorized)
      .addError(Envelope.RateLimited)
      .addError(Envelope.ServiceUnavailable)
      .annotate(
        OpenApi.Description,
        "Start a web session. The token is shown once; send it as `Authorization: Bearer`. " +
          "Failed attempts are limited per account and per client address: once spent, every attempt (the right password too) " +
          "is answered 429 `RATE_LIMITED` with `Retry-After` until the window has passed."
      )
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/auth/password")
      .annotate(OpenApi.Summary, "Change the password")
      // A retry after success is refused anyway: the current password has changed.
      .annotate(Idempotency.Keyed, false)
      .setPayload(PasswordChangeRequest)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.SessionRequired)
      .addError(Envelope.Forbidden)
      .addError(Envelope.RateLimited)
      .addError(Envelope.ServiceUnavailable)
      .middleware(Authenticated)
      .annotate(
        OpenApi.Description,
        "Change the caller's password (a web session only). Every other web session of the user ends; this one stays. " +
          "A wrong `current_password` is 403 `FORBIDDEN` and counts as a failed sign-in of the account."
      )
  )
  .add(
    HttpApiEndpoint.post("resetPassword", "/auth/password/reset")
      .annotate(OpenApi.Summary, "Reset the password with a reset token")
      .setPayload(PasswordResetRequest)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.Unauthorized)
      .addError(Envelope.RateLimited)
      .addError(Envelope.ServiceUnavailable)
      .annotate(
        OpenApi.Description,
        "Set a new password with the one-time token the operator issued (`POST /v1/operator/users/{user}/password-reset`). " +
          "Every web session of the user ends; log in again. A token works once, until it expires (24 h)."
      )
  )
  .add(
    HttpApiEndpoint.post("logout", "/auth/logout")
      .annotate(OpenApi.Summary, "Log out")
      // Ending the session is naturally repeatable; a retry after it is refused with 401 anyway.
      .annotate(Idempotency.Keyed, false)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.SessionRequired)
      .middleware(Authenticated)
      .annotate(OpenApi.Description, "End the web session that authenticates this request.")
  )
  .annotate(OpenApi.Title, "Authentication")
  .annotate(OpenApi.Description, "Accounts and web sessions.")
{}
