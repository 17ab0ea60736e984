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
 * The request's pass-through parameters (`tools`, `tool_choice`, `response_format`, `top_p`,
 * `stop`, `seed`, `user`) and the messages' tool calls are sent as they are; the tool-call pieces
 * of `delta.tool_calls` come back as `ToolCallDelta`s.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { type ChatMessage, type ModelChunk, type ModelRequest, Usage } from "@huddle/domain/Model"
import type { Provider, ProviderFailure } from "@huddle/domain/ports/ModelProviders"
import { Duration, Effect, Either, type Redacted, Schema, Stream } from "effect"
import * as Upstream from "./Upstream.js"

export interface Options {
  /** The provider name models refer to in the catalog (`openai`, `ollama` …). */
  readonly name: string
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer …`; local servers often need none. */
  readonly apiKey?: Redacted.Redacted | undefined
  /** Longest wait for the response headers, and longest silence between chunks of the stream. */
  readonly timeout: Duration.DurationInput
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

const ChatCompletionChunk = Schema.Struct({
  choices: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
    delta: Schema.optional(Schema.NullOr(Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ToolCallPiece)))
    }))),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  })))),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({ prompt_tokens: Count, completion_tokens: Count }))),
  // OpenRouter and vLLM report a failure that happens mid-stream as a chunk with `error`.
  error: Schema.optional(Schema.Unknown)
})

const decodeChunk = Schema.decodeUnknownEither(ChatCompletionChunk)

interface State {
  events: number
  done: boolean
  finish: string | undefined
  usage: { readonly prompt_tokens: number; readonly completion_tokens: number } | undefined
}

const none: ReadonlyArray<ModelChunk> = []

const interpret = (call: Upstream.Call, state: State, data: string): Effect.Effect<ReadonlyArray<ModelChunk>, ProviderFailure> => {
  state.events++
  if (data === "[DONE]") {
    state.done = true
    return Effect.succeed(none)
  }
  return Effect.flatMap(Upstream.parseJson(call, data), (json) => {
    const decoded = decodeChunk(json)
    if (Either.isLeft(decoded)) {
      return Effect.fail(Upstream.failure(call, "bad_response", `unexpected chunk: ${decoded.left.message}`))
    }
    const chunk = decoded.right
    if (chunk.error !== undefined && chunk.error !== null) {
      return Effect.fail(Upstream.failure(call, "server_error", `error in the stream: ${Upstream.errorMessageOf(JSON.stringify({ error: chunk.error }))}`))
    }
    if (chunk.usage) state.usage = chunk.usage
    const choice = chunk.choices?.[0]
    if (choice?.finish_reason) state.finish = choice.finish_reason
    const text = choice?.delta?.content
    const calls = choice?.delta?.tool_calls
    if (!calls || calls.length === 0) return Effect.succeed(text ? [{ _tag: "Delta", text }] : none)
    const out: Array<ModelChunk> = text ? [{ _tag: "Delta", text }] : []
    for (const [position, call] of calls.entries()) {
      out.push({
        _tag: "ToolCallDelta",
        index: call.index ?? position,
        id: call.id ?? undefined,
        name: call.function?.name ?? undefined,
        arguments: call.function?.arguments ?? undefined
      })
    }
    return Effect.succeed(out)
  })
}

/** What follows the last event: usage and finish, or a failure when the stream was cut short. */
const ending = (call: Upstream.Call, state: State): Stream.Stream<ModelChunk, ProviderFailure> => {
  if (state.events === 0) return Stream.fail(Upstream.failure(call, "bad_response", "the response held no server-sent events"))
  // Without [DONE] a finish_reason is enough: some servers close the stream right after it.
  if (!state.done && state.finish === undefined) {
    return Stream.fail(Upstream.failure(call, "connection", "the stream ended before the answer was complete"))
  }
  const tail: Array<ModelChunk> = []
  if (state.usage) {
    tail.push({ _tag: "Usage", usage: new Usage({ input_tokens: state.usage.prompt_tokens, output_tokens: state.usage.completion_tokens }) })
  }
  // [DONE] without a finish_reason (some older local servers): the model did stop.
  tail.push({ _tag: "Finish", reason: state.finish ?? "stop" })
  return Stream.fromIterable(tail)
}

/** A message as the wire has it: an assistant turn that only calls tools has `content: null`. */
const wireMessage = ({ content, name, role, tool_call_id, tool_calls }: ChatMessage) => ({
  role,
  content: content.length === 0 && tool_calls !== undefined && tool_calls.length > 0 ? null : content,
  ...(name === undefined ? {} : { name }),
  ...(tool_calls === undefined || tool_calls.length === 0 ? {} : { tool_calls }),
  ...(tool_call_id === undefined ? {} : { tool_call_id })
})

/** A provider over the `HttpClient` in context (the server gives it undici's or fetch's). */
export const make = (options: Options): Effect.Effect<Provider, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const timeout = Duration.decode(options.timeout)
    const baseUrl = options.baseUrl.replace(/\/+$/, "")
    const apiKey = options.apiKey
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) => {
        const prepared = request.pipe(HttpClientRequest.prependUrl(baseUrl), HttpClientRequest.accept("text/event-stream"))
        return apiKey === undefined ? prepared : HttpClientRequest.bearerToken(prepared, apiKey)
      }),
      // The connection belongs to the stream's scope: ending or interrupting the stream aborts it.
      HttpClient.withScope
    )

    const stream = (request: ModelRequest): Stream.Stream<ModelChunk, ProviderFailure> => {
      const call: Upstream.Call = { provider: options.name, model: request.model.id, secret: apiKey, timeout }
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
      const http = HttpClientRequest.post("/chat/completions").pipe(HttpClientRequest.bodyUnsafeJson(body))
      return Stream.unwrapScoped(Effect.map(Upstream.openEventStream(client, call, http), (response) => {
        const state: State = { events: 0, done: false, finish: undefined, usage: undefined }
        return Upstream.events(call, response).pipe(
          // Stop reading at [DONE]: what a server sends after it is not ours to wait for.
          Stream.takeUntil((event) => event.data === "[DONE]"),
          Stream.mapEffect((event) => interpret(call, state, event.data)),
          Stream.flattenIterables,
          Stream.concat(Stream.suspend(() => ending(call, state)))
        )
      }))
    }

    return { name: options.name, stream } satisfies Provider
  })
