import { Id, Line, Secret, Text } from "@huddle/domain/shared/WireString"
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck, ParseResult, Redacted, Schema } from "effect"

const messages = <A, I>(schema: Schema.Schema<A, I>, value: unknown): ReadonlyArray<string> =>
  Either.match(Schema.decodeUnknownEither(schema)(value), {
    onLeft: (error) => ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.message),
    onRight: () => []
  })

/** Code points that are text: neither surrogates nor control characters. */
const printable = FastCheck.string({ unit: "grapheme", maxLength: 40 }).filter((s) => !/[\p{Cc}\p{Cs}]/u.test(s))
const control = FastCheck.oneof(FastCheck.integer({ min: 0, max: 0x1f }), FastCheck.integer({ min: 0x7f, max: 0x9f }))
  .map((code) => String.fromCharCode(code))
const loneSurrogate = FastCheck.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code))

describe("wire strings", () => {
  it.prop("accept any well-formed text without control characters, unchanged", [printable], ([text]) => {
    expect(Schema.decodeUnknownEither(Line)(text)).toEqual(Either.right(text))
    expect(Schema.decodeUnknownEither(Text)(text)).toEqual(Either.right(text))
  })

  it("accept mixed scripts, emoji sequences and astral characters", () => {
    for (const text of ["pаypal", "ℌ𝔲𝔡𝔡𝔩𝔢", "👩‍👩‍👧‍👦🏳️‍🌈", "é".normalize("NFD"), "日本語とEnglish", "\u202eevil"]) {
      expect(Schema.decodeUnknownEither(Line)(text), text).toEqual(Either.right(text))
    }
  })

  it.prop("refuse a lone surrogate anywhere", [printable, loneSurrogate, printable], ([before, lone, after]) => {
    for (const schema of [Line, Text]) {
      expect(messages(schema, before + lone + after)).toEqual(["must be well-formed Unicode: it holds a lone surrogate"])
    }
  })

  it.prop("refuse a control character; free-form text allows tab, newline and carriage return", [printable, control], ([text, c]) => {
    const found = `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`
    expect(messages(Line, text + c)).toEqual([`must not contain control characters (found ${found})`])
    expect(messages(Text, c + text)).toEqual(
      ["\t", "\n", "\r"].includes(c) ? [] : [`must not contain control characters other than tab, newline and carriage return (found ${found})`]
    )
  })

  it("bound ids to 64 characters", () => {
    expect(messages(Id, "x".repeat(64))).toEqual([])
    expect(messages(Id, "x".repeat(65))).toEqual(["must be at most 64 characters"])
  })
})

describe("secrets", () => {
  const Pin = Secret(Line.pipe(Schema.minLength(4), Schema.maxLength(8)), "pin must be 4 to 8 characters")

  it("decode to a Redacted value", () => {
    expect(Either.map(Schema.decodeUnknownEither(Pin)("1234"), Redacted.value)).toEqual(Either.right("1234"))
  })

  it.prop("never quote the value in a failure, whatever failed", [
    FastCheck.oneof(
      FastCheck.string({ minLength: 9, maxLength: 300 }),
      FastCheck.string({ maxLength: 3 }),
      FastCheck.tuple(printable, control).map(([s, c]) => `secret${s}${c}`),
      FastCheck.tuple(printable, loneSurrogate).map(([s, c]) => `secret${s}${c}`)
    )
  ], ([value]) => {
    expect(messages(Schema.Struct({ pin: Pin }), { pin: value })).toEqual(["pin must be 4 to 8 characters"])
  })

  it("never quote a value of the wrong type either", () => {
    for (const value of [123456789, { nested: "secret" }, ["secret"], null, true]) {
      expect(messages(Pin, value)).toEqual(["pin must be 4 to 8 characters"])
    }
  })
})
