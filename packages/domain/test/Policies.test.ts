import { describe, expect, it } from "@effect/vitest"
import { OrgPolicies, tierRank } from "@huddle/domain/settings/Policy"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { resolve, tierAllowed } from "@huddle/domain/settings/Policies"
import { Arbitrary, FastCheck as fc } from "effect"

const preferences = fc.option(Arbitrary.make(Preferences), { nil: undefined })
const policies = fc.option(Arbitrary.make(OrgPolicies), { nil: undefined })
const inputs = fc.record({ policies, request: preferences, personal: preferences, orgDefaults: preferences })

describe("settings resolution", () => {
  it.prop("an enforced policy always wins, whatever the request, personal and default values", [inputs], ([input]) => {
    const effective = resolve(input)
    const p = input.policies
    if (p?.risk_tolerance !== undefined) {
      expect(effective.risk_tolerance).toEqual({ value: p.risk_tolerance, decided_by: "org_policy" })
    }
    if (p?.auto_execute !== undefined) {
      expect(effective.auto_execute).toEqual({ value: p.auto_execute, decided_by: "org_policy" })
    }
    if (p?.credit_fallback !== undefined) {
      expect(effective.credit_fallback).toEqual({ value: p.credit_fallback, decided_by: "org_policy" })
    }
    if (p?.model_tier !== undefined) {
      // The tier policy is a ceiling: nothing above it, ever.
      expect(tierRank[effective.model_tier.value]).toBeLessThanOrEqual(tierRank[p.model_tier])
      expect(tierAllowed(p, effective.model_tier.value)).toBe(true)
    }
  })

  it.prop("without policies, the first layer that sets a value decides it", [inputs], ([input]) => {
    const effective = resolve({ ...input, policies: undefined })
    for (const key of ["model_tier", "risk_tolerance", "auto_execute", "mode"] as const) {
      const layers = [
        ["request", input.request?.[key]],
        ["personal", input.personal?.[key]],
        ["org_default", input.orgDefaults?.[key]]
      ] as const
      const first = layers.find(([, value]) => value !== undefined)
      if (first) expect(effective[key], key).toEqual({ value: first[1], decided_by: first[0] })
      else expect(effective[key].decided_by, key).toBe("service_default")
    }
  })

  it.prop("is deterministic", [inputs], ([input]) => {
    expect(resolve(input)).toEqual(resolve(structuredClone(input)))
  })

  it("lowers a request above the tier ceiling to the ceiling, and keeps one below it", () => {
    const economy = new OrgPolicies({ model_tier: "economy" })
    expect(resolve({ policies: economy, request: new Preferences({ model_tier: "premium" }), personal: undefined, orgDefaults: undefined }).model_tier)
      .toEqual({ value: "economy", decided_by: "org_policy" })
    const standard = new OrgPolicies({ model_tier: "standard" })
    expect(resolve({ policies: standard, request: new Preferences({ model_tier: "economy" }), personal: undefined, orgDefaults: undefined }).model_tier)
      .toEqual({ value: "economy", decided_by: "request" })
    expect(resolve({ policies: undefined, request: undefined, personal: undefined, orgDefaults: undefined }))
      .toMatchObject({ model_tier: { value: "standard", decided_by: "service_default" }, credit_fallback: { value: true } })
  })
})
