/**
 * OpenAI's Responses API, `POST /v1/responses`: what the OpenAI SDK's primary interface and the
 * Vercel AI SDK's default `openai(model)` call. The same call as a chat completion underneath
 * (policies, memories, one metered call, rate limits, idempotency), in the Responses wire format.
 * Huddle keeps no responses: `store: true` and `previous_response_id` are refused, naming them;
 * so is any field this schema does not know (the group refuses unknown fields).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { ConsensusReport } from "@huddle/domain/council/ConsensusReport"
import { Line, Text } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import { Dialect } from "../shared/ErrorTable.js"
import { OrgHeaders } from "../shared/Headers.js"
import * as Idempotency from "../shared/Idempotency.js"
import * as RateLimit from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const Nullable = <A, I>(schema: Schema.Schema<A, I>) => Schema.optional(Schema.NullOr(schema))

/**
 * Text content of a message item; `output_text` is how earlier assistant turns come back, with
 * what Huddle's (and OpenAI's) answers carry beside the text, which is output, not a request.
 */
const ContentText = Schema.Struct({
  type: Schema.Literal("input_text", "output_text"),
  text: Text,
  annotations: Schema.optional(Schema.Array(Schema.Unknown)),
  logprobs: Schema.optional(Schema.Array(Schema.Unknown))
})

const textPartTypes: ReadonlyArray<string> = ContentText.fields.type.literals

/**
 * A part of another kind (an image, a file): read only to be refused by its name. It never
 * decodes, so its decoded type is `never`.
 */
const OtherPart = (Schema.Struct({ type: Line }).pipe(
  Schema.filter((part) =>
    textPartTypes.includes(part.type)
      // A text part that failed as one: its own failure, deeper, is the one reported.
      ? "a text part"
      : { path: ["type"], message: `${part.type} content parts are not supported; only ${textPartTypes.join(" and ")} are` }
  )
).annotations({
  parseOptions: { onExcessProperty: "ignore" },
  // What the API reference shows for it (the generated schema is its `from`, the bare struct).
  jsonSchema: { description: "Any other kind of part (images, files) is refused with a 400 naming its type." }
})) as unknown as Schema.Schema<never, { readonly type: string }>

export const MessageItem = Schema.Struct({
  type: Schema.optional(Schema.Literal("message")),
  id: Schema.optional(Line),
  status: Schema.optional(Line),
  role: Schema.Literal("user", "assistant", "system", "developer"),
  content: Schema.Union(Text, Schema.Array(Schema.Union(ContentText, OtherPart)))
})

export const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  id: Schema.optional(Line),
  status: Schema.optional(Line),
  call_id: Line,
  name: Line,
  arguments: Text
})

export const FunctionCallOutputItem = Schema.Struct({
  type: Schema.Literal("function_call_output"),
  id: Schema.optional(Line),
  status: Schema.optional(Line),
  call_id: Line,
  output: Text
})

export const InputItem = Schema.Union(MessageItem, FunctionCallItem, FunctionCallOutputItem)
export type InputItem = typeof InputItem.Type

export const FunctionTool = Schema.Struct({
  type: Schema.Literal("function"),
  name: Line.pipe(Schema.minLength(1), Schema.maxLength(64)),
  description: Nullable(Text),
  parameters: Nullable(JsonObject),
  strict: Nullable(Schema.Boolean)
})

export const ToolChoice = Schema.Union(
  Schema.Literal("none", "auto", "required"),
  Schema.Struct({ type: Schema.Literal("function"), name: Line })
)

export const TextFormat = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    name: Line.pipe(Schema.minLength(1), Schema.maxLength(64)),
    schema: JsonObject,
    description: Schema.optional(Text),
    strict: Nullable(Schema.Boolean)
  })
)

export const CreateResponse = Schema.Struct({
  model: Line.pipe(Schema.minLength(1), Schema.maxLength(128)),
  input: Schema.Union(Text, Schema.Array(InputItem).pipe(Schema.minItems(1))),
  instructions: Nullable(Text),
  stream: Nullable(Schema.Boolean),
  temperature: Nullable(Schema.Number.pipe(Schema.between(0, 2))),
  top_p: Nullable(Schema.Number.pipe(Schema.between(0, 1))),
  max_output_tokens: Nullable(Schema.Int.pipe(Schema.positive())),
  tools: Schema.optional(Schema.Array(FunctionTool).pipe(Schema.maxItems(128))),
  tool_choice: Schema.optional(ToolChoice),
  text: Schema.optional(Schema.Struct({ format: Schema.optional(TextFormat) })),
  user: Schema.optional(Line),
  store: Nullable(
    Schema.Boolean.pipe(
      Schema.filter((store) => !store || "Huddle does not keep responses: send `store: false` (or leave it out)")
    )
  ),
  previous_response_id: Nullable(
    Line.pipe(Schema.filter(() => "Huddle does not keep responses, so `previous_response_id` cannot be followed: send the earlier turns in `input`"))
  )
})
export type CreateResponse = typeof CreateResponse.Type

export const OutputText = Schema.Struct({
  type: Schema.Literal("output_text"),
  text: Schema.String,
  annotations: Schema.Array(Schema.Unknown)
})

export const OutputMessage = Schema.Struct({
  type: Schema.Literal("message"),
  id: Schema.String,
  status: Schema.Literal("in_progress", "completed", "incomplete"),
  role: Schema.Literal("assistant"),
  content: Schema.Array(OutputText)
})

export const OutputFunctionCall = Schema.Struct({
  type: Schema.Literal("function_call"),
  id: Schema.String,
  status: Schema.Literal("in_progress", "completed", "incomplete"),
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})

export const ResponseUsage = Schema.Struct({
  input_tokens: Schema.Int,
  input_tokens_details: Schema.Struct({ cached_tokens: Schema.Int }),
  output_tokens: Schema.Int,
  output_tokens_details: Schema.Struct({ reasoning_tokens: Schema.Int }),
  total_tokens: Schema.Int
})

export const ResponseObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("response"),
  created_at: Schema.Int,
  status: Schema.Literal("in_progress", "completed", "incomplete", "failed"),
  model: Schema.String,
  output: Schema.Array(Schema.Union(OutputMessage, OutputFunctionCall)),
  usage: Schema.NullOr(ResponseUsage),
  error: Schema.Null,
  incomplete_details: Schema.NullOr(Schema.Struct({ reason: Schema.Literal("max_output_tokens", "content_filter") })),
  instructions: Schema.NullOr(Schema.String),
  max_output_tokens: Schema.NullOr(Schema.Int),
  temperature: Schema.NullOr(Schema.Number),
  top_p: Schema.NullOr(Schema.Number),
  tool_choice: Schema.Unknown,
  tools: Schema.Array(Schema.Unknown),
  text: Schema.Struct({ format: Schema.Unknown }),
  parallel_tool_calls: Schema.Boolean,
  previous_response_id: Schema.Null,
  store: Schema.Literal(false),
  metadata: Schema.Struct({}),
  /** A council's report (a `council` model). */
  consensus: Schema.optional(ConsensusReport.annotations({ description: "The council's report, when `model` is a council (as on a chat completion)" }))
}).annotations({ identifier: "Response" })
export type ResponseObject = typeof ResponseObject.Encoded

export class ResponsesApi extends HttpApiGroup.make("responses")
  .add(
    HttpApiEndpoint.post("createResponse", "/responses")
      .annotate(OpenApi.Summary, "Create a response")
      .annotateContext(Idempotency.keyed)
      .annotate(RateLimit.Class, "chat")
      .setPayload(CreateResponse)
      .setHeaders(OrgHeaders)
      .addSuccess(ResponseObject)
      .annotate(
        OpenApi.Description,
        "OpenAI's Responses API: `input` as text or items (messages, function calls and their outputs), `instructions`, function `tools`, `text.format` for structured output, `usage`. The same call as `POST /v1/chat/completions` underneath: memories, policies, the worst case reserved and settled; a council id answers with its consensus as the output text and its report in `consensus`. With `stream: true` the answer is `text/event-stream` of the semantic events (`response.created` … `response.output_text.delta` … `response.completed`). Nothing is stored: `store: true` and `previous_response_id` are refused. Errors use OpenAI's envelope."
      )
  )
  .addError(Envelope.NotFound)
  .addError(Envelope.InsufficientCredits)
  .addError(Envelope.PolicyViolation)
  .addError(Envelope.UpstreamUnavailable)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimit.RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "OpenAI Responses")
  .annotate(OpenApi.Description, "OpenAI's Responses API, in OpenAI's wire format and error envelope.")
  .annotate(Dialect, "openai")
{}
