import { Schema } from "effect"
import { HuddleMode, ModelTier, RiskTolerance } from "./Preferences.js"

/** An organization's enforced policies: they override members and per-request parameters. */
export class OrgPolicies extends Schema.Class<OrgPolicies>("OrgPolicies")({
  /** The highest tier members may use. */
  model_tier: Schema.optional(ModelTier),
  risk_tolerance: Schema.optional(RiskTolerance),
  auto_execute: Schema.optional(Schema.Boolean),
  /** Whether the org pool pays when a member's personal credits cannot (default: yes). */
  credit_fallback: Schema.optional(Schema.Boolean)
}) {}

/** Where an effective setting came from, highest precedence first. */
export const DecidedBy = Schema.Literal("org_policy", "request", "personal", "org_default", "service_default")
export type DecidedBy = typeof DecidedBy.Type

const setting = <A, I>(value: Schema.Schema<A, I>) => Schema.Struct({ value, decided_by: DecidedBy })

/** The settings a request runs with, each with the rule that decided it. */
export class EffectiveSettings extends Schema.Class<EffectiveSettings>("EffectiveSettings")({
  model_tier: setting(ModelTier),
  risk_tolerance: setting(RiskTolerance),
  auto_execute: setting(Schema.Boolean),
  mode: setting(HuddleMode),
  credit_fallback: setting(Schema.Boolean)
}) {}

export const serviceDefaults = {
  model_tier: "standard",
  risk_tolerance: "medium",
  auto_execute: true,
  mode: "single",
  credit_fallback: true
} as const

export const tierRank: Record<ModelTier, number> = { economy: 0, standard: 1, premium: 2 }
