/**
 * Resolves the settings a request runs with. Precedence, highest first: enforced org policy →
 * per-request parameter → the member's personal preference → the org's default preference →
 * the service default. An enforced `model_tier` is a ceiling: anything above it is lowered to
 * it; other enforced policies are exact.
 */
import type { ModelTier, Preferences } from "./Preferences.js"
import { type DecidedBy, EffectiveSettings, type OrgPolicies, serviceDefaults, tierRank } from "./Policy.js"

export interface Inputs {
  readonly policies: OrgPolicies | undefined
  readonly request: Preferences | undefined
  readonly personal: Preferences | undefined
  readonly orgDefaults: Preferences | undefined
}

type Key = "model_tier" | "risk_tolerance" | "auto_execute" | "mode"

const firstOf = <K extends Key>(inputs: Inputs, key: K): { value: NonNullable<Preferences[K]>; decided_by: DecidedBy } => {
  const layers: ReadonlyArray<readonly [DecidedBy, Preferences | undefined]> = [
    ["request", inputs.request],
    ["personal", inputs.personal],
    ["org_default", inputs.orgDefaults]
  ]
  for (const [decidedBy, layer] of layers) {
    const value = layer?.[key]
    if (value !== undefined) return { value: value as NonNullable<Preferences[K]>, decided_by: decidedBy }
  }
  return { value: serviceDefaults[key] as NonNullable<Preferences[K]>, decided_by: "service_default" }
}

const enforced = <A>(policy: A | undefined, otherwise: { value: A; decided_by: DecidedBy }) =>
  policy === undefined ? otherwise : { value: policy, decided_by: "org_policy" as const }

export const resolve = (inputs: Inputs): EffectiveSettings => {
  const policies = inputs.policies
  const wantedTier = firstOf(inputs, "model_tier")
  const ceiling: ModelTier | undefined = policies?.model_tier
  const model_tier = ceiling !== undefined && tierRank[wantedTier.value] > tierRank[ceiling]
    ? { value: ceiling, decided_by: "org_policy" as const }
    : wantedTier
  // Built on every request from values already decoded; the types check its shape.
  return new EffectiveSettings({
    model_tier,
    risk_tolerance: enforced(policies?.risk_tolerance, firstOf(inputs, "risk_tolerance")),
    auto_execute: enforced(policies?.auto_execute, firstOf(inputs, "auto_execute")),
    mode: firstOf(inputs, "mode"),
    credit_fallback: policies?.credit_fallback === undefined
      ? { value: serviceDefaults.credit_fallback, decided_by: "service_default" }
      : { value: policies.credit_fallback, decided_by: "org_policy" }
  }, { disableValidation: true })
}

/** Whether an explicitly named tier is allowed under the org's policies. */
export const tierAllowed = (policies: OrgPolicies | undefined, tier: ModelTier): boolean =>
  policies?.model_tier === undefined || tierRank[tier] <= tierRank[policies.model_tier]
