/**
 * Models: the catalog that maps tiers to models, and the shape of a model call as every
 * provider adapter sees it.
 */
import { Schema } from "effect"
import { ModelTier } from "./Preferences.js"

export const ProviderName = Schema.String.pipe(Schema.minLength(1))

export class CatalogModel extends Schema.Class<CatalogModel>("CatalogModel")({
  /** The id clients use (`offline-economy`, `gpt-4o-mini` …). */
  id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128)),
  tier: ModelTier,
  /** Which configured provider serves it: `offline`, `openai`, `anthropic`, or a named OpenAI-compatible server. */
  provider: ProviderName,
  /** The model name sent upstream; defaults to `id`. */
  upstream_model: Schema.optional(Schema.String),
  /** Credits per 1,000 input and output tokens (integers or fractions; charges round up). */
  price: Schema.Struct({ input_per_1k: Schema.NonNegative, output_per_1k: Schema.NonNegative }),
  context_window: Schema.Int.pipe(Schema.positive()),
  max_output_tokens: Schema.Int.pipe(Schema.positive())
}) {}

export class ModelCatalog extends Schema.Class<ModelCatalog>("ModelCatalog")({
  models: Schema.NonEmptyArray(CatalogModel)
}) {}

export const ChatRole = Schema.Literal("system", "user", "assistant")
export type ChatRole = typeof ChatRole.Type

export interface ChatMessage {
  readonly role: ChatRole
  readonly content: string
}

export class Usage extends Schema.Class<Usage>("Usage")({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int
}) {}

/** One call to one model. */
export interface ModelRequest {
  readonly model: CatalogModel
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  readonly maxOutputTokens: number
}

/** What a provider streams back: text deltas, then (somewhere) usage, then the end. */
export type ModelChunk =
  | { readonly _tag: "Delta"; readonly text: string }
  | { readonly _tag: "Usage"; readonly usage: Usage }
  | { readonly _tag: "Finish"; readonly reason: string }

/** Rough token count for budgeting before a call (about four characters a token). */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/** The charge for a usage, rounded up to whole credits. */
export const costOf = (model: CatalogModel, usage: { readonly input_tokens: number; readonly output_tokens: number }): number =>
  Math.ceil((usage.input_tokens * model.price.input_per_1k + usage.output_tokens * model.price.output_per_1k) / 1000)
