/**
 * The model catalog of a deployment: read from a JSON file (`HUDDLE_CATALOG`), or the default
 * one, which follows the providers that are configured.
 *
 * File format (plain JSON; the comments below only explain; see also docs/models.md):
 *
 * ```jsonc
 * {
 *   "models": [
 *     {
 *       "id": "gpt-4o-mini",             // what clients ask for; unique
 *       "tier": "economy",               // economy | standard | premium
 *       "provider": "openai",            // offline | openai | anthropic | a named OpenAI-compatible server
 *       "upstream_model": "gpt-4o-mini", // optional: the name sent upstream (default: id)
 *       "pricing": { "input": 150, "output": 600, "cache_read": 75 }, // credits per million tokens
 *       "context_window": 128000,
 *       "max_output_tokens": 16384,
 *       "kind": "chat"                   // optional: chat (the default) | embedding
 *     }
 *   ],
 *   // optional: other names for a model or a tier, globs where `*` is any run of characters
 *   "aliases": [{ "match": "claude-*sonnet*", "target": "standard" }]
 * }
 * ```
 *
 * An `embedding` model answers `POST /v1/embeddings` only (its `context_window` is the most
 * tokens of one input, its output price and `max_output_tokens` go unused) and serves no tier or
 * council; its provider must make embeddings (`offline` and OpenAI-compatible ones do, Anthropic
 * does not): a catalog that names one on `anthropic` is refused at start.
 *
 * Within a tier, models are tried in file order: the first is preferred, the others are the
 * fallbacks; the offline models of a tier that has a configured model stand in for it only with
 * `HUDDLE_OFFLINE_FALLBACK=on`, last (`tierModels`, decision 0034). A file that does not match is refused with a message naming the field
 * (`models[1].pricing.input: Expected a non-negative number, actual -1`), and so is a
 * repeated `id`. The older `"price": {"input_per_1k", "output_per_1k"}` is still read (`LegacyPrice`).
 */
import { readFile } from "node:fs/promises"
import { CatalogModel, ModelAlias, ModelCatalog } from "@huddle/domain/models/Model"
import { Catalog } from "@huddle/domain/models/Catalog"
import { ModelProviders } from "@huddle/domain/models/ModelProviders"
import type { ModelTier } from "@huddle/domain/settings/Preferences"
import { Array as Arr, Config, type ConfigError, Data, Effect, Either, Layer, Option, ParseResult, Redacted, Schema } from "effect"
import * as LegacyPrice from "./LegacyPrice.js"

export class CatalogError extends Data.TaggedError("CatalogError")<{
  /** The file (or other source) the catalog came from. */
  readonly source: string
  readonly message: string
}> {}

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, key) => (typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`), "")

const decodeCatalog = Schema.decodeUnknownEither(ModelCatalog, { errors: "all" })

/** Decodes a parsed catalog; `source` names it in errors. */
export const decode = (json: unknown, source: string): Effect.Effect<ModelCatalog, CatalogError> => {
  const upgraded = LegacyPrice.upgrade(json)
  const decoded = decodeCatalog(upgraded.json)
  if (Either.isLeft(decoded) || upgraded.problems.length > 0) {
    const issues = Either.isLeft(decoded)
      ? ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
        .map((issue) => (issue.path.length > 0 ? `${formatPath(issue.path)}: ${issue.message}` : issue.message))
      : []
    return Effect.fail(new CatalogError({ source, message: `invalid model catalog ${source}: ${[...upgraded.problems, ...issues].join("; ")}` }))
  }
  const seen = new Set<string>()
  for (const [index, model] of decoded.right.models.entries()) {
    if (seen.has(model.id)) {
      return Effect.fail(new CatalogError({ source, message: `invalid model catalog ${source}: models[${index}].id: "${model.id}" appears twice` }))
    }
    seen.add(model.id)
  }
  for (const [index, alias] of (decoded.right.aliases ?? []).entries()) {
    if (!seen.has(alias.target) && !(tiers as ReadonlyArray<string>).includes(alias.target)) {
      return Effect.fail(new CatalogError({ source, message: `invalid model catalog ${source}: aliases[${index}].target: "${alias.target}" is neither a model of the catalog nor a tier` }))
    }
  }
  return Effect.succeed(decoded.right)
}

/** Parses and decodes catalog JSON text. */
export const parse = (text: string, source: string): Effect.Effect<ModelCatalog, CatalogError> =>
  Effect.try({
    try: (): unknown => JSON.parse(text),
    catch: (error) => new CatalogError({ source, message: `invalid model catalog ${source}: not JSON (${error instanceof Error ? error.message : String(error)})` })
  }).pipe(Effect.flatMap((json) => decode(json, source)))

/** Reads a catalog file. */
export const load = (path: string): Effect.Effect<ModelCatalog, CatalogError> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (error) => new CatalogError({ source: path, message: `cannot read the model catalog ${path}: ${error instanceof Error ? error.message : String(error)}` })
  }).pipe(Effect.flatMap((text) => parse(text, path)))

const model = (
  id: string,
  tier: ModelTier,
  provider: string,
  pricing: CatalogModel["pricing"],
  context_window: number,
  max_output_tokens: number
) => new CatalogModel({ id, tier, provider, pricing, context_window, max_output_tokens })

const tiers: ReadonlyArray<ModelTier> = ["economy", "standard", "premium"]

/**
 * Prices are the providers' list prices at one credit per US$0.001 per 1,000 tokens, so credits
 * per million tokens are US$ per million tokens × 1,000. OpenAI reads its cache at a fraction of
 * the input price that depends on the model (½ for the gpt-4o family, ¼ for gpt-4.1) and charges
 * nothing extra to write it (so `cache_write` is the input rate); Anthropic reads at 0.1× and
 * writes (five-minute cache) at 1.25× the input price. gpt-4.1 is premium for its context window
 * (1M tokens), not its price.
 */
const openaiModels: Readonly<Record<ModelTier, CatalogModel>> = {
  economy: model("gpt-4o-mini", "economy", "openai", { input: 150, output: 600, cache_read: 75 }, 128_000, 16_384),
  standard: model("gpt-4o", "standard", "openai", { input: 2500, output: 10_000, cache_read: 1250 }, 128_000, 16_384),
  premium: model("gpt-4.1", "premium", "openai", { input: 2000, output: 8000, cache_read: 500 }, 1_047_576, 32_768)
}

const anthropicModels: Readonly<Record<ModelTier, CatalogModel>> = {
  economy: model("claude-haiku-4-5", "economy", "anthropic", { input: 1000, output: 5000, cache_read: 100, cache_write: 1250 }, 200_000, 64_000),
  standard: model("claude-sonnet-4-5", "standard", "anthropic", { input: 3000, output: 15_000, cache_read: 300, cache_write: 3750 }, 200_000, 64_000),
  premium: model("claude-opus-4-1", "premium", "anthropic", { input: 15_000, output: 75_000, cache_read: 1500, cache_write: 18_750 }, 200_000, 32_000)
}

/** Small but nonzero, so that credit accounting is exercised without any provider. */
const offlineModels: Readonly<Record<ModelTier, CatalogModel>> = {
  economy: model("offline-economy", "economy", "offline", { input: 1000, output: 2000 }, 32_768, 1024),
  standard: model("offline-standard", "standard", "offline", { input: 2000, output: 4000 }, 32_768, 1024),
  premium: model("offline-premium", "premium", "offline", { input: 4000, output: 8000 }, 32_768, 1024)
}

/**
 * Claude's model names as tiers (DESIGN §8), so that Claude Code, which names its models
 * (`claude-sonnet-4-5-20250929`, a small fast `claude-haiku-…`), works on a fresh checkout.
 */
export const claudeAliases: ReadonlyArray<ModelAlias> = [
  new ModelAlias({ match: "claude-*haiku*", target: "economy" }),
  new ModelAlias({ match: "claude-*sonnet*", target: "standard" }),
  new ModelAlias({ match: "claude-*opus*", target: "premium" })
]
/** Embeddings, priced small but not zero so that their accounting is exercised offline too. */
const offlineEmbed = new CatalogModel({ ...model("offline-embed", "economy", "offline", { input: 500, output: 0 }, 8192, 1), kind: "embedding" })

const openaiEmbed = new CatalogModel({ ...model("text-embedding-3-small", "economy", "openai", { input: 20, output: 0 }, 8191, 1), kind: "embedding" })

export interface Enabled {
  readonly openai?: boolean | undefined
  readonly anthropic?: boolean | undefined
}

/**
 * The offline models, with OpenAI's and then Anthropic's ahead of them in each tier when those
 * providers are configured. The offline models stay listed (a client may name them); a tier with
 * a configured model is served by them only as the opt-in fallback (`Catalog.tierModels`).
 */
export const defaultCatalog = (enabled: Enabled = {}): ModelCatalog => {
  const models = tiers.flatMap((tier) => [
    ...(enabled.openai ? [openaiModels[tier]] : []),
    ...(enabled.anthropic ? [anthropicModels[tier]] : []),
    offlineModels[tier]
  ]).concat(enabled.openai ? [openaiEmbed, offlineEmbed] : [offlineEmbed])
  // Never empty: every tier has its offline model.
  return new ModelCatalog({ models: Arr.isNonEmptyReadonlyArray(models) ? models : [offlineModels.economy], aliases: claudeAliases })
}

export interface Options extends Enabled {
  /** A catalog file; without one, `defaultCatalog`. */
  readonly path?: string | undefined
  /**
   * `HUDDLE_OFFLINE_FALLBACK=on`: when every configured model of a tier fails, the offline model
   * answers instead, saying so; off (the default), the caller gets 502 `UPSTREAM_UNAVAILABLE`.
   */
  readonly offlineFallback?: boolean | undefined
}

export const make = (options: Options): Effect.Effect<ModelCatalog, CatalogError> =>
  options.path === undefined ? Effect.succeed(defaultCatalog(options)) : load(options.path)

/** Refuses an embedding model whose configured provider makes no embeddings (Anthropic's): better at start than at its first call. */
const embeddingProviders = (catalog: ModelCatalog, providers: ModelProviders["Type"], source: string): Effect.Effect<void, CatalogError> => {
  for (const [index, entry] of catalog.models.entries()) {
    const provider = providers.get(entry.provider)
    if (entry.kind === "embedding" && Option.isSome(provider) && provider.value.embed === undefined) {
      return Effect.fail(new CatalogError({
        source,
        message: `invalid model catalog ${source}: models[${index}]: "${entry.id}" is an embedding model, and its provider ${entry.provider} makes no embeddings`
      }))
    }
  }
  return Effect.void
}

/** The catalog, routed by the providers configured (`ModelProviders`) and `offlineFallback`. */
export const layer = (options: Options): Layer.Layer<Catalog, CatalogError, ModelProviders> =>
  Layer.effect(
    Catalog,
    Effect.gen(function*() {
      const providers = yield* ModelProviders
      const catalog = yield* make(options)
      yield* embeddingProviders(catalog, providers, options.path ?? "(default)")
      return Catalog.fromCatalog(catalog, {
        configured: (provider) => Option.isSome(providers.get(provider)),
        offlineFallback: options.offlineFallback === true
      })
    })
  )

const isSet = (name: string) =>
  Config.option(Config.redacted(name)).pipe(Config.map(Option.exists((value) => Redacted.value(value).trim().length > 0)))

/**
 * `HUDDLE_CATALOG`, which providers have keys (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`), and
 * `HUDDLE_OFFLINE_FALLBACK` (`on` or `off`, default `off`).
 */
export const fromEnv: Config.Config<Options> = Config.all({
  path: Config.option(Config.string("HUDDLE_CATALOG")),
  openai: isSet("OPENAI_API_KEY"),
  anthropic: isSet("ANTHROPIC_API_KEY"),
  offlineFallback: Config.literal("on", "off")("HUDDLE_OFFLINE_FALLBACK").pipe(Config.withDefault("off" as const))
}).pipe(Config.map(({ anthropic, offlineFallback, openai, path }): Options => ({
  path: Option.getOrUndefined(Option.filter(path, (value) => value.trim().length > 0)),
  openai,
  anthropic,
  offlineFallback: offlineFallback === "on"
})))

export const layerConfig = (config: Config.Config<Options>): Layer.Layer<Catalog, CatalogError | ConfigError.ConfigError, ModelProviders> =>
  Layer.unwrapEffect(Effect.map(config, layer))
