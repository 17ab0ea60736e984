import { Schema } from "effect"

export const ModelTier = Schema.Literal("economy", "standard", "premium")
export type ModelTier = typeof ModelTier.Type

export const RiskTolerance = Schema.Literal("low", "medium", "high")
export type RiskTolerance = typeof RiskTolerance.Type

export const HuddleMode = Schema.Literal("single", "multi", "auto")
export type HuddleMode = typeof HuddleMode.Type

/** A member's personal preferences; every field is optional (unset means "inherit"). */
export class Preferences extends Schema.Class<Preferences>("Preferences")({
  model_tier: Schema.optional(ModelTier),
  risk_tolerance: Schema.optional(RiskTolerance),
  auto_execute: Schema.optional(Schema.Boolean),
  mode: Schema.optional(HuddleMode)
}) {}
