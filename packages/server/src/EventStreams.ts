/**
 * The events of the streamed answers (`text/event-stream`), for the OpenAPI document: one schema
 * per stream, each a union of its frames `{ event?, data }` (`event` is the SSE `event:` line,
 * absent when the dialect sends none; `data` the JSON of the `data:` line). The frames themselves
 * are written by the dialects (huddle/HuddleDialect.ts, openai/*Dialect.ts); these schemas only describe them.
 */
import { CouncilRound } from "@huddle/domain/council/ConsensusReport"
import { HuddleReply } from "@huddle/domain/huddle/Huddle"
import { Schema } from "effect"
import { MessageStreamEvent } from "./anthropic/MessageStreamEvents.js"
import { CompletionUsage, FinishReason } from "./openai/OpenAiApi.js"
import * as OpenAiErrors from "./openai/OpenAiErrors.js"
import { OutputFunctionCall, OutputMessage, OutputText, ResponseObject } from "./openai/ResponsesApi.js"

const Frame = <E extends string, S extends Schema.Schema.Any>(event: E, data: S) =>
  Schema.Struct({ event: Schema.Literal(event), data })

const DataFrame = <S extends Schema.Schema.Any>(data: S) => Schema.Struct({ data })

export const ChatCompletionChunk = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion.chunk"),
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Array(Schema.Struct({
    index: Schema.Literal(0),
    delta: Schema.Struct({
      role: Schema.optional(Schema.Literal("assistant")),
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.Array(Schema.Struct({
        index: Schema.Int,
        id: Schema.optional(Schema.String),
        type: Schema.optional(Schema.Literal("function")),
        function: Schema.Struct({ name: Schema.optional(Schema.String), arguments: Schema.String })
      })))
    }),
    logprobs: Schema.Null,
    finish_reason: Schema.NullOr(FinishReason)
  })),
  usage: Schema.optional(Schema.NullOr(CompletionUsage))
}).annotations({ identifier: "ChatCompletionChunk", description: "One `data:` line of a streamed chat completion" })

export const ChatCompletionStreamEvent = Schema.Union(
  DataFrame(ChatCompletionChunk),
  DataFrame(OpenAiErrors.ErrorBody).annotations({ description: "A failure after the stream began; the stream ends" }),
  DataFrame(Schema.Literal("[DONE]")).annotations({ description: "The last line of a stream that did not fail" })
).annotations({
  identifier: "ChatCompletionStreamEvent",
  description:
    "With `stream: true`: `data:` lines without `event:` names, `chat.completion.chunk` objects ending with `data: [DONE]`; with `stream_options.include_usage`, the last chunk has empty `choices` and the `usage`."
})

const Sequenced = { sequence_number: Schema.Int }
const OutputItem = Schema.Union(OutputMessage, OutputFunctionCall)
const ItemRef = { item_id: Schema.String, output_index: Schema.Int }
const PartRef = { ...ItemRef, content_index: Schema.Int }

const responseEvent = <T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Frame(type, Schema.Struct({ type: Schema.Literal(type), ...fields, ...Sequenced }))

export const ResponseStreamEvent = Schema.Union(
  responseEvent("response.created", { response: ResponseObject }),
  responseEvent("response.in_progress", { response: ResponseObject }),
  responseEvent("response.output_item.added", { output_index: Schema.Int, item: OutputItem }),
  responseEvent("response.content_part.added", { ...PartRef, part: OutputText }),
  responseEvent("response.output_text.delta", { ...PartRef, delta: Schema.String, logprobs: Schema.Array(Schema.Unknown) }),
  responseEvent("response.function_call_arguments.delta", { ...ItemRef, delta: Schema.String }),
  responseEvent("response.output_text.done", { ...PartRef, text: Schema.String, logprobs: Schema.Array(Schema.Unknown) }),
  responseEvent("response.content_part.done", { ...PartRef, part: OutputText }),
  responseEvent("response.function_call_arguments.done", { ...ItemRef, arguments: Schema.String }),
  responseEvent("response.output_item.done", { output_index: Schema.Int, item: OutputItem }),
  responseEvent("response.completed", { response: ResponseObject }),
  // The last event of an answer cut off at its output cap (its response's status is `incomplete`).
  responseEvent("response.incomplete", { response: ResponseObject }),
  responseEvent("error", {
    code: Schema.String,
    message: Schema.String,
    param: Schema.NullOr(Schema.String),
    // OpenAI's envelope as well, so that the official SDK raises it.
    error: OpenAiErrors.ErrorBody.fields.error
  })
).annotations({
  identifier: "ResponseStreamEvent",
  description:
    "With `stream: true`: the Responses API's semantic events, each named by its `type` and numbered by `sequence_number`, from `response.created` to `response.completed` (`response.incomplete` for an answer cut off at its output cap; or `error`, after which the stream ends)."
})

export const HuddleStreamEvent = Schema.Union(
  Frame(
    "stage",
    Schema.Struct(
      {
        stage: Schema.Literal("context", "retrieval", "planning", "review", "execution", ...CouncilRound.literals, "completion").annotations({
          description: "`retrieval`: what was taken from the workspace's connected repository (mode, files analysed of files indexed, which files). A council's rounds (`proposals`, `critique`, `synthesis`, `ratification`) are stages of its execution (multi mode)"
        }),
        status: Schema.Literal("started", "progress", "completed", "skipped").annotations({
          description: "`progress`: a council participant finished a round (`seat`, `model`, `outcome`: answered, abstained or dropped, with a `reason`)"
        })
      },
      // The stage's details, which differ from stage to stage.
      Schema.Record({ key: Schema.String, value: Schema.Unknown })
    )
  ),
  Frame("token", Schema.Struct({ text: Schema.String })),
  Frame("metadata", HuddleReply),
  Frame("done", Schema.Struct({ status: Schema.Literal("completed", "awaiting_review", "failed") })),
  Frame("error", Schema.Struct({ error: Schema.String, message: Schema.String }))
).annotations({
  identifier: "HuddleStreamEvent",
  description:
    "With `?stream=true`: `stage` events as the pipeline advances (in multi mode, each council round as it starts and ends and each participant as it finishes a round; no model output before the consensus), `token` events with the text, then `metadata` (the JSON answer's body, with the consensus report in multi mode) and `done`; a failure after the stream began is an `error` event, then `done` with status `failed`. Comment lines (`: keepalive`) keep the connection open."
})

/** The streams, for the document's components. */
export const schemas = [ChatCompletionStreamEvent, ResponseStreamEvent, HuddleStreamEvent, MessageStreamEvent] as const
