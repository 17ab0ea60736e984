/**
 * A model provider for the Anthropic Messages API (`POST /v1/messages`, streaming).
 *
 * ```ts
 * const provider = yield* AnthropicProvider.make({
 *   baseUrl: "https://api.anthropic.com", apiKey: Redacted.make(key), timeout: "60 seconds"
 * })
 * ```
 *
 * System messages become the top-level `system` field (joined by blank lines), as the API
 * wants; `stop` becomes `stop_sequences`, `user` (or `safety_identifier`) `metadata.user_id`.
 *
 * Tools: `tools` become Anthropic's `{name, description, input_schema}`; `tool_choice` auto,
 * required, a named tool and none become `{type: "auto" | "any" | "tool" | "none"}`, with
 * `disable_parallel_tool_use` when `parallel_tool_calls` is false. An assistant turn's
 * `tool_calls` become `tool_use` blocks (arguments parsed), `tool` messages `tool_result` blocks
 * of a user turn. Streamed `tool_use` blocks and their `input_json_delta`s come back as
 * `ToolCallDelta`s, and `stop_reason: "tool_use"` is the finish (OpenAI's `tool_calls`).
 *
 * Structured output: a `json_schema` format becomes a forced tool named after the schema whose
 * `input_schema` is the schema, and that tool's input streams back as the answer's text (not as
 * a tool call); `json_object` adds a system instruction to answer with one JSON object only
 * (Anthropic has no JSON mode, so that one rests on the model following it).
 *
 * Input tokens arrive in `message_start` and output tokens (cumulative) in
 * `message_delta`; one `Usage` combining both is emitted at the end, before `Finish`. An `error`
 * event mid-stream fails the stream like the equivalent HTTP status would. No retries here: the
 * domain's router owns them.
 */
import { type CallOptions, type ChatMessage, type ModelChunk, type ModelRequest, type ToolChoice, Usage } from "@huddle/domain/models/Model"
import { opened, type Provider, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import type { Pull } from "@huddle/domain/shared/Streams"
import { Duration, Effect, Either, Redacted, Schema, type Scope } from "effect"
import type { Dispatcher } from "undici"
import * as Upstream from "./Upstream.js"

export interface Options {
  /** Default `anthropic`. */
  readonly name?: string
  /** The API root, without `/v1` (default `https://api.anthropic.com`). */
  readonly baseUrl?: string
  readonly apiKey: Redacted.Redacted
  /** Longest wait for the response headers, and longest silence between chunks of the stream. */
  readonly timeout: Duration.DurationInput
  /** The undici dispatcher to send through; by default one shared by the providers made without one. */
  readonly dispatcher?: Dispatcher | undefined
}

export const apiVersion = "2023-06-01"

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
    name: Schema.optional(Schema.String)
  })),
  delta: Schema.optional(Schema.Struct({
    type: Schema.optional(Schema.String),
    text: Schema.optional(Schema.String),
    partial_json: Schema.optional(Schema.String),
    stop_reason: Schema.optional(Schema.NullOr(Schema.String))
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
  }
  if (delta !== undefined) {
    if (!isRecord(delta) || !isOptionalString(delta.type) || !isOptionalString(delta.text) || !isOptionalString(delta.partial_json)) return false
    if (delta.stop_reason !== undefined && delta.stop_reason !== null && typeof delta.stop_reason !== "string") return false
  }
  if (usage !== undefined && !isTokenCounts(usage)) return false
  return error === undefined || (isRecord(error) && typeof error.type === "string" && isOptionalString(error.message))
}

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === "object" && u !== null && !Array.isArray(u)
const isOptionalString = (u: unknown): boolean => u === undefined || typeof u === "string"
const isOptionalCount = (u: unknown): boolean =>
  u === undefined || u === null || (typeof u === "number" && Number.isSafeInteger(u) && u >= 0)
const isTokenCounts = (u: unknown): boolean =>
  isRecord(u) && isOptionalCount(u.input_tokens) && isOptionalCount(u.output_tokens) &&
  isOptionalCount(u.cache_creation_input_tokens) && isOptionalCount(u.cache_read_input_tokens)

/** Cached prompt tokens are input too (we send no `cache_control`, so they are normally zero). */
const inputOf = (usage: typeof TokenCounts.Type): number | undefined =>
  usage.input_tokens == null
    ? undefined
    : usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0)

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
const eventOf = (call: Upstream.Call, json: unknown): Event | ProviderFailure => {
  if (isMessagesEvent(json)) return json
  const decoded = decodeEvent(json)
  return Either.isRight(decoded) ? decoded.right : Upstream.failure(call, "bad_response", `unexpected event: ${decoded.left.message}`)
}

/** A `tool_use` block of the answer: a tool call, or (`index` undefined) the structured answer. */
interface ToolBlock {
  readonly index: number | undefined
  sent: boolean
}

/**
 * What one call's events make: text and tool-call deltas as they come, usage and stop reason at
 * the end. With `structuredTool`, that forced tool's input is the answer's text.
 */
const interpreter = (call: Upstream.Call, structuredTool: string | undefined): Upstream.Interpreter => {
  let events = 0
  let done = false
  let finish: string | undefined
  let input: number | undefined
  let output: number | undefined
  const blocks = new Map<number, ToolBlock>()
  let calls = 0
  return {
    event: ({ data, event: name }, out) => {
      events++
      const json = Upstream.parseJson(call, data)
      if (json instanceof ProviderFailure) return json
      const event = eventOf(call, json)
      if (event instanceof ProviderFailure) return event
      switch (event.type) {
        case "message_start": {
          const usage = event.message?.usage
          if (usage) {
            input = inputOf(usage) ?? input
            output = usage.output_tokens ?? output
          }
          break
        }
        case "content_block_start": {
          const block = event.content_block
          if (block?.type !== "tool_use" || event.index === undefined) break
          if (structuredTool !== undefined && block.name === structuredTool) {
            blocks.set(event.index, { index: undefined, sent: false })
          } else {
            const index = calls++
            blocks.set(event.index, { index, sent: false })
            out.push({ _tag: "ToolCallDelta", index, id: block.id, name: block.name, arguments: "" })
          }
          break
        }
        case "content_block_delta": {
          if (event.delta?.type === "input_json_delta") {
            const block = event.index === undefined ? undefined : blocks.get(event.index)
            const piece = event.delta.partial_json
            if (block === undefined || !piece) break
            block.sent = true
            out.push(block.index === undefined ? { _tag: "Delta", text: piece } : { _tag: "ToolCallDelta", index: block.index, arguments: piece })
            break
          }
          // Under a forced structured answer, any text beside it would break the JSON.
          const text = event.delta?.type === "text_delta" && structuredTool === undefined ? event.delta.text : undefined
          if (text) out.push({ _tag: "Delta", text })
          break
        }
        case "content_block_stop": {
          const block = event.index === undefined ? undefined : blocks.get(event.index)
          // A tool without parameters may stream no input at all: its arguments are still an object.
          if (block !== undefined && !block.sent) {
            block.sent = true
            out.push(block.index === undefined ? { _tag: "Delta", text: "{}" } : { _tag: "ToolCallDelta", index: block.index, arguments: "{}" })
          }
          break
        }
        case "message_delta": {
          if (event.delta?.stop_reason) finish = event.delta.stop_reason
          if (event.usage) {
            input = inputOf(event.usage) ?? input
            output = event.usage.output_tokens ?? output
          }
          break
        }
        case "message_stop":
          done = true
          break
        case "error": {
          const type = event.error?.type ?? "api_error"
          return Upstream.failure(call, errorReason(type), `${type}: ${event.error?.message ?? "error event in the stream"}`)
        }
        default:
          // ping, and event types added later (the API's versioning
          // policy allows new ones).
          break
      }
      return name === "message_stop"
    },
    end: (out) => {
      if (events === 0) return Upstream.failure(call, "bad_response", "the response held no server-sent events")
      if (!done && finish === undefined) {
        return Upstream.failure(call, "connection", "the stream ended before the answer was complete")
      }
      if (input !== undefined || output !== undefined) {
        // Counts the event checks have already accepted: not validated again.
        out.push({ _tag: "Usage", usage: new Usage({ input_tokens: input ?? 0, output_tokens: output ?? 0 }, true) })
      }
      // The forced structured-answer tool is the answer, not a call the client should make.
      const reason = structuredTool !== undefined && finish === "tool_use" ? "end_turn" : finish ?? "end_turn"
      out.push({ _tag: "Finish", reason })
      return undefined
    }
  }
}

/**
 * The options Anthropic has a concept for, in its words. `ProviderSupport` has refused the ones
 * it has none for unless they were neutral, and neutral ones need not be sent.
 */
const translatedOptions = (options: CallOptions | undefined) => {
  if (options === undefined) return {}
  const stop = options.stop === undefined ? [] : typeof options.stop === "string" ? [options.stop] : options.stop
  const userId = options.safety_identifier ?? options.user
  return {
    ...(stop.length > 0 ? { stop_sequences: stop } : {}),
    ...(options.top_p === undefined ? {} : { top_p: options.top_p }),
    ...(userId === undefined ? {} : { metadata: { user_id: userId } })
  }
}

/** The system instruction that stands for `response_format: json_object`. */
export const jsonObjectInstruction = "Answer with a single JSON object and nothing else: no prose before or after it, no code fences."

/** Anthropic's tool names allow what OpenAI's function names allow; a schema name may not. */
const toolName = (name: unknown): string => {
  const cleaned = typeof name === "string" ? name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) : ""
  return cleaned.length > 0 ? cleaned : "structured_answer"
}

const toolChoiceOf = (choice: ToolChoice | undefined, parallel: boolean | undefined, hasTools: boolean) => {
  const serial = parallel === false ? { disable_parallel_tool_use: true } : {}
  if (choice === undefined) return hasTools && parallel === false ? { type: "auto", ...serial } : undefined
  if (choice === "none") return { type: "none" }
  if (choice === "auto") return { type: "auto", ...serial }
  if (choice === "required") return { type: "any", ...serial }
  return { type: "tool", name: choice.function.name, ...serial }
}

/** A tool call's arguments as the `input` object Anthropic wants (arguments that are not a JSON object become `{}`). */
const toolInputOf = (args: string): unknown => {
  try {
    const parsed: unknown = JSON.parse(args)
    return isRecord(parsed) ? parsed : {}
  } catch {
    return {}
  }
}

type Block = { readonly type: string; readonly [key: string]: unknown }
interface WireMessage {
  readonly role: "user" | "assistant"
  content: string | Array<Block>
}

/**
 * The conversation in Anthropic's words: tool calls as `tool_use` blocks, tool results as
 * `tool_result` blocks of one user turn (with any user text that follows them), as the API wants
 * every result of a turn's calls in the next user message.
 */
export const messagesOf = (messages: ReadonlyArray<ChatMessage>): ReadonlyArray<WireMessage> => {
  const out: Array<WireMessage> = []
  for (const message of messages) {
    if (message.role === "system") continue
    if (message.role === "assistant" && message.tool_calls !== undefined && message.tool_calls.length > 0) {
      out.push({
        role: "assistant",
        content: [
          ...(message.content.length > 0 ? [{ type: "text", text: message.content }] : []),
          ...message.tool_calls.map((call) => ({ type: "tool_use", id: call.id, name: call.function.name, input: toolInputOf(call.function.arguments) }))
        ]
      })
      continue
    }
    const previous = out[out.length - 1]
    const afterResults = previous?.role === "user" && Array.isArray(previous.content)
    if (message.role === "tool") {
      const block = { type: "tool_result", tool_use_id: message.tool_call_id ?? "", content: message.content }
      if (afterResults) (previous.content as Array<Block>).push(block)
      else out.push({ role: "user", content: [block] })
      continue
    }
    if (message.role === "user" && afterResults) {
      ;(previous.content as Array<Block>).push({ type: "text", text: message.content })
      continue
    }
    out.push({ role: message.role, content: message.content })
  }
  return out
}

/** The request's tools, tool choice and response format in Anthropic's words, and the structured-answer tool if any. */
export const toolsOf = (options: CallOptions | undefined) => {
  const format = options?.response_format
  if (format?.type === "json_schema") {
    // ProviderSupport refuses `tools` beside it: the forced tool is the only one.
    const name = toolName(format.json_schema.name)
    const description = typeof format.json_schema.description === "string"
      ? format.json_schema.description
      : "Give the answer as this tool's input, which follows the required JSON schema."
    return {
      structuredTool: name,
      body: {
        tools: [{ name, description, input_schema: format.json_schema.schema ?? { type: "object" } }],
        tool_choice: { type: "tool", name }
      }
    }
  }
  const tools = options?.tools ?? []
  const choice = toolChoiceOf(options?.tool_choice, options?.parallel_tool_calls, tools.length > 0)
  return {
    structuredTool: undefined,
    body: {
      ...(tools.length === 0 ? {} : {
        tools: tools.map(({ function: fn }) => ({
          name: fn.name,
          ...(fn.description === undefined ? {} : { description: fn.description }),
          input_schema: fn.parameters ?? { type: "object", properties: {} }
        }))
      }),
      // Anthropic refuses a tool choice without tools; without tools, there is nothing to choose.
      ...(choice === undefined || tools.length === 0 ? {} : { tool_choice: choice })
    }
  }
}

/** A provider that sends through undici. */
export const make = (options: Options): Effect.Effect<Provider> =>
  Effect.sync(() => {
    const name = options.name ?? "anthropic"
    const timeout = Duration.decode(options.timeout)
    const base = new URL(`${(options.baseUrl ?? "https://api.anthropic.com").replace(/\/+$/, "")}/v1/messages`)
    const dispatcher = options.dispatcher ?? Upstream.sharedDispatcher()
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
      "x-api-key": Redacted.value(options.apiKey),
      "anthropic-version": apiVersion
    }

    const open = (request: ModelRequest): Effect.Effect<Pull<ModelChunk, ProviderFailure>, never, Scope.Scope> => {
      const call: Upstream.Call = { provider: name, model: request.model.id, secret: options.apiKey, timeout, deadline: request.deadline }
      const instructions = request.messages.filter((message) => message.role === "system").map((message) => message.content)
      if (request.options?.response_format?.type === "json_object") instructions.push(jsonObjectInstruction)
      const system = instructions.join("\n\n")
      const tools = toolsOf(request.options)
      const body = {
        model: request.model.upstream_model ?? request.model.id,
        max_tokens: request.maxOutputTokens,
        stream: true,
        ...(system.length > 0 ? { system } : {}),
        messages: messagesOf(request.messages),
        ...tools.body,
        // Anthropic's range is 0–1 where OpenAI's is 0–2.
        ...(request.temperature === undefined ? {} : { temperature: Math.min(1, Math.max(0, request.temperature)) }),
        ...translatedOptions(request.options)
      }
      return Upstream.modelPull(
        dispatcher,
        call,
        { origin: base.origin, path: base.pathname + base.search, headers, body: JSON.stringify(body) },
        () => interpreter(call, tools.structuredTool)
      )
    }

    return opened({ name, kind: "anthropic", open })
  })
