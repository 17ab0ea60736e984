/**
 * The model providers configured in this deployment, by name. Adapters implement one per wire
 * protocol (OpenAI-compatible Chat Completions, Anthropic Messages, offline).
 */
import { Context, Data, type Duration, type Effect, type Option, type Scope, Stream } from "effect"
import type { Pull } from "../shared/Streams.js"
import type { Embedded, EmbeddingRefused, EmbeddingRequest } from "./Embedding.js"
import type { ModelChunk, ModelRequest } from "./Model.js"
import type { ProviderKind } from "./ProviderSupport.js"

/**
 * A provider could not answer. `retryable` failures (429, 5xx, connection errors, timeouts) may
 * be retried, after `retryAfter` when the provider said so; the others go straight to fallback.
 */
export class ProviderFailure extends Data.TaggedError("ProviderFailure")<{
  readonly provider: string
  readonly model: string
  readonly reason: "rate_limited" | "server_error" | "connection" | "timeout" | "bad_response" | "rejected"
  readonly retryable: boolean
  readonly retryAfter?: Duration.Duration | undefined
  readonly status?: number | undefined
  readonly message: string
}> {}

export interface Provider {
  readonly name: string
  /** Its wire protocol, which decides the options it can take (`ProviderSupport`). */
  readonly kind: ProviderKind
  /** Streams one model call. Interrupting the stream aborts the upstream request. */
  readonly stream: (request: ModelRequest) => Stream.Stream<ModelChunk, ProviderFailure>
  /**
   * The same call as a pull, in the caller's scope (closing it aborts the request): what the
   * router pulls when a provider has it, without a stream's stages; `stream` is this pull made a
   * stream. Providers without it are pulled through their stream. An opened call must give up at
   * `request.deadline` (the router does not race its pulls against it).
   */
  readonly open?: ((request: ModelRequest) => Effect.Effect<Pull<ModelChunk, ProviderFailure>, never, Scope.Scope>) | undefined
  /**
   * Embeds the request's inputs with one of its `embedding` models, whole (not streamed);
   * absent on a provider that makes no embeddings (Anthropic's), whose catalog may then name
   * no embedding model. Interrupting it aborts the upstream request.
   */
  readonly embed?: ((request: EmbeddingRequest) => Effect.Effect<Embedded, ProviderFailure | EmbeddingRefused>) | undefined
}

/** A provider whose call is a pull (`open`), with its `stream` made of that pull. */
export const opened = (provider: Omit<Provider, "stream" | "open"> & { readonly open: NonNullable<Provider["open"]> }): Provider => ({
  ...provider,
  stream: (request) => Stream.fromPull(provider.open(request))
})

export interface Service {
  readonly get: (name: string) => Option.Option<Provider>
}

export class ModelProviders extends Context.Tag("@huddle/domain/ModelProviders")<ModelProviders, Service>() {}
