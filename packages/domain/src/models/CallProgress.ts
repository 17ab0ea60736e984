/**
 * What a running metered call has consumed so far, kept as the router's chunks pass on their way
 * to the caller as the call's events: what settling the call reads (`pricedOf`).
 */
import { Chunk } from "effect"
import { type CatalogModel, costOf, Usage } from "./Model.js"
import type { RouterChunk } from "./Router.js"
import type { CallEvent, Lowered, Settled } from "./CallEvent.js"

export interface Progress {
  model: CatalogModel
  reported: Usage | undefined
  /** Characters of output (text and tool calls) so far. */
  chars: number
  /** What earlier attempts reported before failing, at their own models' prices. */
  earlier: number
  settled: Settled | undefined
  lowered: Lowered | undefined
  /**
   * The model's finish, held back until the call is settled: a client takes the finish (its
   * `finish_reason`, its stop) for the end of the answer, which must not reach it before the
   * charge is written (decision 0041). Let go at once if more output follows it.
   */
  finish: Extract<CallEvent, { _tag: "Finish" }> | undefined
}

/** A call about to try `primary`, nothing consumed yet. */
export const progressOf = (primary: CatalogModel): Progress => ({
  model: primary,
  reported: undefined,
  chars: 0,
  earlier: 0,
  settled: undefined,
  lowered: undefined,
  finish: undefined
})

/**
 * What a call consumed: the provider's counts when it reported them; otherwise, once anything was
 * produced, the estimated input and the output's characters at about four a token.
 */
export const consumedOf = (reported: Usage | undefined, outputChars: number, estimatedInput: number): Usage =>
  // Whole counts by construction: not validated again.
  reported ?? new Usage({ input_tokens: outputChars > 0 ? estimatedInput : 0, output_tokens: Math.ceil(outputChars / 4) }, true)

/** What the call consumed so far, and its cost; `charged` is 0 until settled. */
export const pricedOf = (progress: Progress, estimatedInput: number): { readonly settled: Settled; readonly cost: number } => {
  const usage = consumedOf(progress.reported, progress.chars, estimatedInput)
  return {
    settled: {
      _tag: "Settled",
      model: progress.model,
      usage,
      reported: progress.reported !== undefined,
      consumed: progress.chars > 0 || progress.reported !== undefined || progress.earlier > 0,
      charged: 0,
      lowered: progress.lowered
    },
    cost: progress.earlier + costOf(progress.model, usage)
  }
}

/** The router's chunks as the call's events; the progress that settling reads is kept as they pass. */
export const eventsOf = (progress: Progress, chunks: Chunk.Chunk<RouterChunk>): Chunk.Chunk<CallEvent> => {
  const out: Array<CallEvent> = []
  const letFinishGo = () => {
    if (progress.finish !== undefined) out.push(progress.finish)
    progress.finish = undefined
  }
  for (const chunk of chunks) {
    if (chunk._tag !== "Usage" && chunk._tag !== "Finish") letFinishGo()
    switch (chunk._tag) {
      case "Attempt":
        // A failed attempt's reported usage is its own model's, not the next one's.
        if (progress.reported !== undefined) progress.earlier += costOf(progress.model, progress.reported)
        progress.reported = undefined
        progress.model = chunk.model
        out.push({ _tag: "Answering", model: chunk.model, failed: chunk.failed })
        break
      case "Failed":
        out.push({ _tag: "AttemptFailed", model: chunk.model, reason: chunk.reason, willRetry: chunk.willRetry })
        break
      case "Delta":
        progress.chars += chunk.text.length
        out.push(chunk)
        break
      case "ToolCallDelta":
        progress.chars += (chunk.name?.length ?? 0) + (chunk.arguments?.length ?? 0)
        out.push(chunk)
        break
      case "ThinkingDelta":
        progress.chars += (chunk.thinking?.length ?? 0) + (chunk.redacted?.length ?? 0)
        out.push(chunk)
        break
      case "Usage":
        progress.reported = chunk.usage
        break
      case "Finish":
        letFinishGo()
        progress.finish = chunk
        break
    }
  }
  return Chunk.unsafeFromArray(out)
}
