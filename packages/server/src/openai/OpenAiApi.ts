/**
 * The OpenAI-compatible endpoints: `POST /v1/chat/completions` and the model listing, in
 * OpenAI's wire format (the subset that clients send; values we cannot honour are refused with
 * a 400 naming the field rather than ignored). Errors on these paths are OpenAI's envelope
 * `{ "error": { "message", "type", "param", "code" } }`, `code` holding our CODE: the edge
 * renders them, for this group's `Dialect` annotation (see `OpenAiErrors.ts`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { ConsensusReport } from "@huddle/domain/council/ConsensusReport"
import { ModelPricing } from "@huddle/domain/models/Model"
import { Line, Text } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import { Dialect } from "../shared/ErrorTable.js"
import { OrgHeaders } from "../shared/Headers.js"
import * as Idempotency from "../shared/Idempotency.js"
import * as RateLimit from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"

const refused = (what: string) => (value: unknown) => value === null || value === undefined || what

/**
 * The request refuses a field it does not know (as OpenAI does) rather than drop it; the
 * objects inside it keep the platform's default and ignore theirs (a message echoed back with
 * `refusal: null` must still be accepted).
 */
const strict = { parseOptions: { onExcessProperty: "error" } } as const
const lenient = { parseOptions: { onExcessProperty: "ignore" } } as const

/** A content part; only text parts are understood. */
const ContentPart = Schema.Struct({ type: Line, text: Schema.optional(Text) }).pipe(
  Schema.filter((part) =>
    part.type !== "text"
      ? `${part.type} content parts are not supported; only text parts are`
      : part.text !== undefined || "a text part needs `text`"
  )
)

export const Content = Schema.Union(Text, Schema.Array(ContentPart))

export const ToolCall = Schema.Struct({
  id: Line,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Line, arguments: Text })
})

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const Message = Schema.Struct({
  role: Schema.Literal("system", "developer", "user", "assistant", "tool"),
  content: Schema.optional(Schema.NullOr(Content)),
  name: Schema.optional(Line),
  tool_calls: Schema.optional(Schema.Array(ToolCall)),
  tool_call_id: Schema.optional(Line),
  audio: Schema.optional(Schema.Unknown.pipe(Schema.filter(refused("audio is not supported"))))
}).pipe(
  Schema.filter((message) => {
    if (message.role === "tool" && message.tool_call_id === undefined) return "a tool message needs `tool_call_id`"
    const hasContent = message.content !== undefined && message.content !== null
    if (!hasContent && !(message.role === "assistant" && (message.tool_calls?.length ?? 0) > 0)) {
      return `a ${message.role} message needs \`content\``
    }
    return true
  })
).annotations(lenient)
export type Message = typeof Message.Type

export const Tool = Schema.Struct({
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: Line.pipe(Schema.minLength(1), Schema.maxLength(64)),
    description: Schema.optional(Text),
    parameters: Schema.optional(JsonObject),
    strict: Schema.optional(Schema.NullOr(Schema.Boolean))
  })
}).annotations(lenient)

export const ToolChoice = Schema.Union(
  Schema.Literal("none", "auto", "required"),
  Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Line }) })
).annotations(lenient)

export const ResponseFormat = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  Schema.Struct({ type: Schema.Literal("json_schema"), json_schema: JsonObject })
).annotations(lenient)

const Nullable = <A, I>(schema: Schema.Schema<A, I>) => Schema.optional(Schema.NullOr(schema))

const Penalty = Schema.Number.pipe(Schema.between(-2, 2))

/** Without stored completions these have nothing to do, and dropping them would hide that. */
const notStored = "Huddle does not keep completions"

/**
 * Every parameter of OpenAI's Chat Completions request is here: taken, or refused with a reason.
 * Which provider takes which is `ProviderSupport`'s decision (docs/models.md, "Parameters").
 */
export const ChatCompletionRequest = Schema.Struct({
  model: Line.pipe(Schema.minLength(1), Schema.maxLength(128)),
  messages: Schema.Array(Message).pipe(Schema.minItems(1)),
  temperature: Nullable(Schema.Number.pipe(Schema.between(0, 2))),
  top_p: Nullable(Schema.Number.pipe(Schema.between(0, 1))),
  max_tokens: Nullable(Schema.Int.pipe(Schema.positive())),
  max_completion_tokens: Nullable(Schema.Int.pipe(Schema.positive())),
  // Stop sequences are text: a newline is a common one.
  stop: Nullable(Schema.Union(Text, Schema.Array(Text).pipe(Schema.maxItems(4)))),
  seed: Nullable(Schema.Int),
  presence_penalty: Nullable(Penalty),
  frequency_penalty: Nullable(Penalty),
  logit_bias: Nullable(Schema.Record({ key: Line, value: Schema.Number.pipe(Schema.between(-100, 100)) })),
  user: Schema.optional(Line),
  safety_identifier: Nullable(Line),
  prompt_cache_key: Nullable(Line),
  reasoning_effort: Nullable(Schema.Literal("none", "minimal", "low", "medium", "high", "xhigh")),
  verbosity: Nullable(Schema.Literal("low", "medium", "high")),
  // Other tiers are priced differently from the catalog's (standard-tier) prices.
  service_tier: Nullable(
    Schema.Literal("auto", "default", "flex", "scale", "priority").pipe(
      Schema.filter((tier) =>
        tier === "auto" || tier === "default" ||
        `service tier "${tier}" is not supported: models are priced at the standard tier ("auto" or "default")`
      )
    )
  ),
  store: Nullable(Schema.Boolean.pipe(Schema.filter((on) => !on || `\`store: true\` is not supported: ${notStored}`))),
  metadata: Schema.optional(Schema.Unknown.pipe(Schema.filter(refused(`\`metadata\` is not supported: it labels stored completions, and ${notStored}`)))),
  stream: Nullable(Schema.Boolean),
  stream_options: Nullable(Schema.Struct({ include_usage: Schema.optional(Schema.Boolean) }).annotations(lenient)),
  response_format: Schema.optional(ResponseFormat),
  tools: Schema.optional(Schema.Array(Tool).pipe(Schema.maxItems(128))),
  tool_choice: Schema.optional(ToolChoice),
  parallel_tool_calls: Nullable(Schema.Boolean),
  n: Nullable(Schema.Number.pipe(Schema.filter((n) => n === 1 || "only n = 1 is supported: one choice per request"))),
  audio: Schema.optional(Schema.Unknown.pipe(Schema.filter(refused("audio output is not supported")))),
  modalities: Nullable(
    Schema.Array(Line).pipe(
      Schema.filter((modalities) => modalities.every((m) => m === "text") || "only the text modality is supported")
    )
  ),
  logprobs: Nullable(Schema.Boolean.pipe(Schema.filter((on) => !on || "`logprobs` is not supported"))),
  top_logprobs: Schema.optional(Schema.Unknown.pipe(Schema.filter(refused("`top_logprobs` is not supported: log probabilities are not returned")))),
  functions: Schema.optional(Schema.Unknown.pipe(Schema.filter(refused("`functions` is not supported; use `tools`")))),
  function_call: Schema.optional(Schema.Unknown.pipe(Schema.filter(refused("`function_call` is not supported; use `tool_choice`"))))
}).annotations(strict).pipe(
  // As OpenAI refuses it: options of a stream asked for without one would be silently unused.
  Schema.filter((request) =>
    request.stream_options == null || request.stream === true ||
    { path: ["stream_options"], message: "`stream_options` is only allowed when `stream` is true" }
  )
)
export type ChatCompletionRequest = typeof ChatCompletionRequest.Type

export const FinishReason = Schema.Literal("stop", "length", "tool_calls", "content_filter")

export const CompletionUsage = Schema.Struct({
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  total_tokens: Schema.Int,
  prompt_tokens_details: Schema.optional(Schema.Struct({
    cached_tokens: Schema.Int.annotations({ description: "Prompt tokens the provider read from its cache (charged at the model's `cache_read` rate)" })
  }))
})

export const ChatCompletion = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion"),
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Tuple(Schema.Struct({
    index: Schema.Literal(0),
    message: Schema.Struct({
      role: Schema.Literal("assistant"),
      content: Schema.NullOr(Schema.String),
      refusal: Schema.Null,
      tool_calls: Schema.optional(Schema.Array(ToolCall))
    }),
    logprobs: Schema.Null,
    finish_reason: FinishReason
  })),
  usage: CompletionUsage,
  /** A council's report (a `council` model); OpenAI's SDKs pass the field through. */
  consensus: Schema.optional(ConsensusReport.annotations({
    description: "The council's report, when `model` is a council: the consensus, the agreement ratio, each participant's position, vote, usage and credits, every dissent in the dissenter's words, who was dropped and why"
  }))
}).annotations({ identifier: "ChatCompletion" })

export const ModelObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("model"),
  created: Schema.Int,
  owned_by: Schema.String,
  pricing: Schema.optional(ModelPricing).annotations({
    description: "A catalog model's prices in credits per million tokens (none for a tier or a council, which may be answered by several models)"
  })
}).annotations({ identifier: "Model" })

export const ModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(ModelObject)
}).annotations({ identifier: "ModelList" })

const openAiErrors =
  "Errors use OpenAI's envelope `{\"error\": {\"message\", \"type\", \"param\", \"code\"}}` with `code` holding the Huddle error code (e.g. `INSUFFICIENT_CREDITS`) and the status shown."

export class OpenAiApi extends HttpApiGroup.make("openai")
  .add(
    HttpApiEndpoint.post("createChatCompletion", "/chat/completions")
      .annotate(OpenApi.Summary, "Create a chat completion")
      .annotateContext(Idempotency.keyed)
      .annotate(RateLimit.Class, "chat")
      .setPayload(ChatCompletionRequest)
      .setHeaders(OrgHeaders)
      .addSuccess(ChatCompletion)
      .annotate(
        OpenApi.Description,
        "OpenAI-compatible chat completion. `model` is a tier (`economy`, `standard`, `premium`), a model id from `GET /v1/models`, or a council: `council` (the caller's effective tier) or `council-economy`, `council-standard`, `council-premium` (lowered to an enforced tier ceiling like tier names). A council's answer is its consensus, and its report is in the top-level `consensus` field (streamed: on the last chunk before `[DONE]`); options a council cannot honour (`tools`, a JSON `response_format`, `stop`, `seed` …) are refused naming them, and `max_tokens` caps the consensus. The organization's memories are put in front of the messages as a system message; the worst-case cost is reserved before any model is called and settled to the reported usage; when the balance cannot cover it but can cover at least 256 output tokens, `max_tokens` is lowered to what it pays for (header `Huddle-Max-Tokens: <n>; lowered-from=<m>`, `usage.max_tokens_lowered`) rather than refused. When the configured models fail, the answer is 502 `UPSTREAM_UNAVAILABLE` naming each model tried and why, and nothing is charged; only where the operator set `HUDDLE_OFFLINE_FALLBACK=on` does the offline model answer instead, saying so in its text and in the header `Huddle-Offline-Fallback: <model>; reason=\"<why>\"`. With `stream: true` the answer is `text/event-stream` of `chat.completion.chunk` objects ending with `data: [DONE]` (and, with `stream_options.include_usage`, a last chunk with `usage`). " +
          openAiErrors
      )
  )
  .add(
    HttpApiEndpoint.get("listModels", "/models")
      .annotate(OpenApi.Summary, "List models")
      .setHeaders(OrgHeaders)
      .addSuccess(ModelList)
      .annotate(
        OpenApi.Description,
        `The tier aliases, the councils that can be seated (\`council\`, \`council-<tier>\`) and the catalog models the caller's organization policy allows. A request with an \`anthropic-version\` header (Anthropic's SDKs, Claude Code) gets them in Anthropic's shape, \`{"data":[{"type":"model","id","display_name","created_at"}],"has_more":false,"first_id","last_id"}\` (schema \`AnthropicModelList\`). ${openAiErrors}`
      )
  )
  .add(
    HttpApiEndpoint.get("retrieveModel", "/models/:model")
      .annotate(OpenApi.Summary, "Retrieve a model")
      .setPath(Schema.Struct({ model: Line }))
      .setHeaders(OrgHeaders)
      .addSuccess(ModelObject)
      .annotate(OpenApi.Description, `One model of the listing; any other is not found. With an \`anthropic-version\` header, in Anthropic's shape (schema \`AnthropicModelInfo\`). ${openAiErrors}`)
  )
  .addError(Envelope.NotFound)
  .addError(Envelope.InsufficientCredits)
  .addError(Envelope.PolicyViolation)
  .addError(Envelope.UpstreamUnavailable)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimit.RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "OpenAI-compatible")
  .annotate(OpenApi.Description, "OpenAI-compatible chat completions and models, in OpenAI's wire format and error envelope.")
  .annotate(Dialect, "openai")
{}
