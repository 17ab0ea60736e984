import { Schema } from "effect"
import { Usage } from "../models/Model.js"
import { EffectiveSettings } from "../settings/Policy.js"
import { HuddleMode } from "../settings/Preferences.js"
import { Line } from "../shared/WireString.js"
import { ConsensusReport } from "../council/ConsensusReport.js"
import { GroundingReport } from "../grounding/GroundingReport.js"

export const SessionTitle = Line.pipe(Schema.compose(Schema.Trim), Schema.minLength(1), Schema.maxLength(200))

/** A file passage an answer is grounded in (filled once a repository is connected). */
export class Reference extends Schema.Class<Reference>("Reference")({
  path: Schema.String,
  start_line: Schema.Int,
  end_line: Schema.Int,
  /** Why the passage was chosen for the answer. */
  why: Schema.optional(Schema.String)
}) {}

export class HuddleMessage extends Schema.Class<HuddleMessage>("HuddleMessage")({
  id: Schema.String,
  role: Schema.Literal("user", "assistant"),
  content: Schema.String,
  mode: Schema.NullOr(HuddleMode),
  intent_id: Schema.NullOr(Schema.String),
  models: Schema.Array(Schema.String),
  usage: Schema.NullOr(Usage),
  credits_charged: Schema.Int,
  references: Schema.Array(Reference),
  /** The council's report, for an answer a council gave. */
  consensus: Schema.optional(ConsensusReport),
  created_at: Schema.DateTimeUtc
}) {}

export class HuddleSession extends Schema.Class<HuddleSession>("HuddleSession")({
  id: Schema.String,
  title: Schema.String,
  org_id: Schema.NullOr(Schema.String),
  workspace_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

export class HuddleSessionWithMessages extends Schema.Class<HuddleSessionWithMessages>("HuddleSessionWithMessages")({
  ...HuddleSession.fields,
  messages: Schema.Array(HuddleMessage)
}) {}

/** The answer to a huddle message (the non-streaming body; the `metadata` event of a stream). */
export class HuddleReply extends Schema.Class<HuddleReply>("HuddleReply")({
  session_id: Schema.String,
  message_id: Schema.NullOr(Schema.String),
  intent_id: Schema.String,
  status: Schema.Literal("completed", "awaiting_review"),
  /** The mode that answered (`auto` only while awaiting review: it decides when it runs). */
  mode: HuddleMode,
  requested_mode: HuddleMode,
  /** Why auto mode answered in the mode it did. */
  mode_reason: Schema.optional(Schema.String),
  output: Schema.NullOr(Schema.String),
  references: Schema.Array(Reference),
  usage: Usage,
  credits_charged: Schema.Int,
  models: Schema.Array(Schema.String),
  /** The effective settings and the rule that decided each. */
  policy: EffectiveSettings,
  /** Set when the answer comes from the offline provider, not a language model. */
  offline: Schema.Boolean,
  /**
   * Set when the offline model answered in place of the configured models because they failed
   * (`HUDDLE_OFFLINE_FALLBACK=on`): each model tried, and why it failed.
   */
  offline_fallback: Schema.optional(Schema.Array(Schema.Struct({ model: Schema.String, reason: Schema.String }))),
  /**
   * Set when the member's credits could not cover the worst case of the answer's full length
   * but could cover a shorter one: the output cap it ran under (`to`) and the one it had (`from`).
   */
  max_tokens_lowered: Schema.optional(Schema.Struct({ from: Schema.Int, to: Schema.Int })),
  /** Multi mode: the council's consensus report (DESIGN §6). */
  consensus: Schema.optional(ConsensusReport),
  /** When the workspace has a connected repository: the mode, what was analysed, the excerpts, the citations checked. */
  grounding: Schema.optional(GroundingReport)
}) {}
