/**
 * What a pipeline run says as it goes: each stage as it starts and ends, the answer's tokens,
 * and, last, `Done` with the outcome. A council's rounds are stages of the execution.
 */
import type { Effect, Stream } from "effect"
import type { HuddleMode } from "../settings/Preferences.js"
import type { CouncilEvent } from "../council/Council.js"
import type { CouncilRound } from "../council/ConsensusReport.js"
import type { FailedModel } from "../models/Model.js"
import type { InsufficientCredits, InvalidRequest, NotFound, PolicyViolation, Unauthorized, UpstreamUnavailable } from "../shared/Errors.js"
import { lastOf } from "../shared/Streams.js"
import { wordGroups } from "../shared/Words.js"
import type { HuddleMessage } from "./Huddle.js"
import type { Intent } from "./Intent.js"

/** The stages of a run; a council's rounds are stages of its execution. */
export type StageName = "context" | "retrieval" | "planning" | "review" | "execution" | CouncilRound | "completion"

/** `progress`: something happened within a stage (a council participant finished its round). */
export type StageStatus = "started" | "progress" | "completed" | "skipped"

export type PipelineEvent =
  | {
    readonly _tag: "Stage"
    readonly stage: StageName
    readonly status: StageStatus
    readonly detail: Readonly<Record<string, unknown>>
  }
  | { readonly _tag: "Token"; readonly text: string }
  /** Always the last event of a run that did not fail. */
  | { readonly _tag: "Done"; readonly outcome: Outcome }

export interface Outcome {
  /** Its `mode` is the mode that answered (`auto` only while it awaits review). */
  readonly intent: Intent
  /** The mode the settings chose (requested, preferred or default). */
  readonly requestedMode: HuddleMode
  /** Whether the answer came from the offline provider. */
  readonly offline: boolean
  /** Set when the offline model answered in place of configured models that failed: which, and why. */
  readonly offlineFallback?: ReadonlyArray<FailedModel> | undefined
  /** The answer recorded in the intent's session with the completed intent (a session's intents only). */
  readonly answer?: HuddleMessage | undefined
}

export type PipelineError = InvalidRequest | NotFound | PolicyViolation | InsufficientCredits | UpstreamUnavailable | Unauthorized

/** Whether a run has started spending: from here on a streamed failure is framed, not an HTTP error. */
export const isCommitted = (event: PipelineEvent): boolean =>
  event._tag === "Token" || (event._tag === "Stage" && event.stage === "proposals")

/** The outcome of a run: its `Done` event (every run that does not fail ends with one). */
export const outcomeOf = <E, R>(events: Stream.Stream<PipelineEvent, E, R>): Effect.Effect<Outcome, E, R> =>
  lastOf(events, (event) => event._tag === "Done" ? event.outcome : undefined, "A pipeline run")

export const stage = (
  name: StageName,
  status: StageStatus,
  detail: Readonly<Record<string, unknown>> = {}
): PipelineEvent => ({ _tag: "Stage", stage: name, status, detail })

/** A finished text as tokens: groups of a few words whose concatenation is the text. */
export const tokensOf = (text: string): ReadonlyArray<PipelineEvent> => wordGroups(text).map((text) => ({ _tag: "Token", text }))

/** A council's event as a stage of the run. */
export const councilStage = (event: Exclude<CouncilEvent, { readonly _tag: "Concluded" }>): PipelineEvent => {
  switch (event._tag) {
    case "RoundStarted":
      return stage(event.round, "started", { seats: event.seats })
    case "SeatFinished":
      return stage(event.round, "progress", {
        seat: event.seat,
        model: event.model,
        outcome: event.outcome,
        ...(event.reason === undefined ? {} : { reason: event.reason })
      })
    case "RoundEnded":
      return stage(event.round, "completed", event.cut ? { cut_by_deadline: true } : {})
    case "Escalated":
      return stage("execution", "progress", { mode: "multi", decided_by: "auto", reason: event.reason })
  }
}
