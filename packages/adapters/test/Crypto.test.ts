import { NodeSecretTokens, ScryptPasswordHasher } from "@huddle/adapters"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Option, Redacted } from "effect"

describe("ScryptPasswordHasher", () => {
  const hasher = ScryptPasswordHasher.make
  const secret = (password: string) => Redacted.make(password)

  it.effect("verifies the right password and refuses a wrong one", () =>
    Effect.gen(function*() {
      const stored = yield* hasher.hash(secret("correct horse battery staple"))
      expect(stored).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
      expect(stored).not.toContain("correct horse")
      expect(yield* hasher.verify(secret("correct horse battery staple"), stored)).toBe(true)
      expect(yield* hasher.verify(secret("correct horse battery stapl"), stored)).toBe(false)
      expect(yield* hasher.verify(secret("Correct horse battery staple"), stored)).toBe(false)
      expect(yield* hasher.verify(secret(""), stored)).toBe(false)
    }))

  it.effect("salts: two hashes of the same password differ, and both verify", () =>
    Effect.gen(function*() {
      const first = yield* hasher.hash(secret("same password"))
      const second = yield* hasher.hash(secret("same password"))
      expect(first).not.toBe(second)
      expect(yield* hasher.verify(secret("same password"), first)).toBe(true)
      expect(yield* hasher.verify(secret("same password"), second)).toBe(true)
    }))

  it.effect("treats composed and decomposed accents as the same password", () =>
    Effect.gen(function*() {
      const stored = yield* hasher.hash(secret("caf\u00e9 au lait"))
      expect(yield* hasher.verify(secret("cafe\u0301 au lait"), stored)).toBe(true)
    }))

  it.effect("answers false, without failing, for a malformed stored string", () =>
    Effect.gen(function*() {
      const stored = yield* hasher.hash(secret("a fine password"))
      const [scheme, N, r, p, salt, hash] = stored.split("$")
      const otherSalt = Buffer.from("another salt....").toString("base64")
      const malformed = [
        "",
        "garbage",
        "$$$$$",
        `bcrypt$${N}$${r}$${p}$${salt}$${hash}`,
        `${scheme}$${N}$${r}$${p}$${salt}`,
        `${scheme}$${N}$${r}$${p}$${salt}$`,
        `${scheme}$${N}$${r}$${p}$$${hash}`,
        `${scheme}$${N}$${r}$${p}$${salt}$${hash!.slice(0, 20)}`,
        `${scheme}$${N}$${r}$${p}$${otherSalt}$${hash}`,
        // Tampered parameters: not numbers, not a power of two, beyond the memory limit.
        `${scheme}$abc$${r}$${p}$${salt}$${hash}`,
        `${scheme}$3$${r}$${p}$${salt}$${hash}`,
        `${scheme}$1073741824$${r}$${p}$${salt}$${hash}`,
        `${scheme}$${N}$0$${p}$${salt}$${hash}`
      ]
      for (const candidate of malformed) {
        expect(yield* hasher.verify(secret("a fine password"), candidate), candidate).toBe(false)
      }
    }))
})

describe("NodeSecretTokens", () => {
  const tokens = NodeSecretTokens.make
  const apiKeyShape = /^hk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/
  const sessionShape = /^hs_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/
  const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

  it.effect("issues API-key and session tokens of the documented shape", () =>
    Effect.gen(function*() {
      const key = yield* tokens.issue("hk")
      expect(key.token).toMatch(apiKeyShape)
      expect(key.prefix).toBe(key.token.slice(0, 15))
      expect(key.lastFour).toBe(key.token.slice(-4))
      expect(key.hash).toMatch(/^[0-9a-f]{64}$/)
      expect(key.hash).not.toContain(key.token.slice(16))

      const session = yield* tokens.issue("hs")
      expect(session.token).toMatch(sessionShape)
      expect(session.prefix).toBe(session.token.slice(0, 15))
    }))

  it.effect("prefixOf gives the prefix for the right kind only, and none for anything else", () =>
    Effect.gen(function*() {
      const key = yield* tokens.issue("hk")
      const session = yield* tokens.issue("hs")
      expect(tokens.prefixOf("hk", key.token)).toEqual(Option.some(key.prefix))
      expect(tokens.prefixOf("hs", session.token)).toEqual(Option.some(session.prefix))
      expect(tokens.prefixOf("hs", key.token)).toEqual(Option.none())
      expect(tokens.prefixOf("hk", session.token)).toEqual(Option.none())
      for (
        const garbage of [
          "",
          "hk_",
          key.prefix,
          `Bearer ${key.token}`,
          ` ${key.token}`,
          `${key.token}x`,
          key.token.slice(0, -1),
          key.token.toUpperCase(),
          key.token.replace(/^hk_/, "hx_"),
          `${key.prefix}_${"!".repeat(43)}`
        ]
      ) {
        expect(tokens.prefixOf("hk", garbage), garbage).toEqual(Option.none())
      }
    }))

  it.effect("matches the issued token against its hash, and nothing else", () =>
    Effect.gen(function*() {
      const key = yield* tokens.issue("hk")
      const other = yield* tokens.issue("hk")
      expect(yield* tokens.matches(key.token, key.hash)).toBe(true)
      expect(yield* tokens.matches(other.token, key.hash)).toBe(false)
      expect(yield* tokens.matches(key.token, "not a hex digest")).toBe(false)
      expect(yield* tokens.matches(key.token, "")).toBe(false)
    }))

  it.effect.prop(
    "a token changed in any one character no longer matches",
    [FastCheck.nat(), FastCheck.nat({ max: base64url.length - 2 })],
    ([position, shift]) =>
      Effect.gen(function*() {
        const key = yield* tokens.issue("hk")
        const index = position % key.token.length
        const original = key.token[index]!
        // Some other character of the same alphabet (`hk_…_` positions included).
        const replacement = base64url[(base64url.indexOf(original) + 1 + shift) % base64url.length]!
        expect(replacement).not.toBe(original)
        const changed = key.token.slice(0, index) + replacement + key.token.slice(index + 1)
        expect(yield* tokens.matches(changed, key.hash)).toBe(false)
      }),
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "prefixOf takes the prefix of any well-formed token of its kind",
    [FastCheck.stringMatching(/^[0-9a-f]{12}$/), FastCheck.stringMatching(/^[A-Za-z0-9_-]{43}$/)],
    ([lookup, secretPart]) => {
      expect(tokens.prefixOf("hk", `hk_${lookup}_${secretPart}`)).toEqual(Option.some(`hk_${lookup}`))
      expect(tokens.prefixOf("hs", `hk_${lookup}_${secretPart}`)).toEqual(Option.none())
      expect(tokens.prefixOf("hk", `hk_${lookup}_${secretPart}=`)).toEqual(Option.none())
      expect(tokens.prefixOf("hk", `hk_${lookup}_${secretPart.slice(1)}`)).toEqual(Option.none())
    }
  )

  it.prop(
    "prefixOf of an arbitrary string is none, or the start of a string of a token's length",
    [FastCheck.oneof(FastCheck.string({ maxLength: 80 }), FastCheck.stringMatching(/^hk_[0-9a-fA-F]{10,14}_[\w-]{40,46}$/))],
    ([candidate]) => {
      Option.match(tokens.prefixOf("hk", candidate), {
        onNone: () => expect(apiKeyShape.test(candidate)).toBe(false),
        onSome: (prefix) => {
          expect(candidate).toMatch(apiKeyShape)
          expect(candidate.startsWith(`${prefix}_`)).toBe(true)
        }
      })
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.effect("issues distinct tokens and prefixes", () =>
    Effect.gen(function*() {
      const issued = yield* Effect.all(Array.from({ length: 2_000 }, (_, i) => tokens.issue(i % 2 === 0 ? "hk" : "hs")))
      expect(new Set(issued.map((t) => t.token)).size).toBe(issued.length)
      expect(new Set(issued.map((t) => t.prefix.slice(3))).size).toBe(issued.length)
      expect(new Set(issued.map((t) => t.hash)).size).toBe(issued.length)
    }))
})
