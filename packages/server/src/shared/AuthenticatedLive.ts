import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Unauthorized } from "@huddle/domain/shared/Errors"
import { Authentication } from "@huddle/domain/accounts/Authentication"
import { Effect, Layer } from "effect"
import { Authenticated, credentialOfHeaders } from "./Security.js"

export const AuthenticatedLive = Layer.effect(
  Authenticated,
  Effect.map(Authentication, (auth) =>
    Authenticated.of({
      // The platform hands over the header from its 8th character on, whatever the scheme
      // (`Basic  hk_…`, `Bearer:hk_…`): the header is read again with the one parser.
      bearer: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const credential = credentialOfHeaders(request.headers)
          switch (credential._tag) {
            case "None":
              return auth.authenticate("")
            case "Malformed":
              return Effect.fail(
                new Unauthorized({ message: "The Authorization header must be: Bearer <API key or session token> (or send the API key as x-api-key)" })
              )
            case "Bearer":
              return auth.authenticate(credential.token)
          }
        })
    }))
)
