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
 * wants; `stop` becomes `stop_sequences`, `user` (or `safety_identifier`) `metadata.user_id`. Input tokens arrive in `message_start` and output tokens (cumulative) in
 * `message_delta`; one `Usage` combining both is emitted at the end, before `Finish`. An `error`
 * event mid-stream fails the stream like the equivalent HTTP status would. No retries here: the
 * domain's router owns them.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { type CallOptions, type ModelChunk, type ModelRequest, Usage } from "@huddle/domain/models/Model"
import { type Provider, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import { Duration, Effect, Either, Redacted, Schema, type Stream } from "effect"
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

export const MessagesEvent = Schema.Struct({
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

type Event = typeof MessagesEvent.Type

/**
 * `MessagesEvent`'s checks written out, for the hot path: an event it accepts is used as parsed.
 * Anything else goes through the schema, for its verdict and its message; so this check may be
 * stricter than the schema, never looser (the tests compare them).
 */
export const isMessagesEvent = (u: unknown): u is Event => {
  if (!isRecord(u) || typeof u.type !== "string") return false
  const { delta, error, message, usage } = u
  if (message !== undefined && !(isRecord(message) && (message.usage === undefined || isTokenCounts(message.usage)))) return false
  if (delta !== undefined) {
    if (!isRecord(delta) || !isOptionalString(delta.type) || !isOptionalString(delta.text)) return false
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

/** What one call's events make: text deltas as they come, usage and stop reason at the end. */
const interpreter = (call: Upstream.Call): Upstream.Interpreter => {
  let events = 0
  let done = false
  let finish: string | undefined
  let input: number | undefined
  let output: number | undefined
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
        case "content_block_delta": {
          const text = event.delta?.type === "text_delta" ? event.delta.text : undefined
          if (text) out.push({ _tag: "Delta", text })
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
          // ping, content_block_start/stop, and event types added later (the API's versioning
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
        out.push({ _tag: "Usage", usage: new Usage({ input_tokens: input ?? 0, output_tokens: output ?? 0 }) })
      }
      out.push({ _tag: "Finish", reason: finish ?? "end_turn" })
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
        ...(request.temperature === undefined ? {} : { temperature: Math.min(1, Math.max(0, request.temperature)) }),
        ...translatedOptions(request.options)
      }
      const http = HttpClientRequest.post("/v1/messages").pipe(HttpClientRequest.bodyUnsafeJson(body))
      return Upstream.modelStream(client, call, http, () => interpreter(call))
    }

    return { name, kind: "anthropic", stream } satisfies Provider
  })
