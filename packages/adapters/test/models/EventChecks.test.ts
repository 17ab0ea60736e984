/**
 * The providers check each event's JSON by hand on the hot path and fall back to their schema
 * only for what the hand-written check refuses. That is right only if the check accepts exactly
 * what the schema accepts: these properties compare them on values built to be valid, nearly
 * valid, and wrong in every field.
 */
import { describe, expect, it } from "@effect/vitest"
import { isMessagesEvent, MessagesEvent } from "@huddle/adapters/models/AnthropicEvents"
import { ChatCompletionChunk, isChatCompletionChunk } from "@huddle/adapters/models/OpenAiCompatibleProvider"
import { Either, FastCheck as fc, Schema } from "effect"

/** A value of the wrong kind (or a number that is not a count) for any field. */
const wild: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.string({ maxLength: 3 }),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(1.5, -1, 2 ** 53, 2 ** 53 - 1, 1e21),
  fc.boolean(),
  fc.constantFrom([], {}, ["x"], [{}])
)
/** Mostly the valid arbitrary, sometimes anything. */
const maybe = (valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> => fc.oneof({ arbitrary: valid, weight: 5 }, { arbitrary: wild, weight: 1 })
const optionalRecord = (fields: Record<string, fc.Arbitrary<unknown>>) => maybe(fc.record(fields, { requiredKeys: [] }))
/** Nearly always the valid arbitrary: for the later fields, so that valid events stay common. */
const rarely = (valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> => fc.oneof({ arbitrary: valid, weight: 20 }, { arbitrary: wild, weight: 1 })
/** As JSON.parse would give it. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? "null")

const agree = (arbitrary: fc.Arbitrary<unknown>, check: (u: unknown) => boolean, schema: Schema.Schema<any, any>) => {
  const decode = Schema.decodeUnknownEither(schema)
  const runs = 3000
  let valid = 0
  fc.assert(
    fc.property(arbitrary.map(asJson), (value) => {
      const accepted = Either.isRight(decode(value))
      if (accepted) valid++
      expect(check(value), JSON.stringify(value)).toBe(accepted)
    }),
    { numRuns: runs }
  )
  // The arbitraries must also produce valid values, or the comparison proves little.
  expect(valid).toBeGreaterThan(runs / 20)
}

describe("the hand-written event checks", () => {
  it("isChatCompletionChunk accepts exactly what ChatCompletionChunk decodes (property)", () => {
    const nullableString = maybe(fc.oneof(fc.constant(null), fc.string({ maxLength: 3 })))
    const count = maybe(fc.nat(100))
    const toolCall = optionalRecord({
      index: count,
      id: nullableString,
      type: fc.constant("function"),
      function: maybe(fc.oneof(fc.constant(null), fc.record({ name: nullableString, arguments: nullableString }, { requiredKeys: [] })))
    })
    const delta = maybe(fc.oneof(
      fc.constant(null),
      fc.record({
        role: fc.constant("assistant"),
        content: nullableString,
        tool_calls: maybe(fc.oneof(fc.constant(null), fc.array(toolCall, { maxLength: 3 })))
      }, { requiredKeys: [] })
    ))
    const choice = optionalRecord({ index: fc.nat(3), delta, finish_reason: nullableString, logprobs: wild })
    const chunk = optionalRecord({
      id: fc.string({ maxLength: 5 }),
      object: fc.constant("chat.completion.chunk"),
      choices: maybe(fc.oneof(fc.constant(null), fc.array(choice, { maxLength: 3 }))),
      usage: maybe(fc.oneof(
        fc.constant(null),
        fc.record({
          prompt_tokens: count,
          completion_tokens: count,
          total_tokens: count,
          prompt_tokens_details: rarely(fc.oneof(fc.constant(null), fc.record({ cached_tokens: maybe(fc.oneof(fc.constant(null), fc.nat(100))) }, { requiredKeys: [] })))
        }, { requiredKeys: [] })
      )),
      error: wild
    })
    agree(chunk, isChatCompletionChunk, ChatCompletionChunk)
  })

  it("isMessagesEvent accepts exactly what MessagesEvent decodes (property)", () => {
    const optionalCount = maybe(fc.oneof(fc.constant(null), fc.nat(100)))
    const tokenCounts = optionalRecord({
      input_tokens: optionalCount,
      output_tokens: optionalCount,
      cache_creation_input_tokens: optionalCount,
      cache_read_input_tokens: optionalCount
    })
    const event = optionalRecord({
      type: maybe(fc.constantFrom("message_start", "content_block_delta", "message_delta", "message_stop", "error", "ping")),
      message: optionalRecord({ id: fc.string({ maxLength: 3 }), usage: tokenCounts }),
      delta: optionalRecord({
        type: maybe(fc.constantFrom("text_delta", "input_json_delta", "thinking_delta", "signature_delta")),
        text: maybe(fc.string({ maxLength: 3 })),
        partial_json: rarely(fc.string({ maxLength: 3 })),
        thinking: rarely(fc.string({ maxLength: 3 })),
        signature: rarely(fc.string({ maxLength: 3 })),
        stop_reason: maybe(fc.oneof(fc.constant(null), fc.string({ maxLength: 3 }))),
        stop_sequence: rarely(fc.oneof(fc.constant(null), fc.string({ maxLength: 3 })))
      }),
      content_block: rarely(fc.record({
        type: rarely(fc.constantFrom("text", "tool_use", "thinking", "redacted_thinking")),
        id: rarely(fc.string({ maxLength: 3 })),
        name: rarely(fc.string({ maxLength: 3 })),
        thinking: rarely(fc.string({ maxLength: 3 })),
        signature: rarely(fc.string({ maxLength: 3 })),
        data: rarely(fc.string({ maxLength: 3 })),
        input: fc.constant({})
      }, { requiredKeys: [] })),
      usage: tokenCounts,
      index: rarely(fc.nat(3)),
      error: optionalRecord({ type: maybe(fc.string({ maxLength: 3 })), message: maybe(fc.string({ maxLength: 3 })) })
    })
    agree(event, isMessagesEvent, MessagesEvent)
  })
})
