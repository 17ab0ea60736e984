/**
 * OpenAI's wire dialect for chat completions: a whole `chat.completion`, or `chat.completion.chunk`
 * frames ending with `data: [DONE]` (see `EventStream`). The chunks are written with hand-built
 * JSON: this is the hot path.
 *
 * A council's answer carries its report in a top-level `consensus` field, which OpenAI's SDKs
 * pass through: on the `chat.completion`, and on the last chunk before `[DONE]` (the usage chunk
 * when `stream_options.include_usage` asked for one, else the chunk with the finish reason).
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ConsensusReport } from "@huddle/domain/council/ConsensusReport"
import { type Concluded, type Event, isOutput, type Settled } from "@huddle/domain/answers/Completions"
import { Chunk, Effect, Schema } from "effect"
import type { ChatCompletion, FinishReason } from "./OpenAiApi.js"
import * as OpenAiErrors from "./OpenAiErrors.js"
import {
  creditsChargedHeader,
  loweredUsage,
  maxTokensHeader,
  maxTokensValue,
  offlineFallbackHeader,
  offlineFallbackValue
} from "../shared/Headers.js"
import { type FailedModel, promptTokensOf } from "@huddle/domain/models/Model"
import { offlineFallbackOf } from "@huddle/domain/models/MeteredCall"
import type { Dialect } from "../shared/EventStream.js"
import { forEachPull, type Opened } from "@huddle/domain/shared/Streams"

type Completion = typeof ChatCompletion.Encoded
type Finish = typeof FinishReason.Type

/** Providers' finish reasons (Anthropic's included) in OpenAI's words. */
export const finishReason = (reason: string): Finish => {
  switch (reason) {
    case "stop":
    case "length":
    case "tool_calls":
    case "content_filter":
      return reason
    case "max_tokens":
      return "length"
    case "tool_use":
    case "function_call":
      return "tool_calls"
    default:
      return "stop"
  }
}

/** The report on the wire. */
export const consensusOf = Schema.encodeSync(ConsensusReport)

/** Prompt tokens count the cached ones too, as OpenAI's do; those read from the cache are also in `prompt_tokens_details`. */
const usageOf = (spent: Settled | Concluded) => ({
  prompt_tokens: promptTokensOf(spent.usage),
  completion_tokens: spent.usage.output_tokens,
  total_tokens: promptTokensOf(spent.usage) + spent.usage.output_tokens,
  ...(spent.usage.cache_read_tokens ? { prompt_tokens_details: { cached_tokens: spent.usage.cache_read_tokens } } : {}),
  ...loweredUsage(spent._tag === "Settled" ? spent.lowered : undefined)
})

/**
 * The headers the events held back before the first output say: `Huddle-Max-Tokens` when the
 * call's output cap was lowered (its first event), `Huddle-Offline-Fallback` when the model
 * answering is the offline one standing in for configured models that failed (its last
 * `Answering`: the router never switches models once output has begun).
 */
export const answerHeaders = (head: ReadonlyArray<Event>): Record<string, string> => {
  const lowered = head.find((event) => event._tag === "Lowered")
  let fallback: ReadonlyArray<FailedModel> | undefined
  for (const event of head) if (event._tag === "Answering") fallback = offlineFallbackOf(event)
  return {
    ...(lowered === undefined || lowered._tag !== "Lowered" ? {} : { [maxTokensHeader]: maxTokensValue(lowered) }),
    ...(fallback === undefined ? {} : { [offlineFallbackHeader]: offlineFallbackValue(fallback) })
  }
}


interface Call {
  id: string
  name: string
  arguments: string
}

/** The whole answer, as `chat.completion`. */
export const completion = <E>(events: Opened<Event, E>, id: string, created: number, first: string) => {
  const acc = {
    model: first,
    text: "",
    calls: [] as Array<Call | undefined>,
    finish: "stop" as Finish,
    settled: undefined as Settled | Concluded | undefined,
    report: undefined as ConsensusReport | undefined,
    fallback: undefined as ReadonlyArray<FailedModel> | undefined
  }
  return Effect.map(
    forEachPull(events, (chunk) => {
      for (const event of chunk) {
        switch (event._tag) {
          case "Answering":
            acc.model = event.model.id
            acc.fallback = offlineFallbackOf(event)
            break
          case "Delta":
            acc.text += event.text
            break
          case "ToolCallDelta": {
            const call = acc.calls[event.index] ??= { id: "", name: "", arguments: "" }
            if (event.id !== undefined) call.id = event.id
            if (event.name !== undefined) call.name = event.name
            if (event.arguments !== undefined) call.arguments += event.arguments
            break
          }
          case "Finish":
            acc.finish = finishReason(event.reason)
            break
          case "Settled":
            acc.settled = event
            break
          case "Concluded":
            acc.finish = "stop"
            acc.settled = event
            acc.report = event.report
            break
          case "AttemptFailed":
          case "Lowered":
            break
        }
      }
    }),
    () => {
      const calls = acc.calls.filter((call) => call !== undefined)
      const body: Completion = {
        id,
        object: "chat.completion",
        created,
        model: acc.model,
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: calls.length > 0 && acc.text.length === 0 ? null : acc.text,
            refusal: null,
            ...(calls.length === 0
              ? {}
              : { tool_calls: calls.map((call) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } })) })
          },
          logprobs: null,
          finish_reason: acc.finish
        }],
        usage: acc.settled === undefined ? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } : usageOf(acc.settled),
        ...(acc.report === undefined ? {} : { consensus: consensusOf(acc.report) })
      }
      const lowered = acc.settled?._tag === "Settled" ? acc.settled.lowered : undefined
      return HttpServerResponse.unsafeJson(body, {
        headers: {
          [creditsChargedHeader]: String(acc.settled?.charged ?? 0),
          ...(lowered === undefined ? {} : { [maxTokensHeader]: maxTokensValue(lowered) }),
          ...(acc.fallback === undefined ? {} : { [offlineFallbackHeader]: offlineFallbackValue(acc.fallback) })
        }
      })
    }
  )
}

const encoder = new TextEncoder()
const json = JSON.stringify

/** Events as `chat.completion.chunk` frames; the role goes with the first output. */
export const dialect = (
  id: string,
  created: number,
  firstModel: string,
  includeUsage: boolean
): Dialect<Event> => {
  let prefix = ""
  let model = firstModel
  const setModel = (next: string) => {
    model = next
    prefix = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${json(next)},"choices":[`
  }
  setModel(firstModel)
  // OpenAI puts `"usage":null` on every chunk when usage was asked for.
  const suffix = includeUsage ? `],"usage":null}\n\n` : "]}\n\n"
  let role = `"role":"assistant",`
  const choice = (delta: string, finish: string | null) =>
    `${prefix}{"index":0,"delta":{${delta}},"logprobs":null,"finish_reason":${finish === null ? "null" : `"${finish}"`}}${suffix}`

  const usageChunk = (model: string, spent: Settled | Concluded, extra: string) =>
    `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${json(model)},"choices":[],"usage":${json(usageOf(spent))}${extra}}\n\n`

  const frame = (event: Event): string => {
    switch (event._tag) {
      case "AttemptFailed":
      case "Lowered":
      // Chat Completions has no field for extended thinking: its clients get the answer.
      case "ThinkingDelta":
        return ""
      case "Convened": {
        // A council's answer has begun: the role now, the consensus when the council agrees.
        const out = choice(`${role}"content":""`, null)
        role = ""
        return out
      }
      case "Answering":
        // Only before any output: the router never switches models after it.
        setModel(event.model.id)
        return ""
      case "Delta": {
        const out = choice(`${role}"content":${json(event.text)}`, null)
        role = ""
        return out
      }
      case "ToolCallDelta": {
        const head = event.id === undefined ? "" : `,"id":${json(event.id)},"type":"function"`
        const name = event.name === undefined ? "" : `"name":${json(event.name)},`
        const out = choice(
          `${role === "" ? "" : `${role}"content":null,`}"tool_calls":[{"index":${event.index}${head},"function":{${name}"arguments":${json(event.arguments ?? "")}}}]`,
          null
        )
        role = ""
        return out
      }
      case "Finish": {
        const opening = role === "" ? "" : choice(`${role}"content":""`, null)
        role = ""
        return opening + choice("", finishReason(event.reason))
      }
      case "Settled":
        return (includeUsage ? usageChunk(event.model.id, event, "") : "") + "data: [DONE]\n\n"
      case "Concluded": {
        // The finish, then the report on the last chunk before `[DONE]`.
        const consensus = `,"consensus":${json(consensusOf(event.report))}`
        const opening = role === "" ? "" : choice(`${role}"content":""`, null)
        role = ""
        const finish = includeUsage
          ? choice("", "stop")
          : `${prefix}{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]${consensus}}\n\n`
        return opening + finish + (includeUsage ? usageChunk(model, event, consensus) : "") + "data: [DONE]\n\n"
      }
    }
  }

  return {
    isOutput,
    headers: answerHeaders,
    frames: (events) => {
      let text = ""
      for (const event of events) text += frame(event)
      return text.length === 0 ? Chunk.empty() : Chunk.of(encoder.encode(text))
    },
    /** A failure after the stream began: OpenAI's SDKs raise an `error` chunk as an APIError. */
    failure: (error) => encoder.encode(`data: ${json({ error: OpenAiErrors.fromError(error).body.error })}\n\n`)
  }
}

