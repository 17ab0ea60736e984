/**
 * The huddle's SSE dialect: `stage` and `token` events as the run goes, then `metadata` (the
 * reply) and `done`; a failure after the stream began is an `error` event, then `done` with
 * status `failed`. (`EventStream` sends the comment heartbeats.)
 */
import { HuddleReply } from "@huddle/domain/huddle/Huddle"
import type { HuddleEvent } from "@huddle/domain/huddle/Huddles"
import { isCommitted } from "@huddle/domain/huddle/PipelineEvent"
import { Chunk, Schema } from "effect"
import * as ErrorTable from "../shared/ErrorTable.js"
import type { Dialect } from "../shared/EventStream.js"
import { maxTokensHeader, maxTokensValue, offlineFallbackHeader, offlineFallbackValue } from "../shared/Headers.js"

const encoder = new TextEncoder()

export const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

const encodeReply = Schema.encodeSync(HuddleReply)

const frameOf = (event: HuddleEvent): string => {
  switch (event._tag) {
    case "Stage":
      return frame("stage", { stage: event.stage, status: event.status, ...event.detail })
    case "Token":
      return frame("token", { text: event.text })
    case "Reply":
      return frame("metadata", encodeReply(event.reply)) + frame("done", { status: event.reply.status })
  }
}

/** The huddle dialect. */
export const dialect: Dialect<HuddleEvent> = {
  // A council's run is long: the response starts with its first round, once its credits are held.
  isOutput: (event) => event._tag !== "Reply" && isCommitted(event),
  // The `execution` stage's start, held back with the run's first events, says when the credits lowered the cap.
  // So does the `execution` stage event that says the offline model stands in for failed configured models.
  headers: (head) => {
    const out: Record<string, string> = {}
    for (const event of head) {
      if (event._tag !== "Stage") continue
      const lowered = event.detail["max_tokens_lowered"] as { from: number; to: number } | undefined
      if (lowered !== undefined) out[maxTokensHeader] = maxTokensValue(lowered)
      const fallback = event.detail["offline_fallback"] as ReadonlyArray<{ model: string; reason: string }> | undefined
      if (fallback !== undefined) out[offlineFallbackHeader] = offlineFallbackValue(fallback)
    }
    return out
  },
  frames: (events) => {
    let text = ""
    for (const event of events) text += frameOf(event)
    return text.length === 0 ? Chunk.empty() : Chunk.of(encoder.encode(text))
  },
  failure: (error) => {
    // The envelope of a failure after streaming began, from the one error table.
    const { error: code, message } = ErrorTable.envelopeOf(error)
    return encoder.encode(frame("error", { error: code, message }) + frame("done", { status: "failed" }))
  }
}
