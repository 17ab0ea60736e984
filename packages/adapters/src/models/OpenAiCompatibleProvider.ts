/**
 * A model provider for any OpenAI-compatible Chat Completions server: OpenAI, Ollama, vLLM,
 * llama.cpp, OpenRouter …
 *
 * ```ts
 * const provider = yield* OpenAiCompatibleProvider.make({
 *   name: "ollama", baseUrl: "http://127.0.0.1:11434/v1", timeout: "60 seconds"
 * })
 * ```
 *
 * It always streams, asking for usage in the stream (`stream_options.include_usage`): servers
 * put it in a final chunk of its own (OpenAI), in the last content chunk (vLLM, llama.cpp) or on
 * every chunk (vLLM's continuous usage), so the last one seen wins and `Usage` is emitted at the
 * end, just before `Finish`. It never retries: the domain's router retries and falls back, and
 * a retry here would hide the failures that its policy is built on.
 *
 * `max_tokens` rather than `max_completion_tokens`: every compatible server understands it.
 * The request's pass-through parameters (`CallOptions`: sampling, `stop`, `seed`, tools,
 * `response_format`, `user` …) and the messages' tool calls are sent as they are; the tool-call
 * pieces of `delta.tool_calls` come back as `ToolCallDelta`s. Embeddings go to the server's
 * `/embeddings` (`OpenAiEmbeddings`).
 */
import { type ChatMessage, type ModelChunk, type ModelRequest, Usage } from "@huddle/domain/models/Model"
import { opened, type Provider, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import type { Pull } from "@huddle/domain/shared/Streams"
import { Duration, Effect, Either, Redacted, Schema, type Scope } from "effect"
import type { Dispatcher } from "undici"
import * as OpenAiEmbeddings from "./OpenAiEmbeddings.js"
import * as Upstream from "./Upstream.js"
import type { Interpreter } from "./UpstreamExchange.js"
import * as UpstreamFailures from "./UpstreamFailures.js"

export interface Options {
  /** The provider name models refer to in the catalog (`openai`, `ollama` …). */
  readonly name: string
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer …`; local servers often need none. */
  readonly apiKey?: Redacted.Redacted | undefined
  /** Longest wait for the response headers, and longest silence between chunks of the stream. */
  readonly timeout: Duration.DurationInput
  /** The undici dispatcher to send through; by default one shared by the providers made without one. */
  readonly dispatcher?: Dispatcher | undefined
}

const Count = Schema.NonNegativeInt

const ToolCallPiece = Schema.Struct({
  index: Schema.optional(Count),
  id: Schema.optional(Schema.NullOr(Schema.String)),
  function: Schema.optional(Schema.NullOr(Schema.Struct({
    name: Schema.optional(Schema.NullOr(Schema.String)),
    arguments: Schema.optional(Schema.NullOr(Schema.String))
  })))
})

export const ChatCompletionChunk = Schema.Struct({
  choices: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
    delta: Schema.optional(Schema.NullOr(Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ToolCallPiece)))
    }))),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  })))),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({
    prompt_tokens: Count,
    completion_tokens: Count,
    // OpenAI's prompt caching: how many of the prompt tokens were read from its cache.
    prompt_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ cached_tokens: Schema.optional(Schema.NullOr(Count)) })))
  }))),
  // OpenRouter and vLLM report a failure that happens mid-stream as a chunk with `error`.
  error: Schema.optional(Schema.Unknown)
})

const decodeChunk = Schema.decodeUnknownEither(ChatCompletionChunk)

type CompletionChunk = typeof ChatCompletionChunk.Type

/**
 * `ChatCompletionChunk`'s checks written out, for the hot path: a chunk it accepts is used as
 * parsed. Anything else goes through the schema, for its verdict and its message; so this check
 * may be stricter than the schema, never looser (the tests compare them).
 */
export const isChatCompletionChunk = (u: unknown): u is CompletionChunk => {
  if (!isRecord(u)) return false
  const { choices, usage } = u
  if (choices !== undefined && choices !== null) {
    if (!Array.isArray(choices)) return false
    for (const choice of choices) {
      if (!isRecord(choice) || !isNullableString(choice.finish_reason)) return false
      const delta = choice.delta
      if (delta === undefined || delta === null) continue
      if (!isRecord(delta) || !isNullableString(delta.content)) return false
      const calls = delta.tool_calls
      if (calls === undefined || calls === null) continue
      if (!Array.isArray(calls)) return false
      for (const call of calls) {
        if (!isRecord(call) || (call.index !== undefined && !isCount(call.index)) || !isNullableString(call.id)) return false
        const fn = call.function
        if (fn === undefined || fn === null) continue
        if (!isRecord(fn) || !isNullableString(fn.name) || !isNullableString(fn.arguments)) return false
      }
    }
  }
  return usage === undefined || usage === null || (isRecord(usage) && isCount(usage.prompt_tokens) && isCount(usage.completion_tokens) &&
    (usage.prompt_tokens_details === undefined || usage.prompt_tokens_details === null ||
      (isRecord(usage.prompt_tokens_details) && isNullableCount(usage.prompt_tokens_details.cached_tokens))))
}

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === "object" && u !== null && !Array.isArray(u)
const isCount = (u: unknown): boolean => typeof u === "number" && Number.isSafeInteger(u) && u >= 0
const isNullableString = (u: unknown): boolean => u === undefined || u === null || typeof u === "string"
const isNullableCount = (u: unknown): boolean => u === undefined || u === null || isCount(u)

/** The prompt's cached tokens are read from the cache; the rest are the uncached input (`Usage`). */
const usageOf = (usage: NonNullable<CompletionChunk["usage"]>): Usage => {
  const cached = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, usage.prompt_tokens)
  // Counts the chunk check has already accepted: not validated again.
  return new Usage({
    input_tokens: usage.prompt_tokens - cached,
    output_tokens: usage.completion_tokens,
    ...(cached > 0 ? { cache_read_tokens: cached } : {})
  }, true)
}

/** The chunk in an event's JSON, or the failure it is. */
const chunkOf = (call: UpstreamFailures.Call, json: unknown): CompletionChunk | ProviderFailure => {
  if (isChatCompletionChunk(json)) return json
  const decoded = decodeChunk(json)
  return Either.isRight(decoded) ? decoded.right : UpstreamFailures.failure(call, "bad_response", `unexpected chunk: ${decoded.left.message}`)
}

/** What one call's events make: deltas as they come, usage and finish at the end. */
const interpreter = (call: UpstreamFailures.Call): Interpreter => {
  let events = 0
  let done = false
  let finish: string | undefined
  let usage: CompletionChunk["usage"]
  return {
    event: ({ data }, out) => {
      events++
      if (data === "[DONE]") {
        // Stop reading at [DONE]: what a server sends after it is not ours to wait for.
        done = true
        return true
      }
      const json = UpstreamFailures.parseJson(call, data)
      if (json instanceof ProviderFailure) return json
      const chunk = chunkOf(call, json)
      if (chunk instanceof ProviderFailure) return chunk
      if (chunk.error !== undefined && chunk.error !== null) {
        return UpstreamFailures.failure(call, "server_error", `error in the stream: ${UpstreamFailures.errorMessageOf(JSON.stringify({ error: chunk.error }))}`)
      }
      if (chunk.usage) usage = chunk.usage
      const choice = chunk.choices?.[0]
      if (choice?.finish_reason) finish = choice.finish_reason
      const text = choice?.delta?.content
      if (text) out.push({ _tag: "Delta", text })
      const calls = choice?.delta?.tool_calls
      if (calls) {
        for (let position = 0; position < calls.length; position++) {
          const piece = calls[position]!
          out.push({
            _tag: "ToolCallDelta",
            index: piece.index ?? position,
            id: piece.id ?? undefined,
            name: piece.function?.name ?? undefined,
            arguments: piece.function?.arguments ?? undefined
          })
        }
      }
      return false
    },
    end: (out) => {
      if (events === 0) return UpstreamFailures.failure(call, "bad_response", "the response held no server-sent events")
      // Without [DONE] a finish_reason is enough: some servers close the stream right after it.
      if (!done && finish === undefined) {
        return UpstreamFailures.failure(call, "connection", "the stream ended before the answer was complete")
      }
      if (usage) out.push({ _tag: "Usage", usage: usageOf(usage) })
      // [DONE] without a finish_reason (some older local servers): the model did stop.
      out.push({ _tag: "Finish", reason: finish ?? "stop" })
      return undefined
    }
  }
}

/** A message as the wire has it: an assistant turn that only calls tools has `content: null`. */
const wireMessage = ({ content, name, role, tool_call_id, tool_calls }: ChatMessage) => ({
  role,
  content: content.length === 0 && tool_calls !== undefined && tool_calls.length > 0 ? null : content,
  ...(name === undefined ? {} : { name }),
  ...(tool_calls === undefined || tool_calls.length === 0 ? {} : { tool_calls }),
  ...(tool_call_id === undefined ? {} : { tool_call_id })
})

/** A provider that sends through undici. */
export const make = (options: Options): Effect.Effect<Provider> =>
  Effect.sync(() => {
    const timeout = Duration.decode(options.timeout)
    const base = new URL(`${options.baseUrl.replace(/\/+$/, "")}/chat/completions`)
    const dispatcher = options.dispatcher ?? Upstream.sharedDispatcher()
    const apiKey = options.apiKey
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
      ...(apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(apiKey)}` })
    }

    const open = (request: ModelRequest): Effect.Effect<Pull<ModelChunk, ProviderFailure>, never, Scope.Scope> => {
      const call: UpstreamFailures.Call = { provider: options.name, model: request.model.id, secret: apiKey, timeout, deadline: request.deadline }
      const body = {
        model: request.model.upstream_model ?? request.model.id,
        messages: request.messages.map(wireMessage),
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: request.maxOutputTokens,
        ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        // The pass-through parameters carry their wire names; unset ones are not serialised.
        ...request.options
      }
      return Upstream.modelPull(
        dispatcher,
        call,
        { origin: base.origin, path: base.pathname + base.search, headers, body: JSON.stringify(body) },
        () => interpreter(call)
      )
    }

    const embeddings = new URL(`${options.baseUrl.replace(/\/+$/, "")}/embeddings`)
    const embed = OpenAiEmbeddings.embed({
      provider: options.name,
      url: embeddings,
      headers: { ...headers, accept: "application/json" },
      secret: apiKey,
      timeout,
      dispatcher
    })
    return { ...opened({ name: options.name, kind: "openai-compatible", open }), embed }
  })
