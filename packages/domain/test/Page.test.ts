import * as Page from "@huddle/domain/shared/Page"
import { describe, expect, it } from "@effect/vitest"
import { Either, Encoding, FastCheck, ParseResult, Schema } from "effect"

const rows = FastCheck.array(FastCheck.record({ id: FastCheck.string({ minLength: 1, maxLength: 8 }), n: FastCheck.nat() }), {
  maxLength: 40
})
const limit = FastCheck.integer({ min: 1, max: 50 })

describe("Page.fromRows", () => {
  it.prop("returns at most `limit` rows, a prefix of those fetched", [rows, limit], ([fetched, max]) => {
    const page = Page.fromRows(fetched, max)
    expect(page.data.length).toBeLessThanOrEqual(max)
    expect(page.data).toEqual(fetched.slice(0, max))
  })

  it.prop("has a next cursor exactly when more than `limit` rows were fetched", [rows, limit], ([fetched, max]) => {
    const page = Page.fromRows(fetched, max)
    expect(page.next_cursor === null).toBe(fetched.length <= max)
  })

  it.prop("its next cursor is the id of the last row it returns", [rows, limit], ([fetched, max]) => {
    const page = Page.fromRows(fetched, max)
    if (page.next_cursor !== null) {
      expect(page.data.length).toBe(max)
      expect(page.next_cursor).toBe(page.data[page.data.length - 1]!.id)
    }
  })

  it("pages a limit + 1 fetch", () => {
    const fetched = [{ id: "c" }, { id: "b" }, { id: "a" }]
    expect(Page.fromRows(fetched, 2)).toEqual({ data: [{ id: "c" }, { id: "b" }], next_cursor: "b" })
    expect(Page.fromRows(fetched, 3)).toEqual({ data: fetched, next_cursor: null })
    expect(Page.fromRows([], 1)).toEqual({ data: [], next_cursor: null })
  })
})

describe("Page.Cursor", () => {
  const encode = Schema.encodeSync(Page.Cursor)
  const decode = Schema.decodeUnknownEither(Page.Cursor)
  /** Positions as repositories produce them: ids, and members' emails. */
  const position = FastCheck.oneof(
    FastCheck.stringMatching(/^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/),
    FastCheck.emailAddress(),
    FastCheck.string({ unit: "grapheme", minLength: 1, maxLength: 40 }).filter((at) => !at.includes("\u0000"))
  )

  it.prop("gives back the position it encoded", [position], ([at]) => {
    expect(decode(encode(at))).toEqual(Either.right(at))
  })

  it.prop("accepts only what it produced: a decoded cursor encodes to the same string", [FastCheck.string({ maxLength: 80 })], ([wire]) => {
    Either.match(decode(wire), { onLeft: () => undefined, onRight: (at) => expect(encode(at)).toBe(wire) })
  })

  it("refuses what it did not produce, naming only what is expected", () => {
    const produced = encode("aud_01J0000000000000000000000")
    // The codec's own spelling of a position holding a NUL, which no position holds.
    const nul = Encoding.encodeBase64Url("huddle.cursor.1:aud_\u0000")
    for (const bad of ["garbage", "", "aud_01J0000000000000000000000", `${produced}=`, `${produced}A`, produced.slice(1), "%00", "\u0000", nul]) {
      const refused = decode(bad)
      expect(Either.isLeft(refused), JSON.stringify(bad)).toBe(true)
      if (Either.isLeft(refused)) {
        expect(ParseResult.ArrayFormatter.formatErrorSync(refused.left)).toEqual([
          { _tag: expect.any(String), path: [], message: "must be the next_cursor of a previous page" }
        ])
      }
    }
  })
})
