/**
 * Bearer tokens `<kind>_<12 hex lookup>_<43 base64url secret>`: 256 random bits of secret,
 * stored as a SHA-256 digest (the secret is random, so a slow hash adds nothing), compared in
 * constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { SecretTokens, type TokenKind } from "@huddle/domain/accounts/SecretTokens"
import { Effect, Layer, Option } from "effect"

const shape = /^(hk|hs|hr)_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/

const digest = (token: string) => createHash("sha256").update(token).digest()

export const make = SecretTokens.of({
  issue: (kind: TokenKind) =>
    Effect.sync(() => {
      const prefix = `${kind}_${randomBytes(6).toString("hex")}`
      const token = `${prefix}_${randomBytes(32).toString("base64url")}`
      return { token, prefix, lastFour: token.slice(-4), hash: digest(token).toString("hex") }
    }),
  prefixOf: (kind, token) => {
    const match = shape.exec(token)
    return match && match[1] === kind ? Option.some(`${kind}_${match[2]}`) : Option.none()
  },
  matches: (token, storedHash) =>
    Effect.sync(() => {
      const expected = Buffer.from(storedHash, "hex")
      const actual = digest(token)
      return expected.length === actual.length && timingSafeEqual(expected, actual)
    })
})

export const layer = Layer.succeed(SecretTokens, make)
