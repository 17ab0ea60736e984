import { describe, expect, it } from "@effect/vitest"
import { exampleOf } from "@huddle/adapters/models/JsonSchemaExample"

const hints = { text: "What is the weather in Paris?" }

describe("exampleOf", () => {
  it("builds an object with its properties, strings from the question, enum and const values", () => {
    const schema = {
      type: "object",
      properties: {
        city: { type: "string" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        kind: { const: "forecast" },
        days: { type: "integer", minimum: 3, maximum: 7 },
        ratio: { type: "number", exclusiveMinimum: 0, maximum: 0.5 },
        urgent: { type: "boolean" },
        when: { type: "string", format: "date-time" }
      },
      required: ["city", "unit", "kind", "days"],
      additionalProperties: false
    }
    expect(exampleOf(schema, hints)).toEqual({
      city: "What is the weather in Paris?",
      unit: "celsius",
      kind: "forecast",
      days: 3,
      ratio: 0.25,
      urgent: true,
      when: "2024-01-01T00:00:00Z"
    })
  })

  it("honours array bounds, string lengths, multipleOf, nested objects, anyOf with null and local $refs", () => {
    const schema = {
      type: "object",
      $defs: { tag: { type: "object", properties: { label: { type: "string", maxLength: 4 } }, required: ["label"] } },
      properties: {
        tags: { type: "array", items: { $ref: "#/$defs/tag" }, minItems: 2, maxItems: 3 },
        none: { type: "array", items: { type: "string" }, maxItems: 0 },
        code: { type: "string", minLength: 40 },
        step: { type: "integer", minimum: 7, multipleOf: 5 },
        below: { type: "number", maximum: -2 },
        maybe: { anyOf: [{ type: "null" }, { type: "integer", minimum: 1 }] },
        pair: { type: "array", prefixItems: [{ type: "boolean" }, { type: "null" }] }
      },
      required: ["tags", "none", "code", "step", "below", "maybe", "pair"]
    }
    expect(exampleOf(schema, hints)).toEqual({
      tags: [{ label: "What" }, { label: "What" }],
      none: [],
      code: "What is the weather in Paris?...........",
      step: 10,
      below: -2,
      maybe: 1,
      pair: [true, null]
    })
  })

  it("ends on a recursive schema, leaving deep optional properties out, and is the same every time", () => {
    const schema = {
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
      required: ["name"]
    }
    const value = exampleOf(schema, hints)
    expect(value).toEqual({ name: hints.text, children: [{ name: hints.text }] })
    expect(exampleOf(schema, hints)).toEqual(value)
  })

  it("merges allOf and gives {} for an object without properties", () => {
    const schema = { allOf: [{ type: "object", properties: { a: { type: "integer" } }, required: ["a"] }, { properties: { b: { type: "boolean" } }, required: ["b"] }] }
    expect(exampleOf(schema, hints)).toEqual({ a: 0, b: true })
    expect(exampleOf({ type: "object" }, hints)).toEqual({})
  })
})
