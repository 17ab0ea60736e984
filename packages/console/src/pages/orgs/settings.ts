/** The settings' names and values as the console says them. */
import type { DecidedBy } from "@huddle/domain/settings/Policy"

export const settingNames = {
  model_tier: "Model tier",
  risk_tolerance: "Risk tolerance",
  auto_execute: "Run approved actions automatically",
  mode: "Huddle mode",
  credit_fallback: "Pool pays when personal credits run out"
} as const
export type Setting = keyof typeof settingNames

/** Each setting's values, in the order offered. */
export const choices = {
  model_tier: ["economy", "standard", "premium"],
  risk_tolerance: ["low", "medium", "high"],
  auto_execute: [true, false],
  mode: ["single", "multi", "auto"],
  credit_fallback: [true, false]
} as const

export const valueText = (value: string | boolean): string =>
  value === true ? "Yes" : value === false ? "No" : value.charAt(0).toUpperCase() + value.slice(1)

export const decidedByText: Record<DecidedBy, string> = {
  org_policy: "enforced policy",
  request: "the request",
  personal: "their own preference",
  org_default: "org default",
  service_default: "Huddle's default"
}

/** A select's value for an optional setting: "" for none. */
export const fromOption = (option: string): string | boolean | undefined =>
  option === "" ? undefined : option === "true" ? true : option === "false" ? false : option
