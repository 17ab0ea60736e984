/**
 * Anthropic's Messages stream read: each server-sent event checked (a written-out check for the hot
 * path, the schema for anything it does not accept), then turned into the model's chunks — text,
 * tool-call and thinking deltas (with their signatures) as they come, one `Usage` and the `Finish`
 * (Anthropic's own stop reason, and the stop sequence met) at the end. An `error` event
 * mid-stream fails the stream like the equivalent HTTP status would.
 */
import { type ModelChunk, Usage } from "@huddle/domain/models/Model"
import { ProviderFailure } from "@huddle/domain/models/ModelProviders"
import { Either, Schema } from "effect"
import type { Interpreter } from "./UpstreamExchange.js"
import * as UpstreamFailures from "./UpstreamFailures.js"

const Count = Schema.NonNegativeInt
const OptionalCount = Schema.optional(Schema.NullOr(Count))

const TokenCounts = Schema.Struct({
  input_tokens: OptionalCount,
  output_tokens: OptionalCount,
  cache_creation_input_tokens: OptionalCount,
  cache_read_input_tokens: OptionalCount
})

export const MessagesEvent = Schema.Struct({
  type: Schema.String,
  index: Schema.optional(Count),
  message: Schema.optional(Schema.Struct({ usage: Schema.optional(TokenCounts) })),
  content_block: Schema.optional(Schema.Struct({
    type: Schema.String,
    id: Schema.optional(Schema.String),
    name: Schema.optional(Schema.String),
    /** A `thinking` block's opening text and signature (normally empty: they stream as deltas). */
    thinking: Schema.optional(Schema.String),
    signature: Schema.optional(Schema.String),
    /** A `redacted_thinking` block's encrypted content. */
    data: Schema.optional(Schema.String)
  })),
  delta: Schema.optional(Schema.Struct({
    type: Schema.optional(Schema.String),
    text: Schema.optional(Schema.String),
    partial_json: Schema.optional(Schema.String),
    thinking: Schema.optional(Schema.String),
    signature: Schema.optional(Schema.String),
    stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
    stop_sequence: Schema.optional(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optional(TokenCounts),
  error: Schema.optional(Schema.Struct({ type: Schema.String, message: Schema.optional(Schema.String) }))
})

const decodeEvent = Schema.decodeUnknownEither(MessagesEvent)

type Event = typeof MessagesEvent.Type

/**
 * `MessagesEvent`'s checks written out, for the hot path: an event it accepts is used as parsed.
 * Anything else goes through the schema, for its verdict and its message; so this check may be
 * stricter than the schema, never looser (the tests compare them).
 */
export const isMessagesEvent = (u: unknown): u is Event => {
  if (!isRecord(u) || typeof u.type !== "string") return false
  const { content_block: block, delta, error, index, message, usage } = u
  if (index !== undefined && !(typeof index === "number" && Number.isSafeInteger(index) && index >= 0)) return false
  if (message !== undefined && !(isRecord(message) && (message.usage === undefined || isTokenCounts(message.usage)))) return false
  if (block !== undefined) {
    if (!isRecord(block) || typeof block.type !== "string" || !isOptionalString(block.id) || !isOptionalString(block.name)) return false
    if (!isOptionalString(block.thinking) || !isOptionalString(block.signature) || !isOptionalString(block.data)) return false
  }
  if (delta !== undefined) {
    if (!isRecord(delta) || !isOptionalString(delta.type) || !isOptionalString(delta.text) || !isOptionalString(delta.partial_json)) return false
    if (!isOptionalString(delta.thinking) || !isOptionalString(delta.signature)) return false
    if (!isOptionalNullableString(delta.stop_reason) || !isOptionalNullableString(delta.stop_sequence)) return false
  }
  if (usage !== undefined && !isTokenCounts(usage)) return false
  return error === undefined || (isRecord(error) && typeof error.type === "string" && isOptionalString(error.message))
}

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === "object" && u !== null && !Array.isArray(u)
const isOptionalString = (u: unknown): boolean => u === undefined || typeof u === "string"
const isOptionalNullableString = (u: unknown): boolean => u === undefined || u === null || typeof u === "string"
const isOptionalCount = (u: unknown): boolean =>
  u === undefined || u === null || (typeof u === "number" && Number.isSafeInteger(u) && u >= 0)
const isTokenCounts = (u: unknown): boolean =>
  isRecord(u) && isOptionalCount(u.input_tokens) && isOptionalCount(u.output_tokens) &&
  isOptionalCount(u.cache_creation_input_tokens) && isOptionalCount(u.cache_read_input_tokens)

/** A call's prompt tokens as reported so far: uncached, and read from or written to Anthropic's cache. */
interface PromptCounts {
  readonly input_tokens?: number | undefined
  readonly cache_read_tokens?: number | undefined
  readonly cache_write_tokens?: number | undefined
}

/** An event's prompt counts over the earlier ones (`message_delta`'s are cumulative; a count it leaves out stays). */
const inputOf = (usage: typeof TokenCounts.Type, earlier: PromptCounts | undefined): PromptCounts => ({
  input_tokens: usage.input_tokens ?? earlier?.input_tokens,
  cache_read_tokens: usage.cache_read_input_tokens ?? earlier?.cache_read_tokens,
  cache_write_tokens: usage.cache_creation_input_tokens ?? earlier?.cache_write_tokens
})

/** The call's `Usage`, when anything was reported; cache counts only when there were some. */
const usageOf = (input: PromptCounts | undefined, output: number | undefined): Usage | undefined => {
  const { cache_read_tokens: read, cache_write_tokens: written, input_tokens } = input ?? {}
  if (input_tokens === undefined && read === undefined && written === undefined && output === undefined) return undefined
  // Counts the event checks have already accepted: not validated again.
  return new Usage({
    input_tokens: input_tokens ?? 0,
    output_tokens: output ?? 0,
    ...(read ? { cache_read_tokens: read } : {}),
    ...(written ? { cache_write_tokens: written } : {})
  }, true)
}

/** The error types of https://docs.anthropic.com/en/api/errors, as failure reasons. */
const errorReason = (type: string): ProviderFailure["reason"] => {
  switch (type) {
    case "rate_limit_error":
      return "rate_limited"
    case "timeout_error":
      return "timeout"
    case "invalid_request_error":
    case "authentication_error":
    case "permission_error":
    case "not_found_error":
    case "request_too_large":
    case "billing_error":
      return "rejected"
    default:
      // overloaded_error, api_error, and whatever is added later
      return "server_error"
  }
}

/** The event in an event's JSON, or the failure it is. */
const eventOf = (call: UpstreamFailures.Call, json: unknown): Event | ProviderFailure => {
  if (isMessagesEvent(json)) return json
  const decoded = decodeEvent(json)
  return Either.isRight(decoded) ? decoded.right : UpstreamFailures.failure(call, "bad_response", `unexpected event: ${decoded.left.message}`)
}

/** A `tool_use` block of the answer: a tool call, or (`index` undefined) the structured answer. */
interface ToolBlock {
  readonly kind: "tool"
  readonly index: number | undefined
  sent: boolean
}

/** A `thinking` block of the answer: `index` counts the answer's thinking blocks. */
interface ThinkingBlock {
  readonly kind: "thinking"
  readonly index: number
}

/**
 * The answer's content blocks by their index in the stream: the chunks each block's start and
 * deltas make (text, tool calls, thinking), numbering tool calls and thinking blocks from 0.
 */
const contentBlocks = (structuredTool: string | undefined) => {
  const blocks = new Map<number, ToolBlock | ThinkingBlock>()
  let calls = 0
  let thoughts = 0
  return {
    start: (event: Event, out: Array<ModelChunk>): void => {
      const block = event.content_block
      if (block === undefined || event.index === undefined) return
      if (block.type === "thinking" || block.type === "redacted_thinking") {
        const index = thoughts++
        blocks.set(event.index, { kind: "thinking", index })
        out.push(
          block.type === "redacted_thinking"
            ? { _tag: "ThinkingDelta", index, redacted: block.data ?? "" }
            : { _tag: "ThinkingDelta", index, thinking: block.thinking ?? "", ...(block.signature ? { signature: block.signature } : {}) }
        )
        return
      }
      if (block.type !== "tool_use") return
      if (structuredTool !== undefined && block.name === structuredTool) {
        blocks.set(event.index, { kind: "tool", index: undefined, sent: false })
      } else {
        const index = calls++
        blocks.set(event.index, { kind: "tool", index, sent: false })
        out.push({ _tag: "ToolCallDelta", index, id: block.id, name: block.name, arguments: "" })
      }
    },
    delta: (event: Event, out: Array<ModelChunk>): void => {
      const delta = event.delta
      const block = event.index === undefined ? undefined : blocks.get(event.index)
      switch (delta?.type) {
        case "input_json_delta": {
          const piece = delta.partial_json
          if (block?.kind !== "tool" || !piece) return
          block.sent = true
          out.push(block.index === undefined ? { _tag: "Delta", text: piece } : { _tag: "ToolCallDelta", index: block.index, arguments: piece })
          return
        }
        case "thinking_delta":
          if (block?.kind === "thinking" && delta.thinking) out.push({ _tag: "ThinkingDelta", index: block.index, thinking: delta.thinking })
          return
        case "signature_delta":
          if (block?.kind === "thinking" && delta.signature) out.push({ _tag: "ThinkingDelta", index: block.index, signature: delta.signature })
          return
        case "text_delta":
          // Under a forced structured answer, any text beside it would break the JSON.
          if (delta.text && structuredTool === undefined) out.push({ _tag: "Delta", text: delta.text })
          return
      }
    },
    stop: (event: Event, out: Array<ModelChunk>): void => {
      const block = event.index === undefined ? undefined : blocks.get(event.index)
      // A tool without parameters may stream no input at all: its arguments are still an object.
      if (block?.kind === "tool" && !block.sent) {
        block.sent = true
        out.push(block.index === undefined ? { _tag: "Delta", text: "{}" } : { _tag: "ToolCallDelta", index: block.index, arguments: "{}" })
      }
    }
  }
}

/**
 * What one call's events make: text and tool-call deltas as they come, usage and stop reason at
 * the end. With `structuredTool`, that forced tool's input is the answer's text.
 */
export const interpreter = (call: UpstreamFailures.Call, structuredTool: string | undefined): Interpreter => {
  let events = 0
  let done = false
  let finish: string | undefined
  let stopSequence: string | undefined
  let input: PromptCounts | undefined
  let output: number | undefined
  const blocks = contentBlocks(structuredTool)
  return {
    event: ({ data, event: name }, out) => {
      events++
      const json = UpstreamFailures.parseJson(call, data)
      if (json instanceof ProviderFailure) return json
      const event = eventOf(call, json)
      if (event instanceof ProviderFailure) return event
      switch (event.type) {
        case "message_start": {
          const usage = event.message?.usage
          if (usage) {
            input = inputOf(usage, input)
            output = usage.output_tokens ?? output
          }
          break
        }
        case "content_block_start":
          blocks.start(event, out)
          break
        case "content_block_delta":
          blocks.delta(event, out)
          break
        case "content_block_stop":
          blocks.stop(event, out)
          break
        case "message_delta": {
          if (event.delta?.stop_reason) finish = event.delta.stop_reason
          if (event.delta?.stop_sequence) stopSequence = event.delta.stop_sequence
          if (event.usage) {
            input = inputOf(event.usage, input)
            output = event.usage.output_tokens ?? output
          }
          break
        }
        case "message_stop":
          done = true
          break
        case "error": {
          const type = event.error?.type ?? "api_error"
          return UpstreamFailures.failure(call, errorReason(type), `${type}: ${event.error?.message ?? "error event in the stream"}`)
        }
        default:
          // ping, and event types added later (the API's versioning
          // policy allows new ones).
          break
      }
      return name === "message_stop"
    },
    end: (out) => {
      if (events === 0) return UpstreamFailures.failure(call, "bad_response", "the response held no server-sent events")
      if (!done && finish === undefined) {
        return UpstreamFailures.failure(call, "connection", "the stream ended before the answer was complete")
      }
      const usage = usageOf(input, output)
      if (usage !== undefined) out.push({ _tag: "Usage", usage })
      // The forced structured-answer tool is the answer, not a call the client should make.
      const reason = structuredTool !== undefined && finish === "tool_use" ? "end_turn" : finish ?? "end_turn"
      out.push(stopSequence === undefined ? { _tag: "Finish", reason } : { _tag: "Finish", reason, stopSequence })
      return undefined
    }
  }
}
