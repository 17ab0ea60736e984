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
 *
 * A Messages API request (`options.anthropic`) is not translated: it goes on as the client sent
 * it, with its `anthropic-version` and `anthropic-beta` headers (`AnthropicPassThrough`).
 * Thinking blocks stream back as `ThinkingDelta`s (with their signatures), the stop sequence met
 * as `Finish.stopSequence`, and the stop reason as Anthropic gave it.
 *
 * The request's mapping is `AnthropicWire`; the stream's reading, `AnthropicEvents`.
 */
import type { ModelChunk, ModelRequest } from "@huddle/domain/models/Model"
import { opened, type Provider, type ProviderFailure } from "@huddle/domain/models/ModelProviders"
import type { Pull } from "@huddle/domain/shared/Streams"
import { Duration, Effect, Redacted, type Scope } from "effect"
import type { Dispatcher } from "undici"
import { interpreter } from "./AnthropicEvents.js"
import * as AnthropicPassThrough from "./AnthropicPassThrough.js"
import { requestOf } from "./AnthropicWire.js"
import * as Upstream from "./Upstream.js"
import * as UpstreamFailures from "./UpstreamFailures.js"

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
      const call: UpstreamFailures.Call = { provider: name, model: request.model.id, secret: options.apiKey, timeout, deadline: request.deadline }
      const native = request.options?.anthropic
      const { body, structuredTool } = native === undefined
        ? requestOf(request)
        : { body: AnthropicPassThrough.bodyOf(request, native), structuredTool: undefined }
      const sent = native === undefined ? headers : { ...headers, ...AnthropicPassThrough.headersOf(native, apiVersion) }
      return Upstream.modelPull(
        dispatcher,
        call,
        { origin: base.origin, path: base.pathname + base.search, headers: sent, body: JSON.stringify(body) },
        () => interpreter(call, structuredTool)
      )
    }

    return opened({ name, kind: "anthropic", open })
  })
