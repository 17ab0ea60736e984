/**
 * An intent's execution and completion, as the pipeline runs it: once the answer's credits are
 * held the intent is recorded as executing (`begin`); however the answer ends (complete, failed,
 * the client gone) the intent records what it consumed and cost, and a completed answer is
 * charged only once it is recorded. A refused reservation fails before `begin` (after
 * `refused`), so whatever `begin` writes is written only for a request that will run.
 */
import type { Effect } from "effect"
import type { HuddleMode } from "../settings/Preferences.js"
import type { Answers } from "../answers/Answers.js"
import type { AnswerPlan } from "../answers/Planning.js"
import type { Context as CitableContext } from "../grounding/Citations.js"
import type { Grounding } from "../grounding/Grounding.js"
import type { Payer } from "../models/MeteredCall.js"
import type { InsufficientCredits, NotFound, Unauthorized } from "../shared/Errors.js"
import type { Intent, Plan } from "./Intent.js"
import type { Records } from "./IntentRecords.js"
import type { PipelineEvent } from "./PipelineEvent.js"

export interface Steps {
  /** Records the intent as executing once its credits are held; the events that announce it. */
  readonly begin: Effect.Effect<readonly [Intent, ReadonlyArray<PipelineEvent>]>
  /** What a refused reservation leaves behind (before `begin`). */
  readonly refused: (error: InsufficientCredits | Unauthorized | NotFound) => Effect.Effect<unknown>
}

export interface Run {
  /** The intent as planned (its `plan` is the stored one). */
  readonly intent: Intent
  /** Its plan priced: the models and worst cases it runs under (priced at planning, or again after review). */
  readonly priced: Pick<AnswerPlan, "single" | "council">
  readonly payer: Payer
  /** The mode the settings chose. */
  readonly requestedMode: HuddleMode
  readonly steps: Steps
}

export interface Ports {
  readonly answers: Answers["Type"]
  readonly grounding: Grounding["Type"]
  readonly records: Records
}

/** The grounding a plan carries, as what its answer's citations are checked against. */
export const citableOf = (ports: Ports, grounded: NonNullable<Plan["grounding"]>): Effect.Effect<CitableContext> =>
  ports.grounding.citable(grounded.repository_id, grounded.index_version, grounded.excerpts)
