/**
 * What members will get under the policies and defaults being edited, before they are saved:
 * the effective settings by the domain's own precedence (`Policies.resolve`), for a member with
 * no preference of their own, for each preference a member may have, and for the admin.
 * Admins do not read members' personal preferences, so the preview covers every possible one.
 */
import type { Preferences } from "@huddle/domain/settings/Preferences"
import { resolve } from "@huddle/domain/settings/Policies"
import type { EffectiveSettings, OrgPolicies } from "@huddle/domain/settings/Policy"
import { choices, decidedByText, settingNames, valueText } from "./settings.js"

interface Props {
  readonly policies: OrgPolicies
  readonly defaults: Preferences
  readonly yours: Preferences
  readonly unsaved: boolean
}

const keys = ["model_tier", "risk_tolerance", "auto_execute", "mode", "credit_fallback"] as const
type Key = (typeof keys)[number]

const outcome = (settings: EffectiveSettings, key: Key) => {
  const { decided_by, value } = settings[key]
  return `${valueText(value)} (${decidedByText[decided_by]})`
}

export const SettingsPreview = ({ policies, defaults, yours, unsaved }: Props) => {
  const settingsWith = (personal: Preferences | undefined) => resolve({ policies, orgDefaults: defaults, personal, request: undefined })
  const none = settingsWith(undefined)
  const you = settingsWith(yours)
  /** What a member who prefers each value gets; credit fallback is no personal preference. */
  const withPreference = (key: Key) =>
    key === "credit_fallback"
      ? "Not a personal preference"
      : choices[key].map((choice) => `${valueText(choice)} → ${outcome(settingsWith({ [key]: choice } as Preferences), key)}`).join("; ")
  return (
    <section class="card preview" aria-labelledby="preview-title">
      <h2 id="preview-title">What members will get{unsaved ? " (not saved yet)" : ""}</h2>
      <p class="hint">Enforced policy comes first, then a member's own preference, then the org's default, then Huddle's default.</p>
      <table class="keys">
        <thead>
          <tr>
            <th scope="col">Setting</th>
            <th scope="col">A member with no preference</th>
            <th scope="col">A member who prefers…</th>
            <th scope="col">You</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key}>
              <th scope="row" data-label="Setting">{settingNames[key]}</th>
              <td data-label="A member with no preference">{outcome(none, key)}</td>
              <td data-label="A member who prefers…">{withPreference(key)}</td>
              <td data-label="You">{outcome(you, key)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}
