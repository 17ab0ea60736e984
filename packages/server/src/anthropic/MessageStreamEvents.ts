/**
 * The events of a streamed message (`stream: true`), for the OpenAPI document: Anthropic's
 * `event:` names, each with the JSON of its `data:` line. `MessagesDialect` writes them; this
 * schema only describes them.
 */
import { ConsensusReport } from "@huddle/domain/council/ConsensusReport"
import { Schema } from "effect"
import * as AnthropicErrors from "./AnthropicErrors.js"
import { Message, MessageUsage, StopReason } from "./MessagesWire.js"

const Frame = <E extends string, F extends Schema.Struct.Fields>(event: E, fields: F) =>
  Schema.Struct({ event: Schema.Literal(event), data: Schema.Struct({ type: Schema.Literal(event), ...fields }) })

const Block = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thinking"), thinking: Schema.String, signature: Schema.String }),
  Schema.Struct({ type: Schema.Literal("redacted_thinking"), data: Schema.String }),
  Schema.Struct({ type: Schema.Literal("tool_use"), id: Schema.String, name: Schema.String, input: Schema.Struct({}) })
)

const Delta = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thinking_delta"), thinking: Schema.String }),
  Schema.Struct({ type: Schema.Literal("signature_delta"), signature: Schema.String }),
  Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String })
)

export const MessageStreamEvent = Schema.Union(
  Frame("message_start", { message: Message }),
  Frame("content_block_start", { index: Schema.Int, content_block: Block }),
  Frame("content_block_delta", { index: Schema.Int, delta: Delta }),
  Frame("content_block_stop", { index: Schema.Int }),
  Frame("message_delta", {
    delta: Schema.Struct({ stop_reason: StopReason, stop_sequence: Schema.NullOr(Schema.String) }),
    usage: MessageUsage,
    consensus: Schema.optional(ConsensusReport)
  }),
  Frame("message_stop", {}),
  Frame("ping", {}).annotations({ description: "Sent after `message_start` and while the answer is quiet (a council deliberating)" }),
  Schema.Struct({ event: Schema.Literal("error"), data: AnthropicErrors.ErrorBody }).annotations({
    description: "A failure after the stream began; the stream ends"
  })
).annotations({
  identifier: "MessageStreamEvent",
  description:
    "With `stream: true`: Anthropic's events — `message_start`, then each content block's `content_block_start`, deltas and `content_block_stop`, then `message_delta` (stop reason, usage, a council's `consensus`) and `message_stop`; `ping` events keep the connection open."
})
