import { Email, EmailInput, Password } from "@huddle/domain/identity/User"
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck, Redacted, Schema } from "effect"

const decodeEmail = Schema.decodeUnknownEither(EmailInput)
const encodeEmail = Schema.encodeEither(EmailInput)
const decodePassword = Schema.decodeUnknownEither(Password)

/** Valid addresses as people type them: any casing, stray spaces around (a control character is refused). */
const typedEmail = FastCheck.record({
  address: FastCheck.emailAddress().filter((address) => address.length <= 254),
  upper: FastCheck.array(FastCheck.boolean(), { minLength: 254, maxLength: 254 }),
  before: FastCheck.stringMatching(/^ {0,3}$/),
  after: FastCheck.stringMatching(/^ {0,3}$/)
}).map(({ address, after, before, upper }) => ({
  address,
  typed: before + [...address].map((c, i) => upper[i] ? c.toUpperCase() : c).join("") + after
}))

describe("EmailInput", () => {
  it.prop("decodes a typed address to its trimmed, lower-cased form", [typedEmail], ([{ address, typed }]) => {
    expect(decodeEmail(typed)).toEqual(Either.right(address.toLowerCase()))
  })

  it.prop("is idempotent: decode(encode(decode(x))) = decode(x)", [typedEmail], ([{ typed }]) => {
    const once = decodeEmail(typed)
    expect(Either.isRight(once)).toBe(true)
    const again = Either.flatMap(once, (email) => Either.flatMap(encodeEmail(email), decodeEmail))
    expect(again).toEqual(once)
  })

  it.prop("decoded addresses are valid stored emails", [typedEmail], ([{ typed }]) => {
    const decoded = decodeEmail(typed)
    expect(Either.isRight(decoded)).toBe(true)
    if (Either.isRight(decoded)) expect(Schema.is(Email)(decoded.right)).toBe(true)
  })

  it.prop(
    "rejects any string without an @",
    [FastCheck.oneof(
      FastCheck.string({ maxLength: 100 }),
      FastCheck.emailAddress().map((address) => address.replace("@", "")),
      FastCheck.emailAddress().map((address) => address.replace("@", " at "))
    ).filter((s) => !s.includes("@"))],
    ([candidate]) => {
      expect(Either.isLeft(decodeEmail(candidate))).toBe(true)
    }
  )

  it("normalises a concrete address and rejects obvious non-addresses", () => {
    expect(decodeEmail("  Ann.Lee@Example.COM ")).toEqual(Either.right("ann.lee@example.com"))
    const controls = ["ann@example.com\n", "\tann@example.com", "ann\u0000@example.com", "ann\ud800@example.com"]
    for (const bad of ["", "ann", "ann@", "@example.com", "ann@example", "ann lee@example.com", "ann@@example.com", ...controls]) {
      expect(Either.isLeft(decodeEmail(bad)), bad).toBe(true)
    }
    expect(Either.isLeft(decodeEmail(`${"a".repeat(250)}@example.com`))).toBe(true)
  })
})

describe("Password", () => {
  it.prop("accepts 8 to 256 characters unchanged", [FastCheck.string({ minLength: 8, maxLength: 256 })], ([password]) => {
    expect(Either.map(decodePassword(password), Redacted.value)).toEqual(Either.right(password))
  })

  it.prop("rejects fewer than 8 characters", [FastCheck.string({ maxLength: 7 })], ([password]) => {
    expect(Either.isLeft(decodePassword(password))).toBe(true)
  })

  it.prop("rejects more than 256 characters", [FastCheck.string({ minLength: 257, maxLength: 600 })], ([password]) => {
    expect(Either.isLeft(decodePassword(password))).toBe(true)
  })

  it("has its bounds exactly at 8 and 256", () => {
    expect(Either.isLeft(decodePassword("x".repeat(7)))).toBe(true)
    expect(Either.isRight(decodePassword("x".repeat(8)))).toBe(true)
    expect(Either.isRight(decodePassword("x".repeat(256)))).toBe(true)
    expect(Either.isLeft(decodePassword("x".repeat(257)))).toBe(true)
  })

  it("counts characters as code points: an emoji is one, not two UTF-16 units", () => {
    expect(Either.isLeft(decodePassword("🔑🔑🔑🔑"))).toBe(true)
    expect(Either.isLeft(decodePassword("🔑".repeat(7)))).toBe(true)
    expect(Either.isRight(decodePassword("🔑".repeat(8)))).toBe(true)
    expect(Either.isRight(decodePassword("🔑".repeat(256)))).toBe(true)
    expect(Either.isLeft(decodePassword("🔑".repeat(257)))).toBe(true)
  })
})
