/**
 * Who is calling: a user, authenticated either by a web-app session or by an API key
 * (which may be bound to one organization).
 */
import { Context, Schema } from "effect"
import { User } from "./User.js"

export const CredentialKind = Schema.Literal("session", "api_key")
export type CredentialKind = typeof CredentialKind.Type

export class Principal extends Schema.Class<Principal>("Principal")({
  user: User,
  via: CredentialKind,
  /** The id of the web session or API key that authenticated the request. */
  credential_id: Schema.String,
  /** The organization an API key is bound to, if any. */
  bound_org_id: Schema.NullOr(Schema.String)
}) {}

/** The principal of the request being served. */
export class CurrentPrincipal extends Context.Tag("@huddle/domain/CurrentPrincipal")<CurrentPrincipal, Principal>() {}
