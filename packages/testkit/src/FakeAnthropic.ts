/**
 * A fake Anthropic Messages server: a real HTTP server on a free loopback port that answers
 * `POST /v1/messages` from a queue of scripts, streaming (`stream: true`: `message_start`,
 * `content_block_start`, `ping`, `content_block_delta`…, `content_block_stop`, `message_delta`,
 * `message_stop`) or not (one `message` JSON).
 *
 * ```ts
 * const fake = await FakeAnthropic.start()
 * fake.enqueue({ answer: "Hello there", usage: { input_tokens: 12, output_tokens: 3 } })
 * fake.enqueue({ toolUses: [{ name: "get_weather", input: { city: "Paris" } }] }) // stop_reason "tool_use"
 * fake.enqueue({ thinking: [{ thinking: "Let me see.", signature: "sig" }], answer: "Paris" })
 * fake.enqueue({ answer: "one two", stopSequence: "three" }) // stop_reason "stop_sequence"
 * // point a client at fake.url (the API base, without /v1)
 * await fake.stop()
 * ```
 */
import type { Effect, Scope } from "effect"
import * as FakeAnswers from "./FakeAnswers.js"
import * as FakeUpstream from "./FakeUpstream.js"

export type { Reply } from "./FakeAnswers.js"
export type { Disconnect, RecordedRequest } from "./FakeUpstream.js"

export interface Usage {
  readonly input_tokens: number
  readonly output_tokens: number
  /** Prompt tokens written to and read from Anthropic's prompt cache (sent in `message_start`). */
  readonly cache_creation_input_tokens?: number
  readonly cache_read_input_tokens?: number
}

/** A scripted answer; every field is optional. */
export interface Answer extends FakeAnswers.AnswerFaults {
  /** Default: `"Hello from the fake upstream."` */
  readonly answer?: string
  /** How many pieces to split the answer into (default: one per word), or the pieces themselves. */
  readonly chunks?: number | ReadonlyArray<string>
  /** Default: the estimated prompt tokens of the request, and one token per piece. */
  readonly usage?: Usage
  /** Default `"end_turn"`. */
  readonly stopReason?: string
  /** Send an `error` event after this many pieces, then end the response. */
  readonly errorAfterChunks?: { readonly after: number; readonly type: string; readonly message: string }
  /** End the stream after `message_delta` without `message_stop`. */
  readonly omitMessageStop?: boolean
  /**
   * `tool_use` blocks after the text (with no text block when `answer` is not given), their
   * input streamed as `input_json_delta` pieces of about `pieceLength` characters (default 8).
   * The default stop reason becomes `"tool_use"`.
   */
  readonly toolUses?: ReadonlyArray<ToolUse>
  /**
   * Thinking blocks before the text: a `thinking` block streams its text as `thinking_delta`
   * pieces of about `pieceLength` characters (default 8), then its `signature_delta`; a
   * `redacted_thinking` block comes whole in its `content_block_start`.
   */
  readonly thinking?: ReadonlyArray<Thinking>
  /** The stop sequence the answer met; the default stop reason becomes `"stop_sequence"`. */
  readonly stopSequence?: string
}

export type Thinking =
  | { readonly thinking: string; readonly signature: string; readonly pieceLength?: number }
  | { readonly redacted: string }

export interface ToolUse {
  /** Default `toolu_fake<n>`. */
  readonly id?: string
  readonly name: string
  readonly input: unknown
  readonly pieceLength?: number
}

export type Script = Answer | FakeAnswers.Reply

export interface Options extends FakeUpstream.ProviderOptions<Script> {
  /** When set, a request without `x-api-key: <apiKey>` gets a 401 (which echoes the key it was sent). */
  readonly apiKey?: string
}

export type FakeAnthropic = FakeUpstream.FakeServer<Script>

export const defaultAnswer = "Hello from the fake upstream."

const error = (status: number, type: string, message: string, headers?: Readonly<Record<string, string>>): FakeAnswers.Reply => ({
  status,
  body: { type: "error", error: { type, message } },
  ...(headers === undefined ? {} : { headers })
})

/** 429 `rate_limit_error`, with `retry-after` when given. */
export const rateLimited = (retryAfter?: string): FakeAnswers.Reply =>
  error(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", retryAfter === undefined ? undefined : { "retry-after": retryAfter })

/** 529 `overloaded_error` by default, or 500 `api_error`. */
export const overloaded = (status = 529): FakeAnswers.Reply =>
  error(status, status === 529 ? "overloaded_error" : "api_error", status === 529 ? "Overloaded" : "Internal server error")

export const badRequest = (message = "messages: field required"): FakeAnswers.Reply => error(400, "invalid_request_error", message)

const event = (name: string, data: string) => `event: ${name}\ndata: ${data}\n\n`

interface MessagesBody {
  readonly model?: unknown
  readonly stream?: unknown
}

let sequence = 0

const toolUseEvents = (use: ToolUse & { readonly id: string }, index: number): string => {
  const json = JSON.stringify(use.input)
  const size = Math.max(1, use.pieceLength ?? 8)
  const pieces: Array<string> = []
  for (let at = 0; at < json.length; at += size) pieces.push(json.slice(at, at + size))
  return event(
    "content_block_start",
    JSON.stringify({ type: "content_block_start", index, content_block: { type: "tool_use", id: use.id, name: use.name, input: {} } })
  ) +
    pieces.map((piece) =>
      event("content_block_delta", JSON.stringify({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } }))
    ).join("") +
    event("content_block_stop", JSON.stringify({ type: "content_block_stop", index }))
}

const thinkingEvents = (block: Thinking, index: number): string => {
  const start = (content_block: object) => event("content_block_start", JSON.stringify({ type: "content_block_start", index, content_block }))
  const delta = (d: object) => event("content_block_delta", JSON.stringify({ type: "content_block_delta", index, delta: d }))
  const stop = event("content_block_stop", JSON.stringify({ type: "content_block_stop", index }))
  if ("redacted" in block) return start({ type: "redacted_thinking", data: block.redacted }) + stop
  const size = Math.max(1, block.pieceLength ?? 8)
  const pieces: Array<string> = []
  for (let at = 0; at < block.thinking.length; at += size) pieces.push(block.thinking.slice(at, at + size))
  return start({ type: "thinking", thinking: "", signature: "" }) +
    pieces.map((thinking) => delta({ type: "thinking_delta", thinking })).join("") +
    delta({ type: "signature_delta", signature: block.signature }) +
    stop
}

const thinkingContent = (block: Thinking) =>
  "redacted" in block ? { type: "redacted_thinking", data: block.redacted } : { type: "thinking", thinking: block.thinking, signature: block.signature }

const answer = async (script: Answer, request: FakeUpstream.RecordedRequest, exchange: FakeUpstream.Exchange): Promise<void> => {
  const body = (typeof request.body === "object" && request.body !== null ? request.body : {}) as MessagesBody
  const modelName = typeof body.model === "string" ? body.model : "fake-model"
  const model = JSON.stringify(modelName)
  const toolUses = (script.toolUses ?? []).map((use) => ({ ...use, id: use.id ?? `toolu_fake${++sequence}` }))
  const withText = toolUses.length === 0 || script.answer !== undefined
  const pieces = withText ? FakeUpstream.splitAnswer(script.answer ?? defaultAnswer, script.chunks) : []
  const usage = script.usage ?? { input_tokens: FakeUpstream.promptTokensOf(request.body), output_tokens: pieces.length }
  const stopReasonName = script.stopReason ?? (script.stopSequence !== undefined ? "stop_sequence" : toolUses.length > 0 ? "tool_use" : "end_turn")
  const stopReason = JSON.stringify(stopReasonName)
  const stopSequence = JSON.stringify(script.stopSequence ?? null)
  const thinking = script.thinking ?? []
  // Thinking blocks come first; the text block, then the tool uses, follow them.
  const textIndex = thinking.length
  const id = `msg_fake${++sequence}`

  if (!(await FakeAnswers.awaitFirstByte(script, exchange))) return

  if (body.stream !== true) {
    return FakeAnswers.sendWhole(script, exchange, {
      malformed: `{"id":"${id}","type":"message","content":[`,
      body: () =>
        JSON.stringify({
          id,
          type: "message",
          role: "assistant",
          model: modelName,
          content: [
            ...thinking.map(thinkingContent),
            ...(withText ? [{ type: "text", text: pieces.join("") }] : []),
            ...toolUses.map((use) => ({ type: "tool_use", id: use.id, name: use.name, input: use.input }))
          ],
          stop_reason: stopReasonName,
          stop_sequence: script.stopSequence ?? null,
          usage
        })
    })
  }

  const errorAfter = script.errorAfterChunks
  return FakeAnswers.sendStream(script, exchange, {
    head: event(
      "message_start",
      `{"type":"message_start","message":{"id":"${id}","type":"message","role":"assistant","model":${model},"content":[],"stop_reason":null,"stop_sequence":null,"usage":${JSON.stringify({ ...usage, output_tokens: 1 })}}}`
    ) +
      thinking.map(thinkingEvents).join("") +
      (withText ? event("content_block_start", `{"type":"content_block_start","index":${textIndex},"content_block":{"type":"text","text":""}}`) : "") +
      event("ping", `{"type": "ping"}`),
    pieces: pieces.length,
    piece: (i) =>
      event("content_block_delta", `{"type":"content_block_delta","index":${textIndex},"delta":{"type":"text_delta","text":${JSON.stringify(pieces[i])}}}`),
    tail: () =>
      (withText ? event("content_block_stop", `{"type":"content_block_stop","index":${textIndex}}`) : "") +
      toolUses.map((use, i) => toolUseEvents(use, textIndex + (withText ? 1 : 0) + i)).join("") +
      event(
        "message_delta",
        `{"type":"message_delta","delta":{"stop_reason":${stopReason},"stop_sequence":${stopSequence}},"usage":{"output_tokens":${usage.output_tokens}}}`
      ) +
      (script.omitMessageStop ? "" : event("message_stop", `{"type":"message_stop"}`)),
    malformed: `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"unterminated\n\n`,
    cut: errorAfter && {
      after: errorAfter.after,
      text: () => event("error", JSON.stringify({ type: "error", error: { type: errorAfter.type, message: errorAfter.message } }))
    }
  })
}

export const start = (options: Options = {}): Promise<FakeAnthropic> =>
  FakeUpstream.startProvider<Answer>(options, {
    emptyScript: {},
    route: (method, path) => method === "POST" && path === "/v1/messages",
    unauthorized: (apiKey, request) => {
      const sent = request.headers["x-api-key"]
      return sent === apiKey ? undefined : error(401, "authentication_error", `invalid x-api-key: ${String(sent ?? "")}`)
    },
    answer
  })

/** `start` as a scoped Effect: the server stops when the scope closes. */
export const scoped = (options: Options = {}): Effect.Effect<FakeAnthropic, never, Scope.Scope> => FakeUpstream.scoped(() => start(options))
