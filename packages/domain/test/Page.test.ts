import * as Page from "@huddle/domain/Page"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"

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
