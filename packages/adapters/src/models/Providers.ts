/**
 * The `ModelProviders` of a deployment: `offline` always; `openai` (any OpenAI-compatible
 * server) when it has an API key; `anthropic` when it has one; and any further
 * OpenAI-compatible servers under names of their own.
 *
 * ```ts
 * // plain options (tests, embedding)
 * Providers.layer({ openai: { apiKey: Redacted.make(key) } })
 * // from the environment (the server)
 * Providers.layerConfig(Providers.fromEnv)
 * ```
 *
 * The HTTP providers send through undici directly, an `Agent` of the layer's own (a keep-alive
 * pool per origin, closed with the layer): the upstream's body is read by undici's handler in
 * plain code, with no HTTP client stream in between (see `Upstream`).
 */
import { ModelProviders, type Provider, type Service } from "@huddle/domain/models/ModelProviders"
import { Config, type ConfigError, Duration, Effect, Layer, Option, Redacted, type Scope } from "effect"
import { Agent } from "undici"
import * as AnthropicProvider from "./AnthropicProvider.js"
import * as OfflineProvider from "./OfflineProvider.js"
import * as OpenAiCompatibleProvider from "./OpenAiCompatibleProvider.js"

export const defaultOpenAiBaseUrl = "https://api.openai.com/v1"
export const defaultAnthropicBaseUrl = "https://api.anthropic.com"
/** Time to first byte, and longest silence mid-stream. */
export const defaultTimeout = Duration.seconds(60)

export interface Options {
  /** Enables `openai`. */
  readonly openai?: { readonly apiKey: Redacted.Redacted; readonly baseUrl?: string | undefined } | undefined
  /** Enables `anthropic`. */
  readonly anthropic?: { readonly apiKey: Redacted.Redacted; readonly baseUrl?: string | undefined } | undefined
  /** More OpenAI-compatible servers (Ollama, vLLM …), each under its own `name`. */
  readonly servers?: ReadonlyArray<Omit<OpenAiCompatibleProvider.Options, "timeout"> & { readonly timeout?: Duration.DurationInput }>
  /** Default 60 seconds. */
  readonly timeout?: Duration.DurationInput | undefined
}

/** The names of the providers `options` enable, `offline` included. */
export const names = (options: Options): ReadonlyArray<string> => [
  OfflineProvider.name,
  ...(options.openai ? ["openai"] : []),
  ...(options.anthropic ? ["anthropic"] : []),
  ...(options.servers ?? []).map((server) => server.name)
]

export const make = (options: Options): Effect.Effect<Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const timeout = options.timeout ?? defaultTimeout
    const dispatcher = yield* Effect.acquireRelease(Effect.sync(() => new Agent()), (agent) => Effect.promise(() => agent.destroy()))
    const providers = new Map<string, Provider>([[OfflineProvider.name, OfflineProvider.make]])
    if (options.openai) {
      providers.set("openai", yield* OpenAiCompatibleProvider.make({
        name: "openai",
        baseUrl: options.openai.baseUrl ?? defaultOpenAiBaseUrl,
        apiKey: options.openai.apiKey,
        timeout,
        dispatcher
      }))
    }
    if (options.anthropic) {
      providers.set("anthropic", yield* AnthropicProvider.make({
        name: "anthropic",
        baseUrl: options.anthropic.baseUrl ?? defaultAnthropicBaseUrl,
        apiKey: options.anthropic.apiKey,
        timeout,
        dispatcher
      }))
    }
    for (const server of options.servers ?? []) {
      providers.set(server.name, yield* OpenAiCompatibleProvider.make({ ...server, timeout: server.timeout ?? timeout, dispatcher }))
    }
    return ModelProviders.of({ get: (name) => Option.fromNullable(providers.get(name)) })
  })

export const layer = (options: Options): Layer.Layer<ModelProviders> =>
  Layer.scoped(ModelProviders, make(options))

/** A key that is set but empty counts as unset. */
const optionalKey = (name: string) =>
  Config.option(Config.redacted(name)).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).trim().length > 0))
  )

/**
 * Options from the environment: `OPENAI_API_KEY` (+ `OPENAI_BASE_URL`, default
 * `https://api.openai.com/v1`), `ANTHROPIC_API_KEY` (+ `ANTHROPIC_BASE_URL`, default
 * `https://api.anthropic.com`).
 */
export const fromEnv: Config.Config<Options> = Config.all({
  openaiKey: optionalKey("OPENAI_API_KEY"),
  openaiBaseUrl: Config.withDefault(Config.string("OPENAI_BASE_URL"), defaultOpenAiBaseUrl),
  anthropicKey: optionalKey("ANTHROPIC_API_KEY"),
  anthropicBaseUrl: Config.withDefault(Config.string("ANTHROPIC_BASE_URL"), defaultAnthropicBaseUrl)
}).pipe(Config.map(({ anthropicBaseUrl, anthropicKey, openaiBaseUrl, openaiKey }): Options => ({
  openai: Option.getOrUndefined(Option.map(openaiKey, (apiKey) => ({ apiKey, baseUrl: openaiBaseUrl }))),
  anthropic: Option.getOrUndefined(Option.map(anthropicKey, (apiKey) => ({ apiKey, baseUrl: anthropicBaseUrl })))
})))

export const layerConfig = (config: Config.Config<Options>): Layer.Layer<ModelProviders, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(config, layer))
