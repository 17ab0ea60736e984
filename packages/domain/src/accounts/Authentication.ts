/**
 * Turns a bearer token into a principal. Every failure is the same `Unauthorized`, so that
 * a caller learns nothing about which part of a token was wrong.
 */
import { Context, DateTime, Effect, Layer, Option } from "effect"
import { Unauthorized } from "../shared/Errors.js"
import { Principal } from "../identity/Principal.js"
import { ApiKeyRepository } from "../identity/ApiKeyRepository.js"
import { SecretTokens } from "./SecretTokens.js"
import { WebSessionRepository } from "./WebSessionRepository.js"
import { traced } from "../observability/Traced.js"

export interface Service {
  readonly authenticate: (token: string) => Effect.Effect<Principal, Unauthorized>
}

export class Authentication extends Context.Tag("@huddle/domain/Authentication")<Authentication, Service>() {}

const rejected = (message: string) => Effect.fail(new Unauthorized({ message }))

export const make = Effect.gen(function*() {
  const tokens = yield* SecretTokens
  const keys = yield* ApiKeyRepository
  const sessions = yield* WebSessionRepository

  const viaApiKey = (token: string, prefix: string) =>
    Effect.gen(function*() {
      const found = yield* keys.findActive(prefix)
      if (Option.isNone(found) || !(yield* tokens.matches(token, found.value.tokenHash))) {
        return yield* rejected("Invalid or revoked API key")
      }
      const key = found.value
      yield* keys.touch(key.id, yield* DateTime.now)
      // Stored rows, decoded when read: validating again on every request would only cost.
      return new Principal({ user: key.user, via: "api_key", credential_id: key.id, bound_org_id: key.orgId }, { disableValidation: true })
    })

  const viaSession = (token: string, prefix: string) =>
    Effect.gen(function*() {
      const found = yield* sessions.findActive(prefix, yield* DateTime.now)
      if (Option.isNone(found) || !(yield* tokens.matches(token, found.value.tokenHash))) {
        return yield* rejected("Invalid or expired session")
      }
      const session = found.value
      return new Principal({ user: session.user, via: "session", credential_id: session.id, bound_org_id: null }, { disableValidation: true })
    })

  const authenticate: Service["authenticate"] = (token) =>
    Option.match(tokens.prefixOf("hk", token), {
      onSome: (prefix) => viaApiKey(token, prefix),
      onNone: () =>
        Option.match(tokens.prefixOf("hs", token), {
          onSome: (prefix) => viaSession(token, prefix),
          onNone: () =>
            rejected(token === "" ? "Missing bearer credentials" : "Invalid credentials")
        })
    })

  return Authentication.of(traced("Authentication", { authenticate }, { leaves: ["authenticate"] }))
})

export const layer = Layer.effect(Authentication, make)
