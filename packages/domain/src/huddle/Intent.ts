import { Schema } from "effect"
import { EffectiveSettings } from "../settings/Policy.js"
import { HuddleMode } from "../settings/Preferences.js"
import { RiskFlag } from "./RiskFlags.js"
import { ChatRole, Usage } from "../models/Model.js"
import { ConsensusReport } from "../council/ConsensusReport.js"
import { GroundingReport } from "../grounding/GroundingReport.js"

export const IntentStatus = Schema.Literal(
  "received",
  "planning",
  "awaiting_review",
  "executing",
  "completed",
  "failed",
  "rejected"
)
export type IntentStatus = typeof IntentStatus.Type

/** What the planning stage decided, kept so that an approved intent executes as reviewed. */
export class Plan extends Schema.Class<Plan>("Plan")({
  models: Schema.Array(Schema.String),
  /** The most output tokens the answer may take (lowered, when it ran, to what the credits covered). */
  max_output_tokens: Schema.Int,
  /** Set when the member's credits lowered `max_output_tokens` from this, rather than refusing (402). */
  max_output_tokens_lowered_from: Schema.optional(Schema.Int),
  estimated_input_tokens: Schema.Int,
  worst_case_credits: Schema.Int,
  temperature: Schema.Number,
  memories_used: Schema.Int,
  history_messages: Schema.Int,
  /**
   * The exact model input, kept so that an approved intent runs as it was reviewed. It holds the
   * injected memories, so it never leaves the service (see `withoutPrompt`).
   */
  messages: Schema.optional(
    Schema.Array(Schema.Struct({ role: ChatRole, content: Schema.String }))
  ),
  /** The catalog model the request named, if it named one (a plan for a tier is re-planned when a policy lowers it). */
  requested_model: Schema.optional(Schema.String),
  /** What the review stage flags for a human under a low risk tolerance: each category with what matched. */
  flags: Schema.Array(RiskFlag),
  /** A council's seats (model ids by seat) and the worst case of its whole run (multi and auto mode). */
  council: Schema.optional(Schema.Struct({ seats: Schema.Array(Schema.String), worst_case_credits: Schema.Int })),
  /** Why auto mode chose the mode it did, once it chose. */
  mode_reason: Schema.optional(Schema.String),
  /** The repository excerpts in `messages`, kept to verify the answer's citations when it runs. */
  grounding: Schema.optional(Schema.Struct({
    repository_id: Schema.String,
    index_version: Schema.Int,
    report: GroundingReport,
    excerpts: Schema.Array(Schema.Struct({ path: Schema.String, start_line: Schema.Int, end_line: Schema.Int, text: Schema.String }))
  }))
}) {}

export class IntentError extends Schema.Class<IntentError>("IntentError")({
  error: Schema.String,
  message: Schema.String
}) {}

export class Intent extends Schema.Class<Intent>("Intent")({
  id: Schema.String,
  status: IntentStatus,
  input: Schema.String,
  mode: HuddleMode,
  org_id: Schema.NullOr(Schema.String),
  session_id: Schema.NullOr(Schema.String),
  settings: EffectiveSettings,
  plan: Schema.NullOr(Plan),
  output: Schema.NullOr(Schema.String),
  models: Schema.Array(Schema.String),
  usage: Schema.NullOr(Usage),
  credits_charged: Schema.Int,
  /** The council's report (multi mode, or auto mode that convened one). */
  consensus: Schema.optional(ConsensusReport),
  /** What grounding in the workspace's repository did: excerpts, verified references, citations checked. */
  grounding: Schema.optional(GroundingReport),
  error: Schema.NullOr(IntentError),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

/** Who submitted an intent: a list of an org's intents, as its admins read it, holds every member's. */
export class Submitter extends Schema.Class<Submitter>("Submitter")({
  user_id: Schema.String,
  email: Schema.String
}) {}

/** An intent in a list (`intent.list`), with who submitted it. */
export class ListedIntent extends Intent.extend<ListedIntent>("ListedIntent")({
  submitted_by: Submitter
}) {}

/** The intent as callers see it: without the stored model input (memories, history). */
export const withoutPrompt = (intent: Intent): Intent => {
  if (intent.plan === null || intent.plan.messages === undefined) return intent
  const { messages: _, ...plan } = intent.plan
  return new Intent({ ...intent, plan: new Plan(plan) }, { disableValidation: true })
}

/** The intent as a list shows it: without its prompt, with its submitter. */
export const listed = (intent: Intent, submitter: { readonly userId: string; readonly email: string }): ListedIntent =>
  new ListedIntent(
    { ...withoutPrompt(intent), submitted_by: new Submitter({ user_id: submitter.userId, email: submitter.email }) },
    { disableValidation: true }
  )
