import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import * as Envelope from "./Envelope.js"

/**
 * Bearer authentication (an API key `hk_…` or a web-session token `hs_…`) for `/v1` endpoints;
 * Anthropic's clients send the key as `x-api-key` instead (`credentialOfHeaders`).
 */
export class Authenticated extends HttpApiMiddleware.Tag<Authenticated>()("Authenticated", {
  failure: Envelope.Unauthorized,
  provides: CurrentPrincipal,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "An API key (`hk_…`) or a web-session token (`hs_…` from POST /v1/auth/login)"
      )
    )
  }
}) {}

/** What a request's `Authorization` header holds. */
export type Credential =
  | { readonly _tag: "None" }
  /** A header that is not `Bearer <token>`: another scheme, no space, or more than one token. */
  | { readonly _tag: "Malformed" }
  | { readonly _tag: "Bearer"; readonly token: string }

const bearer = /^Bearer +([^\s]+)$/i

/**
 * The one reading of the `Authorization` header: the scheme `Bearer` in any case, one space or
 * more, the token. Authentication and idempotency (which seals stored answers with the token)
 * both read the credential here, so that they can never disagree about who is calling.
 */
export const credentialOf = (authorization: string | undefined): Credential => {
  if (authorization === undefined || authorization.trim() === "") return { _tag: "None" }
  const token = bearer.exec(authorization.trim())?.[1]
  return token === undefined ? { _tag: "Malformed" } : { _tag: "Bearer", token }
}

/**
 * A request's credential: its `Authorization` header, or else its `x-api-key` (Anthropic's SDKs
 * and Claude Code with `ANTHROPIC_API_KEY`), read as a bearer token.
 */
export const credentialOfHeaders = (headers: { readonly [name: string]: string | undefined }): Credential => {
  const authorization = headers["authorization"]
  const apiKey = headers["x-api-key"]?.trim()
  if ((authorization === undefined || authorization.trim() === "") && apiKey !== undefined && apiKey !== "") {
    return /\s/.test(apiKey) ? { _tag: "Malformed" } : { _tag: "Bearer", token: apiKey }
  }
  return credentialOf(authorization)
}
