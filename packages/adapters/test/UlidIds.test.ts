import { describe, expect, it } from "@effect/vitest"
import * as UlidIds from "@huddle/adapters/UlidIds"
import { Effect } from "effect"

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
const format = /^[a-z]{3}_[0-7][0-9a-hjkmnp-tv-z]{25}$/

/** The milliseconds in an id's first ten characters. */
const timeOf = (id: string): number =>
  Array.from(id.slice(id.indexOf("_") + 1, id.indexOf("_") + 11)).reduce((time, char) => time * 32 + alphabet.indexOf(char), 0)

describe("UlidIds", () => {
  it.effect("makes prefixed ULIDs, unique over 100 000, in the order they were made, carrying their time", () =>
    Effect.gen(function*() {
      const ids = yield* UlidIds.make
      const before = Date.now()
      const made: Array<string> = []
      for (let i = 0; i < 100_000; i++) made.push(yield* ids.next(i % 2 === 0 ? "usr" : "key"))
      const after = Date.now()
      expect(made.filter((id) => !format.test(id))).toEqual([])
      expect(made[0]!.startsWith("usr_")).toBe(true)
      expect(made[1]!.startsWith("key_")).toBe(true)
      const bare = made.map((id) => id.slice(4))
      expect(new Set(bare).size).toBe(100_000)
      // Sorting changes nothing: later ids are greater, also within one millisecond.
      expect([...bare].sort()).toEqual(bare)
      expect(made.filter((id) => timeOf(id) < before || timeOf(id) > after)).toEqual([])
    }))

  it("sorts by time across milliseconds, increments within one, and never goes back with the clock", () => {
    let now = 1_700_000_000_000
    // Random digits 0…0 31 (a byte's top five bits), so that the first increment carries.
    const next = UlidIds.generator(() => now, (buffer) => {
      for (let i = 0; i < buffer.length; i++) buffer[i] = i % 16 === 15 ? 0xff : 0
    })
    const first = next()
    expect(timeOf(first)).toBe(now)
    expect(first.slice(10)).toBe("000000000000000z")
    const sameMillisecond = next()
    expect(sameMillisecond).toBe(`${first.slice(0, 10)}0000000000000010`)
    now -= 5_000
    const afterClockWentBack = next()
    expect(afterClockWentBack).toBe(`${first.slice(0, 10)}0000000000000011`)
    now += 10_000
    const later = next()
    expect(timeOf(later)).toBe(now)
    expect(later.slice(10)).toBe("000000000000000z")
    const ids = [first, sameMillisecond, afterClockWentBack, later]
    expect([...ids].sort()).toEqual(ids)
  })

  it("refuses to wrap round when the random part is used up within one millisecond, as ulid does", () => {
    const next = UlidIds.generator(() => 1, (buffer) => buffer.fill(0xff))
    expect(next().slice(10)).toBe("z".repeat(16))
    expect(() => next()).toThrow(/overflowed/)
  })

  it("takes its randomness from a pool, refilled when used up", () => {
    let now = 0
    let fills = 0
    let state = 0x9e3779b9
    const next = UlidIds.generator(() => ++now, (buffer) => {
      fills++
      for (let i = 0; i < buffer.length; i++) {
        // xorshift32: random enough to tell whether every id takes fresh bytes
        state ^= state << 13
        state ^= state >>> 17
        state ^= state << 5
        buffer[i] = state & 0xff
      }
    })
    const ids = Array.from({ length: 1000 }, () => next())
    // 16 bytes an id, 4 KiB a fill.
    expect(fills).toBe(Math.ceil((1000 * 16) / 4096))
    expect(new Set(ids.map((id) => id.slice(10))).size).toBe(1000)
  })
})
