/**
 * Anthropic's stream dialect on events no offline answer has: thinking (with its signature and a
 * redacted block), text after it, a tool call, cache usage, and a failure after the stream
 * began; and the whole message built from the same events.
 */
import type { Event } from "@huddle/domain/answers/Completions"
import { CatalogModel, Usage } from "@huddle/domain/models/Model"
import { Chunk } from "effect"
import { describe, expect, it } from "vitest"
import { Blocks, stopReasonOf } from "@huddle/server/anthropic/MessageResponse"
import * as MessagesDialect from "@huddle/server/anthropic/MessagesDialect"
import { UpstreamUnavailable } from "@huddle/domain/shared/Errors"

const model = new CatalogModel({
  id: "claude-fake",
  tier: "standard",
  provider: "anthropic",
  pricing: { input: 1000, output: 2000 },
  context_window: 1000,
  max_output_tokens: 100
})

const events: ReadonlyArray<Event> = [
  { _tag: "Answering", model, failed: [] },
  { _tag: "ThinkingDelta", index: 0, thinking: "Let me think" },
  { _tag: "ThinkingDelta", index: 0, thinking: " hard." },
  { _tag: "ThinkingDelta", index: 0, signature: "sig-1" },
  { _tag: "ThinkingDelta", index: 1, redacted: "opaque" },
  { _tag: "Delta", text: "Checking " },
  { _tag: "Delta", text: "the weather." },
  { _tag: "ToolCallDelta", index: 0, id: "toolu_1", name: "get_weather" },
  { _tag: "ToolCallDelta", index: 0, arguments: "{\"city\":" },
  { _tag: "ToolCallDelta", index: 0, arguments: "\"Paris\"}" },
  { _tag: "Finish", reason: "tool_use" },
  {
    _tag: "Settled",
    model,
    usage: new Usage({ input_tokens: 10, output_tokens: 20, cache_read_tokens: 300, cache_write_tokens: 40 }),
    reported: true,
    consumed: true,
    charged: 7
  }
]

/** The SSE text as `[event, data]` pairs. */
const parse = (bytes: ReadonlyArray<Uint8Array>) =>
  bytes.map((b) => new TextDecoder().decode(b)).join("").split("\n\n").filter((frame) => frame.length > 0).map((frame) => {
    const [event, data] = frame.split("\n")
    return [event!.replace("event: ", ""), JSON.parse(data!.replace("data: ", ""))] as const
  })

describe("Anthropic's stream dialect", () => {
  it("writes thinking, text and tool blocks in order, each opened and closed, then the stop reason and cache usage", () => {
    const dialect = MessagesDialect.dialect("msg_1", "claude-sonnet-4-5")
    const frames = parse([...dialect.frames(Chunk.unsafeFromArray(events.slice(0, 3))), ...dialect.frames(Chunk.unsafeFromArray(events.slice(3)))])
    expect(frames.map(([event]) => event)).toEqual([
      "message_start", "ping",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "message_delta", "message_stop"
    ])
    expect(frames[0]![1].message).toMatchObject({ id: "msg_1", model: "claude-fake", role: "assistant", content: [] })
    expect(frames[5]![1]).toEqual({ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig-1" } })
    expect(frames[7]![1]).toEqual({ type: "content_block_start", index: 1, content_block: { type: "redacted_thinking", data: "opaque" } })
    expect(frames[13]![1]).toEqual({ type: "content_block_start", index: 3, content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} } })
    expect(frames[14]![1].delta).toEqual({ type: "input_json_delta", partial_json: "{\"city\":" })
    expect(frames.at(-2)![1]).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { input_tokens: 10, output_tokens: 20, cache_read_input_tokens: 300, cache_creation_input_tokens: 40 }
    })
  })

  it("frames a failure after the stream began as an error event", () => {
    const dialect = MessagesDialect.dialect("msg_2", "economy")
    const [event, data] = parse([dialect.failure(new UpstreamUnavailable({ message: "every model failed" }))])[0]!
    expect(event).toBe("error")
    expect(data).toEqual({ type: "error", error: { type: "api_error", message: "every model failed" } })
  })

  it("builds the same blocks for a whole message", () => {
    const blocks = new Blocks()
    for (const event of events) blocks.add(event)
    expect(blocks.done()).toEqual([
      { type: "thinking", thinking: "Let me think hard.", signature: "sig-1" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "Checking the weather." },
      { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }
    ])
    expect(stopReasonOf({ _tag: "Finish", reason: "stop", stopSequence: "END" })).toBe("stop_sequence")
    expect(stopReasonOf({ _tag: "Finish", reason: "content_filter" })).toBe("refusal")
  })
})
