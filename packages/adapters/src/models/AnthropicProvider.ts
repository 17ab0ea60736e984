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
 * wants. Input tokens arrive in `message_start` and output tokens (cumulative) in
 * `message_delta`; one `Usage` combining both is emitted at the end, before `Finish`. An `error`
 * event mid-stream fails the stream like the equivalent HTTP status would. No retries here: the
 * domain's router owns them.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { type ModelChunk, type ModelRequest, Usage } from "@huddle/domain/Model"
import type { Provider, ProviderFailure } from "@huddle/domain/ports/ModelProviders"
import { Duration, Effect, Either, Redacted, Schema, Stream } from "effect"
import * as Upstream from "./Upstream.js"

export interface Options {
  /** Default `anthropic`. */
  readonly name?: string
  /** The API root, without `/v1` (default `https://api.anthropic.com`). */
  readonly baseUrl?: string
  readonly apiKey: Redacted.Redacted
  /** Longest wait for the response headers, and longest silence between chunks of the stream. */
  readonly timeout: Duration.DurationInput
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

const MessagesEvent = Schema.Struct({
  type: Schema.String,
  message: Schema.optional(Schema.Struct({ usage: Schema.optional(TokenCounts) })),
  delta: Schema.optional(Schema.Struct({
    type: Schema.optional(Schema.String),
    text: Schema.optional(Schema.String),
    stop_reason: Schema.optional(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optional(TokenCounts),
  error: Schema.optional(Schema.Struct({ type: Schema.String, message: Schema.optional(Schema.String) }))
})

const decodeEvent = Schema.decodeUnknownEither(MessagesEvent)

interface State {
  events: number
  done: boolean
  finish: string | undefined
  input: number | undefined
  output: number | undefined
}

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

const none: ReadonlyArray<ModelChunk> = []

const interpret = (call: Upstream.Call, state: State, data: string): Effect.Effect<ReadonlyArray<ModelChunk>, ProviderFailure> => {
  state.events++
  return Effect.flatMap(Upstream.parseJson(call, data), (json) => {
    const decoded = decodeEvent(json)
    if (Either.isLeft(decoded)) {
      return Effect.fail(Upstream.failure(call, "bad_response", `unexpected event: ${decoded.left.message}`))
    }
    const event = decoded.right
    switch (event.type) {
      case "message_start": {
        const usage = event.message?.usage
        if (usage) {
          state.input = inputOf(usage) ?? state.input
          state.output = usage.output_tokens ?? state.output
        }
        return Effect.succeed(none)
      }
      case "content_block_delta": {
        const text = event.delta?.type === "text_delta" ? event.delta.text : undefined
        return Effect.succeed(text ? [{ _tag: "Delta", text }] : none)
      }
      case "message_delta": {
        if (event.delta?.stop_reason) state.finish = event.delta.stop_reason
        if (event.usage) {
          state.input = inputOf(event.usage) ?? state.input
          state.output = event.usage.output_tokens ?? state.output
        }
        return Effect.succeed(none)
      }
      case "message_stop":
        state.done = true
        return Effect.succeed(none)
      case "error": {
        const type = event.error?.type ?? "api_error"
        return Effect.fail(Upstream.failure(call, errorReason(type), `${type}: ${event.error?.message ?? "error event in the stream"}`))
      }
      default:
        // ping, content_block_start/stop, and event types added later (the API's versioning
        // policy allows new ones).
        return Effect.succeed(none)
    }
  })
}

const ending = (call: Upstream.Call, state: State): Stream.Stream<ModelChunk, ProviderFailure> => {
  if (state.events === 0) return Stream.fail(Upstream.failure(call, "bad_response", "the response held no server-sent events"))
  if (!state.done && state.finish === undefined) {
    return Stream.fail(Upstream.failure(call, "connection", "the stream ended before the answer was complete"))
  }
  const tail: Array<ModelChunk> = []
  if (state.input !== undefined || state.output !== undefined) {
    tail.push({ _tag: "Usage", usage: new Usage({ input_tokens: state.input ?? 0, output_tokens: state.output ?? 0 }) })
  }
  tail.push({ _tag: "Finish", reason: state.finish ?? "end_turn" })
  return Stream.fromIterable(tail)
}

/** A provider over the `HttpClient` in context. */
export const make = (options: Options): Effect.Effect<Provider, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const name = options.name ?? "anthropic"
    const timeout = Duration.decode(options.timeout)
    const baseUrl = (options.baseUrl ?? "https://api.anthropic.com").replace(/\/+$/, "")
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) =>
        request.pipe(
          HttpClientRequest.prependUrl(baseUrl),
          HttpClientRequest.accept("text/event-stream"),
          // `x-api-key` is among the header names @effect/platform redacts in traces.
          HttpClientRequest.setHeaders({ "x-api-key": Redacted.value(options.apiKey), "anthropic-version": apiVersion })
        )
      ),
      HttpClient.withScope
    )

    const stream = (request: ModelRequest): Stream.Stream<ModelChunk, ProviderFailure> => {
      const call: Upstream.Call = { provider: name, model: request.model.id, secret: options.apiKey, timeout }
      const system = request.messages.filter((message) => message.role === "system").map((message) => message.content).join("\n\n")
      const body = {
        model: request.model.upstream_model ?? request.model.id,
        max_tokens: request.maxOutputTokens,
        stream: true,
        ...(system.length > 0 ? { system } : {}),
        // Tools are not passed through to Anthropic: a tool result reaches it as the user's text.
        messages: request.messages.flatMap(({ content, role }) =>
          role === "system" ? [] : [{ role: role === "tool" ? "user" : role, content }]
        ),
        // Anthropic's range is 0–1 where OpenAI's is 0–2.
        ...(request.temperature === undefined ? {} : { temperature: Math.min(1, Math.max(0, request.temperature)) })
      }
      const http = HttpClientRequest.post("/v1/messages").pipe(HttpClientRequest.bodyUnsafeJson(body))
      return Stream.unwrapScoped(Effect.map(Upstream.openEventStream(client, call, http), (response) => {
        const state: State = { events: 0, done: false, finish: undefined, input: undefined, output: undefined }
        return Upstream.events(call, response).pipe(
          Stream.takeUntil((event) => event.event === "message_stop"),
          Stream.mapEffect((event) => interpret(call, state, event.data)),
          Stream.flattenIterables,
          Stream.concat(Stream.suspend(() => ending(call, state)))
        )
      }))
    }

    return { name, stream } satisfies Provider
  })
