/**
 * Anthropic's Messages API on the wire (DESIGN §8): the request as `@anthropic-ai/sdk` and Claude
 * Code send it, the whole message, the token count and the model listing.
 *
 * The request is strict at the top (an unknown field is refused, 400 naming it, as Anthropic's
 * API does) and keeps every field of its nested objects as sent (`preserve`): the decoded body is
 * the client's body, which an Anthropic upstream receives unchanged (`CallOptions.anthropic`).
 * Content blocks are read loosely here and checked by the translation (`MessagesTranslation`),
 * which names the block it cannot take.
 */
import { ConsensusReport } from "@huddle/domain/council/ConsensusReport"
import { Line, Text } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"

const strict = { parseOptions: { onExcessProperty: "error" } } as const
/** Nested objects keep what they do not name: the native body must be the client's. */
const preserve = { parseOptions: { onExcessProperty: "preserve" } } as const

export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** A content block of any type; the translation reads the fields of the types it knows. */
export const ContentBlock = Schema.Struct({
  type: Line,
  text: Schema.optional(Text),
  id: Schema.optional(Line),
  name: Schema.optional(Line),
  input: Schema.optional(Schema.Unknown),
  tool_use_id: Schema.optional(Line),
  content: Schema.optional(Schema.Unknown),
  is_error: Schema.optional(Schema.Boolean),
  thinking: Schema.optional(Text),
  signature: Schema.optional(Line),
  data: Schema.optional(Line),
  cache_control: Schema.optional(Schema.NullOr(JsonObject))
}).annotations(preserve)
export type ContentBlock = typeof ContentBlock.Type

export const MessageParam = Schema.Struct({
  /** `system`: an instruction between turns, as Claude Code sends its environment (beta `per-turn-control-2026-07-01`). */
  role: Schema.Literal("user", "assistant", "system"),
  content: Schema.Union(Text, Schema.Array(ContentBlock))
}).annotations(preserve)
export type MessageParam = typeof MessageParam.Type

export const SystemBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Text,
  cache_control: Schema.optional(Schema.NullOr(JsonObject))
}).annotations(preserve)

export const Tool = Schema.Struct({
  name: Line.pipe(Schema.minLength(1), Schema.maxLength(128)),
  /** Absent or `custom` for a client tool; a server tool's type (`web_search_20250305` …) otherwise. */
  type: Schema.optional(Schema.NullOr(Line)),
  description: Schema.optional(Text),
  input_schema: Schema.optional(JsonObject),
  cache_control: Schema.optional(Schema.NullOr(JsonObject))
}).annotations(preserve)
export type Tool = typeof Tool.Type

const parallel = { disable_parallel_tool_use: Schema.optional(Schema.Boolean) }

export const ToolChoice = Schema.Union(
  Schema.Struct({ type: Schema.Literal("auto"), ...parallel }),
  Schema.Struct({ type: Schema.Literal("any"), ...parallel }),
  Schema.Struct({ type: Schema.Literal("tool"), name: Line, ...parallel }),
  Schema.Struct({ type: Schema.Literal("none") })
).annotations(preserve)
export type ToolChoice = typeof ToolChoice.Type

export const Thinking = Schema.Struct({
  type: Schema.Literal("enabled", "disabled", "adaptive", "between_tools"),
  budget_tokens: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1024)))
}).annotations(preserve).pipe(
  Schema.filter((thinking) =>
    thinking.type !== "enabled" || thinking.budget_tokens !== undefined ||
    { path: ["budget_tokens"], message: "`thinking.type: \"enabled\"` needs `budget_tokens`" }
  )
)
export type Thinking = typeof Thinking.Type

export const OutputFormat = Schema.Struct({
  type: Schema.Literal("json_schema"),
  schema: JsonObject
}).annotations(preserve)

export const OutputConfig = Schema.Struct({
  effort: Schema.optional(Schema.NullOr(Schema.Literal("low", "medium", "high", "xhigh", "max"))),
  format: Schema.optional(Schema.NullOr(OutputFormat))
}).annotations(preserve)

/** Refused everywhere: Huddle chooses the models and pays for them, at the catalog's (standard) prices. */
const refusedField = (why: string) =>
  Schema.optional(Schema.Unknown.pipe(Schema.filter((value) => value === null || value === undefined || why)))

/** Fields only an Anthropic upstream can act on: kept as sent, and named when refused elsewhere. */
const anthropicOnly = Schema.optional(Schema.Unknown)

/** The fields `count_tokens` takes: the conversation, without the output settings. */
const conversation = {
  model: Line.pipe(Schema.minLength(1), Schema.maxLength(256)),
  messages: Schema.Array(MessageParam),
  system: Schema.optional(Schema.Union(Text, Schema.Array(SystemBlock))),
  tools: Schema.optional(Schema.Array(Tool)),
  tool_choice: Schema.optional(ToolChoice),
  thinking: Schema.optional(Thinking),
  mcp_servers: anthropicOnly,
  context_management: anthropicOnly,
  output_format: Schema.optional(Schema.NullOr(OutputFormat)),
  output_config: Schema.optional(Schema.NullOr(OutputConfig)),
  /** Automatic prompt caching: kept for Anthropic; a hint with nothing to do elsewhere. */
  cache_control: Schema.optional(Schema.NullOr(JsonObject)),
  compaction: anthropicOnly,
  thread: anthropicOnly,
  diagnostics: anthropicOnly,
  speed: Schema.optional(Schema.NullOr(Schema.Literal("standard", "fast").pipe(
    Schema.filter((speed) => speed === "standard" || "`speed: \"fast\"` is not supported: models are priced at the standard speed")
  ))),
  billing_policy: refusedField("`billing_policy` is not supported: Huddle's credits pay for every call"),
}

/**
 * Every field of `MessageCreateParams` (the SDK's, betas included): taken, translated, or kept
 * for Anthropic alone (docs/anthropic.md has the table).
 */
export const CreateMessage = Schema.Struct({
  ...conversation,
  max_tokens: Schema.Int.pipe(Schema.positive()),
  stream: Schema.optional(Schema.Boolean),
  stop_sequences: Schema.optional(Schema.Array(Text)),
  temperature: Schema.optional(Schema.Number.pipe(Schema.between(0, 1))),
  top_p: Schema.optional(Schema.Number.pipe(Schema.between(0, 1))),
  top_k: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  metadata: Schema.optional(Schema.Struct({ user_id: Schema.optional(Schema.NullOr(Line)) }).annotations(preserve)),
  service_tier: Schema.optional(Schema.Literal("auto", "standard_only")),
  container: anthropicOnly,
  inference_geo: anthropicOnly,
  fallback_credit_token: refusedField("`fallback_credit_token` is not supported: Huddle's credits pay for every call"),
  fallbacks: refusedField("`fallbacks` is not supported: the catalog's tiers choose the fallback models")
}).annotations({ ...strict, identifier: "CreateMessage" })
export type CreateMessage = typeof CreateMessage.Type

export const CountTokens = Schema.Struct(conversation).annotations({ ...strict, identifier: "CountMessageTokens" })
export type CountTokens = typeof CountTokens.Type

export const TokenCount = Schema.Struct({ input_tokens: Schema.Int }).annotations({ identifier: "MessageTokensCount" })

export const StopReason = Schema.Literal("end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal")
export type StopReason = typeof StopReason.Type

export const MessageUsage = Schema.Struct({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cache_creation_input_tokens: Schema.NullOr(Schema.Int),
  cache_read_input_tokens: Schema.NullOr(Schema.Int),
  /** Huddle's: the output cap was lowered to what the credits cover (also `Huddle-Max-Tokens`). */
  max_tokens_lowered: Schema.optional(Schema.Struct({ from: Schema.Int, to: Schema.Int }))
})

const OutputBlock = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thinking"), thinking: Schema.String, signature: Schema.String }),
  Schema.Struct({ type: Schema.Literal("redacted_thinking"), data: Schema.String }),
  Schema.Struct({ type: Schema.Literal("tool_use"), id: Schema.String, name: Schema.String, input: Schema.Unknown })
)
export type OutputBlock = typeof OutputBlock.Type

export const Message = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("message"),
  role: Schema.Literal("assistant"),
  model: Schema.String,
  content: Schema.Array(OutputBlock),
  stop_reason: Schema.NullOr(StopReason),
  stop_sequence: Schema.NullOr(Schema.String),
  usage: MessageUsage,
  consensus: Schema.optional(ConsensusReport.annotations({
    description: "The council's report, when `model` is a council (`council`, `council-<tier>`)"
  }))
}).annotations({ identifier: "Message" })
export type Message = typeof Message.Encoded

export const ModelInfo = Schema.Struct({
  type: Schema.Literal("model"),
  id: Schema.String,
  display_name: Schema.String,
  created_at: Schema.String
}).annotations({ identifier: "AnthropicModelInfo" })

export const ModelInfoList = Schema.Struct({
  data: Schema.Array(ModelInfo),
  has_more: Schema.Boolean,
  first_id: Schema.NullOr(Schema.String),
  last_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AnthropicModelList" })
