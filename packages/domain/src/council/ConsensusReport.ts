/**
 * What a council run reports (DESIGN §6, plus what makes conformity and failure visible): the
 * consensus, who endorsed it, every dissent in the dissenter's own words, each participant's
 * position before and after the critique, who chaired, who was dropped and why, and whether the
 * run was degraded. It travels in the huddle's reply, the stream's `metadata` event, the stored
 * message, the intent, and chat completions' `consensus` field.
 */
import { Schema } from "effect"
import { Usage } from "../models/Model.js"

export const CouncilRound = Schema.Literal("proposals", "critique", "synthesis", "ratification")
export type CouncilRound = typeof CouncilRound.Type

export const rounds: ReadonlyArray<CouncilRound> = CouncilRound.literals

/** How a participant answered the ratification (`dropped`: it was no longer in the council). */
export const Vote = Schema.Literal("endorse", "dissent", "abstain", "dropped")
export type Vote = typeof Vote.Type

export class CouncilParticipant extends Schema.Class<CouncilParticipant>("CouncilParticipant")({
  /** The seat, 1-based, in the order the participants were chosen; stable within a run. */
  seat: Schema.Int,
  model: Schema.String,
  /** The position it proposed, before seeing anyone else's (null: it gave none). */
  initial_position: Schema.NullOr(Schema.String),
  /** Its position after the critique round (DESIGN §6's `position`). */
  position: Schema.NullOr(Schema.String),
  /** Whether it said it changed its position after reading the others, and the reason it gave. */
  changed: Schema.Boolean,
  change_reason: Schema.NullOr(Schema.String),
  vote: Vote,
  /** Whether it endorsed the consensus; null when it did not ratify (abstained, dropped). */
  endorsed: Schema.NullOr(Schema.Boolean),
  usage: Usage,
  credits: Schema.Int
}) {}

export class Dissent extends Schema.Class<Dissent>("Dissent")({
  seat: Schema.Int,
  model: Schema.String,
  /** What the dissenter holds instead, in its own words. */
  claim: Schema.String,
  rationale: Schema.String
}) {}

export class Dropped extends Schema.Class<Dropped>("Dropped")({
  seat: Schema.Int,
  model: Schema.String,
  round: CouncilRound,
  reason: Schema.String
}) {}

export class Chair extends Schema.Class<Chair>("Chair")({
  seat: Schema.Int,
  model: Schema.String,
  /** Chairs that failed before this one, with the reason. */
  replaced: Schema.Array(Schema.Struct({ seat: Schema.Int, model: Schema.String, reason: Schema.String }))
}) {}

export class ConsensusReport extends Schema.Class<ConsensusReport>("ConsensusReport")({
  text: Schema.String,
  /** The consensus in one sentence, as the chair stated it. */
  position: Schema.String,
  /** Endorsements over the participants that ratified (endorsed or dissented); 0 when none did. */
  agreement_ratio: Schema.Number,
  participants: Schema.Array(CouncilParticipant),
  dissents: Schema.Array(Dissent),
  dropped: Schema.Array(Dropped),
  /** The rounds that ran (4 for a complete run). */
  rounds: Schema.Int,
  chair: Chair,
  /** Fewer participants than planned, a chair replaced, a round cut by the deadline, or nobody ratified. */
  degraded: Schema.Boolean,
  degraded_reasons: Schema.Array(Schema.String),
  planned_participants: Schema.Int
}) {}

/** Endorsements over ratifications: abstentions and dropped participants do not count either way. */
export const agreementRatio = (votes: ReadonlyArray<Vote>): number => {
  const endorse = votes.filter((vote) => vote === "endorse").length
  const ratified = endorse + votes.filter((vote) => vote === "dissent").length
  return ratified === 0 ? 0 : endorse / ratified
}
