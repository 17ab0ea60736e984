/**
 * Anthropic's stream dialect for `POST /v1/messages` with `stream: true` (see `EventStream`):
 * `message_start` (the model that answers), then for each block of the answer in order
 * `content_block_start`, its deltas (`text_delta`, `thinking_delta`/`signature_delta`,
 * `input_json_delta`) and `content_block_stop`, then `message_delta` (the stop reason, the
 * usage with its cache counts, and a council's report in `consensus`) and `message_stop`. The
 * heartbeats are `ping` events; a failure after the stream began is an `error` event.
 */
import type { Event } from "@huddle/domain/answers/Completions"
import { isOutput } from "@huddle/domain/answers/Completions"
import type { Finish } from "@huddle/domain/models/Model"
import { Chunk } from "effect"
import { answerHeaders, consensusOf } from "../openai/OpenAiDialect.js"
import type { Dialect } from "../shared/EventStream.js"
import * as AnthropicErrors from "./AnthropicErrors.js"
import { stopReasonOf, usageOf } from "./MessageResponse.js"

const encoder = new TextEncoder()
const json = JSON.stringify

const sse = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${json({ type, ...data })}\n\n`

/** The ping Anthropic sends: also what keeps a quiet stream (a council deliberating) open. */
export const ping = encoder.encode(sse("ping", {}))

/** Which block is open: its index on the wire, and what it is (`tool` and `thinking` with the event's index). */
type Open =
  | { readonly kind: "text"; readonly at: number }
  | { readonly kind: "thinking"; readonly at: number; readonly index: number }
  | { readonly kind: "tool"; readonly at: number; readonly index: number }

/** Events as Anthropic's stream events; `message_start` goes with the first frames. */
export const dialect = (id: string, asked: string): Dialect<Event> => {
  let started = false
  let model = asked
  let open: Open | undefined
  let next = 0
  let finish: Finish | undefined

  const close = (): string => {
    if (open === undefined) return ""
    const out = sse("content_block_stop", { index: open.at })
    open = undefined
    return out
  }
  const start = (block: Record<string, unknown>, opened: (at: number) => Open): string => {
    const out = close() + sse("content_block_start", { index: next, content_block: block })
    open = opened(next++)
    return out
  }
  const delta = (data: Record<string, unknown>) => sse("content_block_delta", { index: open!.at, delta: data })

  const messageStart = () =>
    sse("message_start", {
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null }
      }
    }) + sse("ping", {})

  const end = (spent: Extract<Event, { _tag: "Settled" | "Concluded" }>) => {
    const stop = spent._tag === "Concluded" ? "end_turn" : stopReasonOf(finish)
    return close() +
      sse("message_delta", {
        delta: { stop_reason: stop, stop_sequence: spent._tag === "Concluded" ? null : finish?.stopSequence ?? null },
        usage: usageOf(spent),
        ...(spent._tag === "Concluded" ? { consensus: consensusOf(spent.report) } : {})
      }) +
      sse("message_stop", {})
  }

  const frame = (event: Event): string => {
    switch (event._tag) {
      case "Answering":
        // Only before any output: the router never switches models after it.
        model = event.model.id
        return ""
      case "AttemptFailed":
      case "Lowered":
      case "Convened":
        return ""
      case "Delta": {
        const opening = open?.kind === "text" ? "" : start({ type: "text", text: "" }, (at) => ({ kind: "text", at }))
        return opening + delta({ type: "text_delta", text: event.text })
      }
      case "ThinkingDelta": {
        if (event.redacted !== undefined) {
          return start({ type: "redacted_thinking", data: event.redacted }, (at) => ({ kind: "thinking", at, index: -1 })) + close()
        }
        const opening = open?.kind === "thinking" && open.index === event.index
          ? ""
          : start({ type: "thinking", thinking: "", signature: "" }, (at) => ({ kind: "thinking", at, index: event.index }))
        return opening +
          (event.thinking === undefined ? "" : delta({ type: "thinking_delta", thinking: event.thinking })) +
          (event.signature === undefined ? "" : delta({ type: "signature_delta", signature: event.signature }))
      }
      case "ToolCallDelta": {
        const opening = open?.kind === "tool" && open.index === event.index
          ? ""
          : start({ type: "tool_use", id: event.id ?? "", name: event.name ?? "", input: {} }, (at) => ({ kind: "tool", at, index: event.index }))
        return opening + (event.arguments === undefined || event.arguments === "" ? "" : delta({ type: "input_json_delta", partial_json: event.arguments }))
      }
      case "Finish":
        finish = event
        return ""
      case "Settled":
      case "Concluded":
        return end(event)
    }
  }

  return {
    isOutput,
    headers: answerHeaders,
    heartbeat: ping,
    frames: (events) => {
      let text = ""
      for (const event of events) {
        text += frame(event)
        if (!started) {
          // After the events that name the model (`Answering`), before any block.
          if (event._tag !== "Answering" && event._tag !== "AttemptFailed" && event._tag !== "Lowered") {
            started = true
            text = messageStart() + text
          }
        }
      }
      return text.length === 0 ? Chunk.empty() : Chunk.of(encoder.encode(text))
    },
    /** A failure after the stream began: Anthropic's SDKs raise an `error` event as an APIError. */
    failure: (error) => encoder.encode(sse("error", { error: AnthropicErrors.fromError(error).body.error }))
  }
}
