/**
 * The fuzzer's payload generation ends, whatever the contract's filters. `Arbitrary.make` draws
 * until a custom filter passes; on the chat completion payload (`n` must be 1, a content part's
 * `type` must be "text") that never happened, and `HUDDLE_FUZZ_SEED=22` spun the event loop in
 * fast-check before sending its next batch.
 */
import { Api } from "@huddle/server/Api"
import { ChatCompletionRequest } from "@huddle/server/openai/OpenAiApi"
import { FastCheck as fc, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as PayloadArbitrary from "./payloadArbitrary.js"

/**
 * A predicate that fails the test, rather than hanging it, when it is asked without bound (the
 * bounded draws below ask it a few hundred thousand times at most).
 */
const counted = <A>(predicate: (value: A) => boolean) => {
  let calls = 0
  const filter = (value: A) => {
    if (++calls > 2_000_000) throw new Error("the filter was drawn against without bound")
    return predicate(value)
  }
  return Object.assign(filter, { calls: () => calls })
}

describe("payloads for the fuzzer", () => {
  it("are generated when random values (almost) never pass a filter, wherever it sits", () => {
    const one = counted((n: number) => n === 1)
    const text = counted((part: { readonly type: string }) => part.type === "text")
    const never = counted((_: string) => false)
    const Part = Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) }).pipe(Schema.filter(text))
    const Payload = Schema.Struct({
      n: Schema.optional(Schema.NullOr(Schema.Number.pipe(Schema.filter(one)))),
      content: Schema.Array(Schema.Union(Schema.String, Schema.Array(Part))).pipe(Schema.minItems(1)),
      // a built-in refinement over a custom one: Effect would apply it by rejection too
      name: Schema.String.pipe(Schema.filter(never), Schema.maxLength(3))
    })

    const values = fc.sample(PayloadArbitrary.make(Payload), { seed: 22, numRuns: 200 })

    expect(values).toHaveLength(200)
    expect(values.every((value) => value.content.length >= 1)).toBe(true)
    for (const filter of [one, text, never]) expect(filter.calls()).toBeGreaterThan(0)
  })

  it("are valid when the filters can be met", () => {
    const nonBlank = Schema.String.pipe(Schema.filter((s) => s.trim().length > 0))
    const Payload = Schema.Struct({ input: nonBlank, tags: Schema.Array(nonBlank) })
    const values = fc.sample(PayloadArbitrary.make(Payload), { seed: 1, numRuns: 200 })
    expect(values.filter(Schema.is(Payload)).length).toBeGreaterThan(150)
  })

  it("put hostile text into one free string of a valid payload at a time, never into a literal", () => {
    const Payload = Schema.Struct({
      kind: Schema.Literal("a", "b"),
      name: Schema.String.pipe(Schema.maxLength(20)),
      parts: Schema.Array(Schema.Union(Schema.String, Schema.Struct({ text: Schema.String }))),
      nested: Schema.optional(Schema.Struct({ note: Schema.NullOr(Schema.String) }))
    })
    const payload = { kind: "a", name: "ann", parts: ["x", { text: "y" }], nested: { note: "z" } }
    expect(PayloadArbitrary.textPathsOf(Payload, payload)).toEqual([["name"], ["parts", 0], ["parts", 1, "text"], ["nested", "note"]])
    expect(PayloadArbitrary.spoil(payload, ["parts", 1, "text"], "\u0000")).toEqual({ ...payload, parts: ["x", { text: "\u0000" }] })

    const values = fc.sample(PayloadArbitrary.withHostileText(Payload), { seed: 7, numRuns: 300 })
    const texts = values.flatMap((value) => {
      const decoded = Schema.decodeUnknownOption(Schema.encodedSchema(Payload))(value)
      expect(Option.isSome(decoded), JSON.stringify(value)).toBe(true)
      return Option.match(decoded, { onNone: () => [], onSome: (v) => [v.name, ...v.parts.map((p) => typeof p === "string" ? p : p.text)] })
    })
    const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
    expect(texts.some((text) => loneSurrogate.test(text))).toBe(true)
    expect(texts.some((text) => text.includes("\u0000"))).toBe(true)
    expect(texts.some((text) => /[\u0080-\u009f]/.test(text))).toBe(true)
    expect(texts.some((text) => PayloadArbitrary.mixedScripts.some((mixed) => text.includes(mixed)))).toBe(true)
  })

  it("come from every endpoint of the contract, and are often valid for chat completions", () => {
    const schemas = Object.values(Api.groups).flatMap((group) =>
      Object.values(group.endpoints).flatMap((endpoint: { readonly payloadSchema: Option.Option<Schema.Schema.Any> }) =>
        Option.toArray(endpoint.payloadSchema)
      )
    )
    expect(schemas.length).toBeGreaterThan(10)
    for (const schema of schemas) {
      const payloads = PayloadArbitrary.validPayload(schema as Schema.Schema<unknown, unknown, never>)
      for (const seed of [11, 22, 33]) expect(fc.sample(payloads, { seed, numRuns: 20 })).toHaveLength(20)
    }
    const decode = Schema.decodeUnknownOption(ChatCompletionRequest)
    const chat = fc.sample(PayloadArbitrary.validPayload(ChatCompletionRequest), { seed: 22, numRuns: 100 })
    expect(chat.filter((payload) => Option.isSome(decode(payload))).length).toBeGreaterThan(25)
  })
})
