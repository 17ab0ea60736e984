/**
 * OpenAI's Responses wire dialect: a whole `response` object, or the semantic events the
 * official SDK's `responses.stream()` accumulates (`response.created`, `response.in_progress`,
 * `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`, …,
 * `response.completed`), each with its `sequence_number` (see `EventStream`). Both are built by
 * one `Builder`, so the streamed snapshot and the whole answer cannot disagree. A council's
 * report is the response's `consensus` field (on `response.completed`'s response when streamed).
 */
import { randomUUID } from "node:crypto"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { ConsensusReport } from "@huddle/domain/council/ConsensusReport"
import { type Concluded, type Event, isOutput, type Settled } from "@huddle/domain/answers/Completions"
import { Chunk, Effect } from "effect"
import type { Dialect } from "../shared/EventStream.js"
import { answerHeaders, consensusOf } from "./OpenAiDialect.js"
import * as OpenAiErrors from "./OpenAiErrors.js"
import type { CreateResponse, ResponseObject } from "./ResponsesApi.js"
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
import type { Lowered } from "@huddle/domain/models/MeteredCall"
import { forEachPull, type Opened } from "@huddle/domain/shared/Streams"

type Item = ResponseObject["output"][number]
type Status = "in_progress" | "completed" | "incomplete"

const hex = () => randomUUID().replace(/-/g, "")

export const newId = () => `resp_${hex()}`

/** What the answer echoes of its request. */
export interface Meta {
  readonly id: string
  readonly createdAt: number
  readonly request: CreateResponse
}

const usageOf = ({ usage }: Settled | Concluded, lowered: Lowered | undefined) => ({
  input_tokens: promptTokensOf(usage),
  input_tokens_details: { cached_tokens: usage.cache_read_tokens ?? 0 },
  output_tokens: usage.output_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: promptTokensOf(usage) + usage.output_tokens,
  ...loweredUsage(lowered)
})

/** One output item as it grows: the items of the answer are derived from these. */
type Entry =
  | { readonly kind: "message"; readonly id: string; text: string }
  | { readonly kind: "call"; readonly id: string; readonly callId: string; name: string; arguments: string }

const itemOf = (entry: Entry, status: Status): Item =>
  entry.kind === "message"
    ? { type: "message", id: entry.id, status, role: "assistant", content: status === "in_progress" && entry.text === "" ? [] : [part(entry.text)] }
    : { type: "function_call", id: entry.id, status, call_id: entry.callId, name: entry.name, arguments: entry.arguments }

const part = (text: string) => ({ type: "output_text" as const, text, annotations: [] })

/** The response as the events so far make it, and the semantic events each new one adds. */
class Builder {
  model: string
  readonly entries: Array<Entry> = []
  message: (Entry & { readonly kind: "message" }) | undefined
  readonly calls = new Map<number, Entry & { readonly kind: "call" }>()
  finish = "stop"
  settled: Settled | Concluded | undefined
  report: ConsensusReport | undefined
  /** Set when the credits lowered the output cap: the response then shows the cap it ran under. */
  lowered: Lowered | undefined
  /** Set when the offline model answers in place of configured models that failed. */
  fallback: ReadonlyArray<FailedModel> | undefined

  constructor(readonly meta: Meta) {
    this.model = meta.request.model
  }

  snapshot(status: "in_progress" | "completed" | "incomplete"): ResponseObject {
    const { request } = this.meta
    return {
      id: this.meta.id,
      object: "response",
      created_at: this.meta.createdAt,
      status,
      model: this.model,
      output: this.entries.map((entry) => itemOf(entry, status)),
      usage: this.settled === undefined ? null : usageOf(this.settled, this.lowered),
      error: null,
      incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
      instructions: request.instructions ?? null,
      max_output_tokens: this.lowered?.to ?? request.max_output_tokens ?? null,
      temperature: request.temperature ?? null,
      top_p: request.top_p ?? null,
      tool_choice: request.tool_choice ?? "auto",
      tools: request.tools ?? [],
      text: { format: request.text?.format ?? { type: "text" } },
      parallel_tool_calls: true,
      previous_response_id: null,
      store: false,
      metadata: {},
      ...(this.report === undefined ? {} : { consensus: consensusOf(this.report) })
    }
  }

  status(): "completed" | "incomplete" {
    return this.finish === "length" || this.finish === "max_tokens" ? "incomplete" : "completed"
  }

  /** The semantic events of one of the call's events (without `sequence_number`). */
  apply(event: Event): Array<Record<string, unknown>> {
    switch (event._tag) {
      case "Answering":
        this.model = event.model.id
        this.fallback = offlineFallbackOf(event)
        return []
      case "Lowered":
        this.lowered = event
        return []
      case "AttemptFailed":
      // Extended thinking has no item here: Chat Completions' and Responses' clients get the answer.
      case "ThinkingDelta":
      // A council under way: `response.created` and `in_progress` are what a client sees meanwhile.
      case "Convened":
        return []
      case "Delta": {
        const out: Array<Record<string, unknown>> = []
        let message = this.message
        if (message === undefined) {
          message = this.message = { kind: "message", id: `msg_${hex()}`, text: "" }
          this.entries.push(message)
          const output_index = this.entries.length - 1
          out.push(
            { type: "response.output_item.added", output_index, item: itemOf(message, "in_progress") },
            { type: "response.content_part.added", item_id: message.id, output_index, content_index: 0, part: part("") }
          )
        }
        message.text += event.text
        out.push({
          type: "response.output_text.delta",
          item_id: message.id,
          output_index: this.entries.indexOf(message),
          content_index: 0,
          delta: event.text,
          logprobs: []
        })
        return out
      }
      case "ToolCallDelta": {
        const out: Array<Record<string, unknown>> = []
        let call = this.calls.get(event.index)
        if (call === undefined) {
          call = { kind: "call", id: `fc_${hex()}`, callId: event.id ?? `call_${hex()}`, name: event.name ?? "", arguments: "" }
          this.calls.set(event.index, call)
          this.entries.push(call)
          out.push({ type: "response.output_item.added", output_index: this.entries.length - 1, item: itemOf(call, "in_progress") })
        } else if (event.name !== undefined && call.name === "") {
          call.name = event.name
        }
        if (event.arguments !== undefined && event.arguments.length > 0) {
          call.arguments += event.arguments
          out.push({ type: "response.function_call_arguments.delta", item_id: call.id, output_index: this.entries.indexOf(call), delta: event.arguments })
        }
        return out
      }
      case "Finish":
        this.finish = event.reason
        return []
      case "Settled":
        this.settled = event
        this.model = event.model.id
        return this.completed()
      case "Concluded":
        this.settled = event
        this.report = event.report
        this.finish = "stop"
        return this.completed()
    }
  }

  /**
   * Every item done, then `response.completed`: the answer is settled. A cut-off answer's items
   * are incomplete, and so is its last event (`response.incomplete`), as OpenAI sends them.
   */
  completed(): Array<Record<string, unknown>> {
    const status = this.status()
    const out: Array<Record<string, unknown>> = []
    this.entries.forEach((entry, output_index) => {
      if (entry.kind === "message") {
        out.push(
          { type: "response.output_text.done", item_id: entry.id, output_index, content_index: 0, text: entry.text, logprobs: [] },
          { type: "response.content_part.done", item_id: entry.id, output_index, content_index: 0, part: part(entry.text) }
        )
      } else {
        out.push({ type: "response.function_call_arguments.done", item_id: entry.id, output_index, arguments: entry.arguments })
      }
      out.push({ type: "response.output_item.done", output_index, item: itemOf(entry, status) })
    })
    out.push({ type: status === "incomplete" ? "response.incomplete" : "response.completed", response: this.snapshot(status) })
    return out
  }
}

/** The whole answer, as a `response` object. */
export const response = <E>(events: Opened<Event, E>, meta: Meta) =>
  Effect.suspend(() => {
    const builder = new Builder(meta)
    return forEachPull(events, (chunk) => {
      for (const event of chunk) builder.apply(event)
    }).pipe(
      Effect.map(() =>
        HttpServerResponse.unsafeJson(builder.snapshot(builder.status()), {
          headers: {
            [creditsChargedHeader]: String(builder.settled?.charged ?? 0),
            ...(builder.lowered === undefined ? {} : { [maxTokensHeader]: maxTokensValue(builder.lowered) }),
            ...(builder.fallback === undefined ? {} : { [offlineFallbackHeader]: offlineFallbackValue(builder.fallback) })
          }
        })
      )
    )
  })

const encoder = new TextEncoder()

/** The semantic events, framed as SSE with their sequence numbers; `response.created` first. */
export const dialect = (meta: Meta): Dialect<Event> => {
  const builder = new Builder(meta)
  let sequence = 0
  let started = false
  const frame = (event: Record<string, unknown>) => {
    const type = event["type"] as string
    return `event: ${type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence++ })}\n\n`
  }
  const opening = () => {
    if (started) return ""
    started = true
    const response = builder.snapshot("in_progress")
    return frame({ type: "response.created", response }) + frame({ type: "response.in_progress", response })
  }
  return {
    isOutput,
    // The held-back events come here before any frame: `response.created` already shows the lowered cap.
    headers: (head) => {
      const lowered = head.find((event): event is Lowered => event._tag === "Lowered")
      if (lowered !== undefined) builder.lowered = lowered
      return answerHeaders(head)
    },
    frames: (events) => {
      let text = opening()
      for (const event of events) for (const semantic of builder.apply(event)) text += frame(semantic)
      return text.length === 0 ? Chunk.empty() : Chunk.of(encoder.encode(text))
    },
    // The Responses `error` event, carrying OpenAI's envelope too: the official SDK raises an
    // APIError for an event whose data has `error` (and would hand a bare `error` event over as
    // one more event, leaving the caller to notice).
    failure: (error) => {
      const { error: body } = OpenAiErrors.fromError(error).body
      return encoder.encode(opening() + frame({ type: "error", code: body.code, message: body.message, param: body.param, error: body }))
    }
  }
}
