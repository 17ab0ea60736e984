import { Authentication } from "@huddle/domain/services/Authentication"
import { Effect, Layer, Redacted } from "effect"
import { Authenticated } from "../api/Security.js"

export const AuthenticatedLive = Layer.effect(
  Authenticated,
  Effect.map(Authentication, (auth) =>
    Authenticated.of({
      bearer: (token) => auth.authenticate(Redacted.value(token))
    }))
)
