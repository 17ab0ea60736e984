/**
 * Bearer secrets (API keys and web-session tokens). A token is `<kind>_<lookup>_<secret>`:
 * the lookup part finds the row without revealing anything, the stored hash covers the whole
 * token and is compared in constant time.
 */
import { Context, type Effect, type Option } from "effect"

/** `hk` API keys, `hs` web sessions, `hr` one-time password resets. */
export type TokenKind = "hk" | "hs" | "hr"

export interface IssuedToken {
  readonly token: string
  /** `<kind>_<lookup>`: unique, safe to store and show. */
  readonly prefix: string
  readonly lastFour: string
  readonly hash: string
}

export interface Service {
  readonly issue: (kind: TokenKind) => Effect.Effect<IssuedToken>
  /** The prefix of a syntactically valid token of the given kind. */
  readonly prefixOf: (kind: TokenKind, token: string) => Option.Option<string>
  readonly matches: (token: string, storedHash: string) => Effect.Effect<boolean>
}

export class SecretTokens extends Context.Tag("@huddle/domain/SecretTokens")<SecretTokens, Service>() {}
