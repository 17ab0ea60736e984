/**
 * The whole answer of `POST /v1/messages` without `stream`: a `message` whose `content` holds the
 * answer's blocks in the order they came (thinking, text, tool calls), `model` the model that
 * answered, and the usage with Anthropic's cache counts. Also the words both dialects share:
 * stop reasons and usage.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Concluded, Event, Settled } from "@huddle/domain/answers/Completions"
import type { ConsensusReport } from "@huddle/domain/council/ConsensusReport"
import type { FailedModel, Finish } from "@huddle/domain/models/Model"
import { offlineFallbackOf } from "@huddle/domain/models/MeteredCall"
import { forEachPull, type Opened } from "@huddle/domain/shared/Streams"
import { Effect } from "effect"
import { consensusOf } from "../openai/OpenAiDialect.js"
import { creditsChargedHeader, loweredUsage, maxTokensHeader, maxTokensValue, offlineFallbackHeader, offlineFallbackValue } from "../shared/Headers.js"
import type { Message, StopReason } from "./MessagesWire.js"

/** A provider's finish reason (OpenAI's included) in Anthropic's words. */
export const stopReasonOf = (finish: Finish | undefined): StopReason => {
  if (finish === undefined) return "end_turn"
  if (finish.stopSequence !== undefined) return "stop_sequence"
  switch (finish.reason) {
    case "length":
    case "max_tokens":
      return "max_tokens"
    case "tool_calls":
    case "tool_use":
    case "function_call":
      return "tool_use"
    case "stop_sequence":
      return "stop_sequence"
    case "content_filter":
    case "refusal":
      return "refusal"
    case "pause_turn":
      return "pause_turn"
    default:
      return "end_turn"
  }
}

/** The usage as Anthropic reports it (`input_tokens` are the uncached ones, as in `Usage`). */
export const usageOf = (spent: Settled | Concluded | undefined) => ({
  input_tokens: spent?.usage.input_tokens ?? 0,
  output_tokens: spent?.usage.output_tokens ?? 0,
  cache_creation_input_tokens: spent?.usage.cache_write_tokens ?? 0,
  cache_read_input_tokens: spent?.usage.cache_read_tokens ?? 0,
  ...loweredUsage(spent?._tag === "Settled" ? spent.lowered : undefined)
})

type Block = Message["content"][number]

/** The answer's blocks as its events build them, in the order they open. */
export class Blocks {
  readonly blocks: Array<Block> = []
  private readonly thinking = new Map<number, number>()
  private readonly tools = new Map<number, number>()
  private readonly json = new Map<number, string>()

  add(event: Event): void {
    switch (event._tag) {
      case "Delta": {
        const last = this.blocks.at(-1)
        if (last?.type === "text") this.blocks[this.blocks.length - 1] = { ...last, text: last.text + event.text }
        else this.blocks.push({ type: "text", text: event.text })
        break
      }
      case "ThinkingDelta": {
        if (event.redacted !== undefined) {
          this.blocks.push({ type: "redacted_thinking", data: event.redacted })
          break
        }
        let at = this.thinking.get(event.index)
        if (at === undefined) {
          at = this.blocks.push({ type: "thinking", thinking: "", signature: "" }) - 1
          this.thinking.set(event.index, at)
        }
        const block = this.blocks[at] as Extract<Block, { type: "thinking" }>
        this.blocks[at] = { ...block, thinking: block.thinking + (event.thinking ?? ""), signature: event.signature ?? block.signature }
        break
      }
      case "ToolCallDelta": {
        let at = this.tools.get(event.index)
        if (at === undefined) {
          at = this.blocks.push({ type: "tool_use", id: event.id ?? "", name: event.name ?? "", input: {} }) - 1
          this.tools.set(event.index, at)
        }
        const block = this.blocks[at] as Extract<Block, { type: "tool_use" }>
        this.json.set(at, (this.json.get(at) ?? "") + (event.arguments ?? ""))
        this.blocks[at] = { ...block, id: event.id ?? block.id, name: event.name ?? block.name }
        break
      }
      default:
        break
    }
  }

  /** The blocks, each tool call's input parsed from its arguments (`{}` when they are not an object). */
  done(): ReadonlyArray<Block> {
    return this.blocks.map((block, at) => {
      if (block.type !== "tool_use") return block
      const text = this.json.get(at) ?? ""
      return { ...block, input: parseInput(text) }
    })
  }
}

/** A tool call's arguments as an object: what Anthropic's `input` always is. */
export const parseInput = (text: string): unknown => {
  if (text.trim() === "") return {}
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : { value: parsed }
  } catch {
    return { arguments: text }
  }
}

/** The whole answer, as a `message`. */
export const message = <E>(events: Opened<Event, E>, id: string, asked: string) => {
  const blocks = new Blocks()
  const acc = {
    model: asked,
    finish: undefined as Finish | undefined,
    spent: undefined as Settled | Concluded | undefined,
    report: undefined as ConsensusReport | undefined,
    fallback: undefined as ReadonlyArray<FailedModel> | undefined
  }
  return Effect.map(
    forEachPull(events, (chunk) => {
      for (const event of chunk) {
        if (event._tag === "Answering") {
          acc.model = event.model.id
          acc.fallback = offlineFallbackOf(event)
        } else if (event._tag === "Finish") acc.finish = event
        else if (event._tag === "Settled") acc.spent = event
        else if (event._tag === "Concluded") {
          acc.spent = event
          acc.report = event.report
        } else blocks.add(event)
      }
    }),
    () => {
      const body: Message = {
        id,
        type: "message",
        role: "assistant",
        model: acc.model,
        content: blocks.done(),
        stop_reason: stopReasonOf(acc.finish),
        stop_sequence: acc.finish?.stopSequence ?? null,
        usage: usageOf(acc.spent),
        ...(acc.report === undefined ? {} : { consensus: consensusOf(acc.report) })
      }
      const lowered = acc.spent?._tag === "Settled" ? acc.spent.lowered : undefined
      return HttpServerResponse.unsafeJson(body, {
        headers: {
          [creditsChargedHeader]: String(acc.spent?.charged ?? 0),
          ...(lowered === undefined ? {} : { [maxTokensHeader]: maxTokensValue(lowered) }),
          ...(acc.fallback === undefined ? {} : { [offlineFallbackHeader]: offlineFallbackValue(acc.fallback) })
        }
      })
    }
  )
}
