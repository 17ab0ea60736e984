/**
 * The person's own preferences. Each may be left unset, and is then inherited (the org's default
 * in an org, else Huddle's); an org's enforced policy still overrides what is chosen here.
 */
import { Preferences } from "@huddle/domain/settings/Preferences"
import { Schema } from "effect"
import { useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { SettingSelect } from "../orgs/SettingSelect.js"

const keys = ["model_tier", "mode", "risk_tolerance", "auto_execute"] as const
type Draft = Partial<Record<(typeof keys)[number], string | boolean>>

const draftOf = (preferences: Preferences): Draft =>
  Object.fromEntries(keys.flatMap((key) => preferences[key] === undefined ? [] : [[key, preferences[key]]]))

export const PreferencesForm = ({ saved, onSaved }: { readonly saved: Preferences; readonly onSaved: () => Promise<void> }) => {
  const api = useApi()
  const [draft, setDraft] = useState<Draft | null>(null)
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [said, setSaid] = useState("")
  const current = draft ?? draftOf(saved)
  const unsaved = JSON.stringify(current) !== JSON.stringify(draftOf(saved))

  const onSubmit = async (event: Event) => {
    event.preventDefault()
    // The selects offer only the schema's values: the draft always decodes.
    const payload = Schema.decodeUnknownSync(Preferences)(current)
    setPending(true)
    const result = await api((client) => client.me.setPreferences({ payload }))
    setPending(false)
    if (result._tag === "Left") return setProblem(result.left)
    setProblem(null)
    setDraft(null)
    setSaid("Saved. Your next requests follow these preferences.")
    await onSaved()
  }

  return (
    <form class="card" onSubmit={onSubmit} aria-label="Your preferences" noValidate>
      <h2>Your preferences</h2>
      <p class="hint">Unset, a preference is inherited: from the organization's defaults in an organization, else Huddle's. An organization's enforced policy comes before yours.</p>
      {keys.map((key) => (
        <SettingSelect key={key} setting={key} value={current[key]} none="Not set (inherited)" onValue={(value) => {
          setSaid("")
          setDraft({ ...current, [key]: value })
        }} />
      ))}
      <ProblemNote problem={problem} />
      <p class="notice" role="status">{said}</p>
      <button type="submit" disabled={pending || !unsaved}>{pending ? "Saving…" : "Save preferences"}</button>
    </form>
  )
}
