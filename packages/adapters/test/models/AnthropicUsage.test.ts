/**
 * The usage an Anthropic stream reports, as the events give it: `message_start` has the prompt's
 * counts, and a `message_delta` may repeat them cumulatively (newer API versions) or carry only
 * the output tokens. Cache reads and writes stay apart from the uncached input.
 */
import { describe, expect, it } from "@effect/vitest"
import { interpreter } from "@huddle/adapters/models/AnthropicEvents"
import type { ModelChunk } from "@huddle/domain/models/Model"
import { Duration } from "effect"

const run = (events: ReadonlyArray<unknown>): Array<ModelChunk> => {
  const read = interpreter({ provider: "anthropic", model: "claude", secret: undefined, timeout: Duration.seconds(5) }, undefined)
  const out: Array<ModelChunk> = []
  for (const event of events) {
    const type = (event as { readonly type: string }).type
    expect(read.event({ event: type, data: JSON.stringify(event), id: undefined }, out)).not.toBeInstanceOf(Error)
  }
  expect(read.end(out)).toBeUndefined()
  return out
}

const start = (usage: unknown) => ({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [], usage } })
const delta = (usage: unknown) => ({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage })
const usageOf = (chunks: ReadonlyArray<ModelChunk>) => chunks.find((chunk) => chunk._tag === "Usage")

describe("Anthropic usage", () => {
  it("keeps message_start's cache counts when message_delta gives only the output", () => {
    const chunks = run([
      start({ input_tokens: 4, output_tokens: 1, cache_creation_input_tokens: 10, cache_read_input_tokens: 500 }),
      delta({ output_tokens: 12 }),
      { type: "message_stop" }
    ])
    expect(usageOf(chunks)).toEqual({ _tag: "Usage", usage: { input_tokens: 4, output_tokens: 12, cache_read_tokens: 500, cache_write_tokens: 10 } })
  })

  it("takes message_delta's cumulative counts over message_start's, field by field", () => {
    const chunks = run([
      start({ input_tokens: 4, output_tokens: 1, cache_creation_input_tokens: null, cache_read_input_tokens: 0 }),
      delta({ input_tokens: 6, output_tokens: 9, cache_creation_input_tokens: 30, cache_read_input_tokens: null }),
      { type: "message_stop" }
    ])
    expect(usageOf(chunks)).toEqual({ _tag: "Usage", usage: { input_tokens: 6, output_tokens: 9, cache_write_tokens: 30 } })
  })

  it("reports no cache counts when there were none, and no usage when nothing was counted", () => {
    expect(usageOf(run([start({ input_tokens: 7, output_tokens: 1 }), delta({ output_tokens: 2 }), { type: "message_stop" }])))
      .toEqual({ _tag: "Usage", usage: { input_tokens: 7, output_tokens: 2 } })
    expect(usageOf(run([start({}), delta({}), { type: "message_stop" }]))).toBeUndefined()
  })
})
