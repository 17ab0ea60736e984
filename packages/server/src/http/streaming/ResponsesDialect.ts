/**
 * OpenAI's Responses wire dialect: a whole `response` object, or the semantic events the
 * official SDK's `responses.stream()` accumulates (`response.created`, `response.in_progress`,
 * `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`, …,
 * `response.completed`), each with its `sequence_number` (see `EventStream`). Both are built by
 * one `Builder`, so the streamed snapshot and the whole answer cannot disagree.
 */
import { randomUUID } from "node:crypto"
import { HttpServerResponse } from "@effect/platform"
import type { Event, Settled } from "@huddle/domain/models/Completions"
import { isOutput } from "@huddle/domain/models/MeteredCall"
import { Chunk, Effect, Stream } from "effect"
import * as OpenAiErrors from "../../api/OpenAiErrors.js"
import type { CreateResponse, ResponseObject } from "../../api/ResponsesApi.js"
import type { Dialect } from "./EventStream.js"

type Item = ResponseObject["output"][number]
type MessageItem = Extract<Item, { type: "message" }>
type CallItem = Extract<Item, { type: "function_call" }>

const hex = () => randomUUID().replace(/-/g, "")

export const newId = () => `resp_${hex()}`

/** What the answer echoes of its request. */
export interface Meta {
  readonly id: string
  readonly createdAt: number
  readonly request: CreateResponse
}

const usageOf = ({ usage }: Settled) => ({
  input_tokens: usage.input_tokens,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: usage.output_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.input_tokens + usage.output_tokens
})

/** The response as the events so far make it, and the semantic events each new one adds. */
class Builder {
  model: string
  readonly output: Array<Item> = []
  message: { readonly index: number; readonly item: MessageItem; text: string } | undefined
  readonly calls = new Map<number, { readonly index: number; readonly item: CallItem }>()
  finish = "stop"
  settled: Settled | undefined

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
      output: this.output.map((item) => structuredClone(item)),
      usage: this.settled === undefined ? null : usageOf(this.settled),
      error: null,
      incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
      instructions: request.instructions ?? null,
      max_output_tokens: request.max_output_tokens ?? null,
      temperature: request.temperature ?? null,
      top_p: request.top_p ?? null,
      tool_choice: request.tool_choice ?? "auto",
      tools: request.tools ?? [],
      text: { format: request.text?.format ?? { type: "text" } },
      parallel_tool_calls: true,
      previous_response_id: null,
      store: false,
      metadata: {}
    }
  }

  /** The semantic events of one of the call's events (without `sequence_number`). */
  apply(event: Event): Array<Record<string, unknown>> {
    switch (event._tag) {
      case "Answering":
        this.model = event.model.id
        return []
      case "AttemptFailed":
        return []
      case "Delta": {
        const opened: Array<Record<string, unknown>> = []
        if (this.message === undefined) {
          const item: MessageItem = { type: "message", id: `msg_${hex()}`, status: "in_progress", role: "assistant", content: [] }
          this.message = { index: this.output.length, item, text: "" }
          this.output.push(item)
          opened.push({ type: "response.output_item.added", output_index: this.message.index, item: structuredClone(item) })
          const part = { type: "output_text" as const, text: "", annotations: [] }
          ;(item.content as Array<typeof part>).push(part)
          opened.push({ type: "response.content_part.added", item_id: item.id, output_index: this.message.index, content_index: 0, part })
        }
        const message = this.message
        message.text += event.text
        ;(message.item.content[0] as { text: string }).text = message.text
        return [...opened, {
          type: "response.output_text.delta",
          item_id: message.item.id,
          output_index: message.index,
          content_index: 0,
          delta: event.text,
          logprobs: []
        }]
      }
      case "ToolCallDelta": {
        const out: Array<Record<string, unknown>> = []
        let call = this.calls.get(event.index)
        if (call === undefined) {
          const item: CallItem = {
            type: "function_call",
            id: `fc_${hex()}`,
            status: "in_progress",
            call_id: event.id ?? `call_${hex()}`,
            name: event.name ?? "",
            arguments: ""
          }
          call = { index: this.output.length, item }
          this.calls.set(event.index, call)
          this.output.push(item)
          out.push({ type: "response.output_item.added", output_index: call.index, item: structuredClone(item) })
        } else if (event.name !== undefined && call.item.name === "") {
          ;(call.item as { name: string }).name = event.name
        }
        if (event.arguments !== undefined && event.arguments.length > 0) {
          ;(call.item as { arguments: string }).arguments += event.arguments
          out.push({ type: "response.function_call_arguments.delta", item_id: call.item.id, output_index: call.index, delta: event.arguments })
        }
        return out
      }
      case "Finish":
        this.finish = event.reason
        return []
      case "Settled": {
        this.settled = event
        this.model = event.model.id
        const out: Array<Record<string, unknown>> = []
        const message = this.message
        if (message !== undefined) {
          ;(message.item as { status: string }).status = "completed"
          const part = { type: "output_text", text: message.text, annotations: [] }
          out.push(
            { type: "response.output_text.done", item_id: message.item.id, output_index: message.index, content_index: 0, text: message.text, logprobs: [] },
            { type: "response.content_part.done", item_id: message.item.id, output_index: message.index, content_index: 0, part },
            { type: "response.output_item.done", output_index: message.index, item: structuredClone(message.item) }
          )
        }
        for (const call of this.calls.values()) {
          ;(call.item as { status: string }).status = "completed"
          out.push(
            { type: "response.function_call_arguments.done", item_id: call.item.id, output_index: call.index, arguments: call.item.arguments },
            { type: "response.output_item.done", output_index: call.index, item: structuredClone(call.item) }
          )
        }
        out.push({ type: "response.completed", response: this.snapshot(this.status()) })
        return out
      }
    }
  }

  status(): "completed" | "incomplete" {
    return this.finish === "length" || this.finish === "max_tokens" ? "incomplete" : "completed"
  }
}

/** The whole answer, as a `response` object. */
export const response = <E>(events: Stream.Stream<Event, E>, meta: Meta) =>
  Effect.suspend(() => {
    const builder = new Builder(meta)
    return Stream.runForEach(events, (event) => Effect.sync(() => void builder.apply(event))).pipe(
      Effect.map(() =>
        HttpServerResponse.unsafeJson(builder.snapshot(builder.status()), {
          headers: { "huddle-credits-charged": String(builder.settled?.charged ?? 0) }
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
    frames: (events) => {
      let text = opening()
      for (const event of events) for (const semantic of builder.apply(event)) text += frame(semantic)
      return text.length === 0 ? Chunk.empty() : Chunk.of(encoder.encode(text))
    },
    failure: (error) => {
      const { error: body } = OpenAiErrors.fromError(error).body
      return encoder.encode(opening() + frame({ type: "error", code: body.code, message: body.message, param: body.param }))
    }
  }
}
