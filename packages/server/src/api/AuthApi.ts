import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { LoginResult } from "@huddle/domain/accounts/Accounts"
import { EmailInput, LoginPassword, Password, User } from "@huddle/domain/accounts/User"
import { Schema } from "effect"
import * as Envelope from "./Envelope.js"
import * as Idempotency from "./Idempotency.js"
import { Authenticated } from "./Security.js"

export const SignupRequest = Schema.Struct({ email: EmailInput, password: Password })
export const LoginRequest = Schema.Struct({ email: EmailInput, password: LoginPassword })
export class SignupResponse extends Schema.Class<SignupResponse>("SignupResponse")({ user: User }) {}

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("signup", "/auth/signup")
      .annotate(OpenApi.Summary, "Sign up")
      .setPayload(SignupRequest)
      .addSuccess(SignupResponse, { status: 201 })
      .addError(Envelope.Conflict)
      .annotate(OpenApi.Description, "Create an account. New accounts receive a starter grant of personal credits.")
  )
  .add(
    HttpApiEndpoint.post("login", "/auth/login")
      .annotate(OpenApi.Summary, "Log in")
      .setPayload(LoginRequest)
      .addSuccess(LoginResult)
      .annotate(OpenApi.Description, "Start a web session. The token is shown once; send it as `Authorization: Bearer`.")
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
