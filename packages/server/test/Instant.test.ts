/** Instants in query strings (`shared/Instant.ts`): every real one read back exactly; none that does not exist. */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, FastCheck } from "effect"
import { parse } from "../src/shared/Instant.js"

const at = (text: string) => {
  const instant = parse(text)
  return instant === undefined ? undefined : DateTime.formatIso(instant)
}

describe("an instant in a query string", () => {
  it.prop("reads back every instant written in ISO 8601, to the millisecond", [
    FastCheck.date({ min: new Date("1000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true })
  ], ([date]) => {
    expect(at(date.toISOString())).toBe(date.toISOString())
  })

  it("takes February 29th in leap years only, and the date's own case and separators", () => {
    expect(at("2024-02-29")).toBe("2024-02-29T00:00:00.000Z")
    expect(at("2000-02-29")).toBe("2000-02-29T00:00:00.000Z")
    expect(at("2023-02-29")).toBeUndefined()
    expect(at("1900-02-29")).toBeUndefined()
    expect(at("2026-04-31")).toBeUndefined()
    expect(at("2026-01-01t10:30z")).toBe("2026-01-01T10:30:00.000Z")
    expect(at("2026-01-01 10:30")).toBe("2026-01-01T10:30:00.000Z")
    expect(at("2026-01-01T01:00:00+02:00")).toBe("2025-12-31T23:00:00.000Z")
    expect(at("2026-01-01T24:00")).toBeUndefined()
  })
})
