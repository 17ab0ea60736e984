/**
 * Models: the catalog that maps tiers to models, and the shape of a model call as every
 * provider adapter sees it.
 */
import { Schema } from "effect"
import { ModelTier } from "../settings/Preferences.js"

export const ProviderName = Schema.String.pipe(Schema.minLength(1))

/** Credits per million tokens: a whole number, so that a charge is exact before its one rounding. */
const Rate = Schema.NonNegativeInt

/**
 * A model's prices in credits per million tokens (DESIGN §8, Prices): uncached input, output, and
 * prompt tokens read from or written to the provider's cache (each at `input` when absent).
 */
export const ModelPricing = Schema.Struct({
  // Described on the fields, not their type: a type's description would replace its checks' messages.
  input: Schema.propertySignature(Rate).annotations({ description: "Credits per million uncached input tokens" }),
  output: Schema.propertySignature(Rate).annotations({ description: "Credits per million output tokens" }),
  cache_read: Schema.optional(Rate).annotations({ description: "Credits per million prompt tokens read from the provider's cache (default: input)" }),
  cache_write: Schema.optional(Rate).annotations({ description: "Credits per million prompt tokens written to the provider's cache (default: input)" })
}).annotations({ identifier: "ModelPricing" })
export type ModelPricing = typeof ModelPricing.Type

/** What a catalog model answers (see `CatalogModel.kind`). */
export const ModelKind = Schema.Literal("chat", "embedding")
export type ModelKind = typeof ModelKind.Type

export class CatalogModel extends Schema.Class<CatalogModel>("CatalogModel")({
  /** The id clients use (`offline-economy`, `gpt-4o-mini` …). */
  id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128)),
  tier: ModelTier,
  /**
   * What it answers: `chat` (chat completions, tiers, councils) or `embedding` (`POST
   * /v1/embeddings` only). Optional in catalog files: `chat`.
   */
  kind: Schema.optionalWith(ModelKind, { default: () => "chat" as const }),
  /** Which configured provider serves it: `offline`, `openai`, `anthropic`, or a named OpenAI-compatible server. */
  provider: ProviderName,
  /** The model name sent upstream; defaults to `id`. */
  upstream_model: Schema.optional(Schema.String),
  pricing: ModelPricing,
  context_window: Schema.Int.pipe(Schema.positive()),
  max_output_tokens: Schema.Int.pipe(Schema.positive())
}) {}

/**
 * Another name for a model or a tier: a model name a client sends (`claude-sonnet-4-5-20250929`)
 * that matches `match`, a glob where `*` is any run of characters, is served as `target`, a
 * catalog model id or a tier. An exact catalog id wins over every alias; the first alias that
 * matches wins over the others.
 */
export class ModelAlias extends Schema.Class<ModelAlias>("ModelAlias")({
  match: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  target: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))
}) {}

export class ModelCatalog extends Schema.Class<ModelCatalog>("ModelCatalog")({
  models: Schema.NonEmptyArray(CatalogModel),
  aliases: Schema.optional(Schema.Array(ModelAlias))
}) {}

export const ChatRole = Schema.Literal("system", "user", "assistant", "tool")
export type ChatRole = typeof ChatRole.Type

/** A function call an assistant turn asked for (OpenAI's shape). */
export interface ToolCall {
  readonly id: string
  readonly type: "function"
  readonly function: { readonly name: string; readonly arguments: string }
}

export interface ChatMessage {
  readonly role: ChatRole
  readonly content: string
  /** An assistant turn's tool calls. */
  readonly tool_calls?: ReadonlyArray<ToolCall> | undefined
  /** A `tool` turn: the call it answers. */
  readonly tool_call_id?: string | undefined
  /** The participant's name, when the client gave one. */
  readonly name?: string | undefined
  /**
   * `huddle`: put there by Huddle (memories, instructions), not sent by the client. A provider
   * that sends the client's own request on (`AnthropicNative`) adds only these.
   */
  readonly source?: "huddle" | undefined
}

/** A JSON object passed through to a provider as it came (tool parameters, a response format's schema). */
export type JsonObject = { readonly [key: string]: unknown }

export interface ToolDefinition {
  readonly type: "function"
  readonly function: {
    readonly name: string
    readonly description?: string | undefined
    readonly parameters?: JsonObject | undefined
    readonly strict?: boolean | null | undefined
  }
}

export type ToolChoice = "none" | "auto" | "required" | { readonly type: "function"; readonly function: { readonly name: string } }

export type ResponseFormat =
  | { readonly type: "text" }
  | { readonly type: "json_object" }
  | { readonly type: "json_schema"; readonly json_schema: JsonObject }

/** Why a provider cannot take a request's options, naming the parameter (see `ProviderSupport`). */
export interface Refusal {
  readonly param: string
  readonly message: string
}

/**
 * A Messages API request as the client sent it, for an Anthropic upstream to receive unchanged
 * (DESIGN §8): block-level `cache_control`, `thinking`, `top_k` and the rest. The call's own
 * settings still win: `model` (the catalog's upstream name), `max_tokens` (perhaps lowered to
 * what the credits cover), `stream`, a capped `temperature`, and Huddle's system messages
 * (`ChatMessage.source`), added after the client's system blocks. Every other provider gets the
 * request's translation (`ModelRequest.messages` and `CallOptions`) instead.
 */
export interface AnthropicNative {
  /** The client's body as decoded: every field it sent. */
  readonly body: JsonObject
  /** The client's `anthropic-version` and `anthropic-beta` headers (lower-case names), forwarded unchanged. */
  readonly headers: { readonly [name: string]: string }
  /**
   * What only an Anthropic upstream can honour: any other provider refuses the request naming
   * the first of these (`offline: true` ones the offline model can honour, being deterministic).
   */
  readonly unportable: ReadonlyArray<Refusal & { readonly offline?: boolean | undefined }>
}

/** OpenAI's `reasoning_effort` values. */
export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh"

/**
 * Parameters of OpenAI's Chat Completions, under their wire names. OpenAI-compatible providers
 * send them as they are; the others translate what they have a concept for, and a request whose
 * options a provider cannot honour is refused before it reaches that provider (see
 * `ProviderSupport`).
 */
export interface CallOptions {
  readonly top_p?: number | undefined
  readonly stop?: string | ReadonlyArray<string> | undefined
  readonly seed?: number | undefined
  readonly presence_penalty?: number | undefined
  readonly frequency_penalty?: number | undefined
  /** Token id (as a string) to a bias in -100…100. */
  readonly logit_bias?: { readonly [token: string]: number } | undefined
  readonly response_format?: ResponseFormat | undefined
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly tool_choice?: ToolChoice | undefined
  readonly parallel_tool_calls?: boolean | undefined
  readonly reasoning_effort?: ReasoningEffort | undefined
  readonly verbosity?: "low" | "medium" | "high" | undefined
  /** Only the standard tier's (`auto`, `default`): the catalog's prices are that tier's. */
  readonly service_tier?: "auto" | "default" | undefined
  /** An end-user id for the provider's abuse monitoring. */
  readonly user?: string | undefined
  /** OpenAI's newer name for the end-user id of `user`. */
  readonly safety_identifier?: string | undefined
  readonly prompt_cache_key?: string | undefined
  /** A Messages API request, for an Anthropic upstream to receive as it was sent. */
  readonly anthropic?: AnthropicNative | undefined
}

/**
 * A call's tokens by kind. `input_tokens` are the uncached ones (Anthropic's sense); prompt
 * tokens read from a provider's cache are `cache_read_tokens`, and those written to it
 * `cache_write_tokens` (each priced at its own rate, DESIGN §8).
 */
export class Usage extends Schema.Class<Usage>("Usage")({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cache_read_tokens: Schema.optional(Schema.Int),
  cache_write_tokens: Schema.optional(Schema.Int)
}) {}

/** A model of the call that was tried and gave up before any output, and why (`rate_limited (429)`, `connection` …). */
export interface FailedModel {
  readonly model: string
  readonly reason: string
}

/** One call to one model. */
export interface ModelRequest {
  readonly model: CatalogModel
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  readonly maxOutputTokens: number
  readonly options?: CallOptions | undefined
  /**
   * When the whole call must have ended (the router's limit; milliseconds since the epoch, by
   * the wall clock): a provider waiting on a silent upstream gives up then. The router bounds a
   * provider that is only a stream itself; one that is opened (`Provider.open`) must honour it.
   */
  readonly deadline?: number | undefined
  /**
   * The models of this call tried before this one that failed, in order: what a fallback answers
   * in place of (the offline model says so in its answer).
   */
  readonly failed?: ReadonlyArray<FailedModel> | undefined
}

/**
 * A piece of a tool call as it streams (OpenAI's `delta.tool_calls[]`): the first piece of a
 * call carries its `id` and function `name`, the following ones more of its `arguments`.
 */
export interface ToolCallDelta {
  readonly _tag: "ToolCallDelta"
  readonly index: number
  readonly id?: string | undefined
  readonly name?: string | undefined
  readonly arguments?: string | undefined
}

/**
 * A piece of extended thinking as it streams (Anthropic's `thinking` blocks): the first piece of a
 * block opens it, `thinking` pieces add to its text, `signature` (which Anthropic needs back with
 * the block in a later turn) comes last; a `redacted_thinking` block is one piece with `redacted`.
 * `index` counts the answer's thinking blocks from 0.
 */
export interface ThinkingDelta {
  readonly _tag: "ThinkingDelta"
  readonly index: number
  readonly thinking?: string | undefined
  readonly signature?: string | undefined
  readonly redacted?: string | undefined
}

/** How a model's answer ended: its provider's reason (`stop`, `end_turn`, `tool_use` …), and the stop sequence met, if one was. */
export interface Finish {
  readonly _tag: "Finish"
  readonly reason: string
  readonly stopSequence?: string | undefined
}

/** What a provider streams back: thinking, text or tool-call deltas, then (somewhere) usage, then the end. */
export type ModelChunk =
  | { readonly _tag: "Delta"; readonly text: string }
  | ToolCallDelta
  | ThinkingDelta
  | { readonly _tag: "Usage"; readonly usage: Usage }
  | Finish

/** Whether a chunk (or an event that carries them) is the model's output: text, thinking or a tool call. */
export const isOutput = (chunk: { readonly _tag: string }): boolean =>
  chunk._tag === "Delta" || chunk._tag === "ToolCallDelta" || chunk._tag === "ThinkingDelta"


/** Rough token count for budgeting before a call (about four characters a token). */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/** A call's tokens as priced: `Usage`, the cache counts zero when absent. */
export interface PricedUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_read_tokens?: number | undefined
  readonly cache_write_tokens?: number | undefined
}

/** The charge for a usage: its tokens times the model's rates, rounded up to whole credits once. */
export const costOf = (model: { readonly pricing: ModelPricing }, usage: PricedUsage): number => {
  const { pricing } = model
  const perMillion = usage.input_tokens * pricing.input + usage.output_tokens * pricing.output +
    (usage.cache_read_tokens ?? 0) * (pricing.cache_read ?? pricing.input) +
    (usage.cache_write_tokens ?? 0) * (pricing.cache_write ?? pricing.input)
  return Math.ceil(perMillion / 1_000_000)
}

/** The dearest a prompt token can be charged: cached or not (a cache write may cost more than input). */
export const promptRateOf = ({ pricing }: { readonly pricing: ModelPricing }): number =>
  Math.max(pricing.input, pricing.cache_read ?? pricing.input, pricing.cache_write ?? pricing.input)

/** Every prompt token of a usage, cached or not. */
export const promptTokensOf = (usage: PricedUsage): number =>
  usage.input_tokens + (usage.cache_read_tokens ?? 0) + (usage.cache_write_tokens ?? 0)
