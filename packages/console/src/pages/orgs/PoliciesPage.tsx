/**
 * Enforced policies and default preferences. Admins edit both and see, before saving, what
 * members will then get; members read the policies they are held to.
 */
import { OrgPolicies } from "@huddle/domain/settings/Policy"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { Effect, Either, ParseResult, Schema } from "effect"
import { useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useApi, useResource } from "../../ui/useApi.js"
import { OrgFrame } from "./OrgFrame.js"
import { SettingSelect } from "./SettingSelect.js"
import { SettingsPreview } from "./SettingsPreview.js"
import { type Setting, settingNames, valueText } from "./settings.js"
import type { Membership, Profile } from "./wire.js"

export const PoliciesPage = () => (
  <OrgFrame title="Policies">
    {(org, profile) => org.role === "admin" ? <AdminPolicies org={org} profile={profile} /> : <MemberPolicies org={org} />}
  </OrgFrame>
)

const policyKeys = ["model_tier", "risk_tolerance", "auto_execute", "credit_fallback"] as const
const defaultKeys = ["model_tier", "risk_tolerance", "auto_execute", "mode"] as const

type Draft = Partial<Record<Setting, string | boolean>>

/** A draft as the schema reads it (the selects' values are strings and booleans, not yet its literals). */
const decode = <A, I>(schema: Schema.Schema<A, I>, draft: Draft): Either.Either<A, Problem> =>
  Schema.decodeUnknownEither(schema)(draft).pipe(
    Either.mapLeft((error) => ({ message: ParseResult.TreeFormatter.formatErrorSync(error), signedOut: false }))
  )

const draftOf = (values: Readonly<Partial<Record<Setting, string | boolean | undefined>>>, keys: ReadonlyArray<Setting>): Draft =>
  Object.fromEntries(keys.flatMap((key) => values[key] === undefined ? [] : [[key, values[key]]]))

const AdminPolicies = ({ org, profile }: { readonly org: Membership; readonly profile: Profile }) => {
  const api = useApi()
  const [saved, reload] = useResource((client) =>
    Effect.all({
      policies: client.orgAdmin.getPolicies({ path: { orgId: org.id } }),
      defaults: client.orgAdmin.getPreferences({ path: { orgId: org.id } })
    }, { concurrency: "unbounded" })
  )
  const [policies, setPolicies] = useState<Draft | null>(null)
  const [defaults, setDefaults] = useState<Draft | null>(null)
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [said, setSaid] = useState("")

  if (saved._tag === "Loading") return <Loading what="the policies" />
  if (saved._tag === "Failed") return <ProblemNote problem={saved.problem} />
  const policyDraft = policies ?? draftOf(saved.value.policies, policyKeys)
  const defaultDraft = defaults ?? draftOf(saved.value.defaults, defaultKeys)
  // The selects offer only the schema's values, so the drafts always decode.
  const nextPolicies = decode(OrgPolicies, policyDraft)
  const nextDefaults = decode(Preferences, defaultDraft)
  if (nextPolicies._tag === "Left") return <ProblemNote problem={nextPolicies.left} />
  if (nextDefaults._tag === "Left") return <ProblemNote problem={nextDefaults.left} />
  const unsaved = JSON.stringify(policyDraft) !== JSON.stringify(draftOf(saved.value.policies, policyKeys)) ||
    JSON.stringify(defaultDraft) !== JSON.stringify(draftOf(saved.value.defaults, defaultKeys))

  const onSubmit = async (event: Event) => {
    event.preventDefault()
    setPending(true)
    const result = await api((client) =>
      Effect.all([
        client.orgAdmin.setPolicies({ path: { orgId: org.id }, payload: nextPolicies.right }),
        client.orgAdmin.setPreferences({ path: { orgId: org.id }, payload: nextDefaults.right })
      ], { concurrency: "unbounded" })
    )
    setPending(false)
    if (result._tag === "Left") return setProblem(result.left)
    setProblem(null)
    setPolicies(null)
    setDefaults(null)
    setSaid("Saved. Members' next requests follow these settings.")
    await reload()
  }

  return (
    <form onSubmit={onSubmit} aria-label="Policies and default preferences" noValidate>
      <div class="settings-columns">
        <fieldset class="card">
          <legend>Enforced policies</legend>
          <p class="hint">Members cannot override these. A model tier is a ceiling: anything above it is lowered to it.</p>
          {policyKeys.map((key) => (
            <SettingSelect key={key} setting={key} value={policyDraft[key]} none="Not enforced" onValue={(value) => {
              setSaid("")
              setPolicies({ ...draftOf(policyDraft, policyKeys), [key]: value })
            }} />
          ))}
        </fieldset>
        <fieldset class="card">
          <legend>Default preferences</legend>
          <p class="hint">What members get unless they chose otherwise themselves.</p>
          {defaultKeys.map((key) => (
            <SettingSelect key={key} setting={key} value={defaultDraft[key]} none="No default" onValue={(value) => {
              setSaid("")
              setDefaults({ ...draftOf(defaultDraft, defaultKeys), [key]: value })
            }} />
          ))}
        </fieldset>
      </div>
      <SettingsPreview policies={nextPolicies.right} defaults={nextDefaults.right} yours={profile.preferences} unsaved={unsaved} />
      <ProblemNote problem={problem} />
      <p class="notice" role="status">{said}</p>
      <button type="submit" disabled={pending || !unsaved}>{pending ? "Saving…" : "Save policies and defaults"}</button>
      {unsaved ? <button type="button" class="secondary" onClick={() => (setPolicies(null), setDefaults(null))}>Discard changes</button> : null}
    </form>
  )
}

/** A member's view: the policies they are held to (the defaults are the admins' to read). */
const MemberPolicies = ({ org }: { readonly org: Membership }) => {
  const [policies] = useResource((client) => client.orgs.policies({ path: { orgId: org.id } }))
  if (policies._tag === "Loading") return <Loading what="the policies" />
  if (policies._tag === "Failed") return <ProblemNote problem={policies.problem} />
  const enforced = policyKeys.filter((key) => policies.value[key] !== undefined)
  return (
    <>
      <p>The admins of {org.name} enforce these settings on every request made in it. Only admins can change them.</p>
      {enforced.length === 0
        ? <p class="empty">No policy is enforced: your own preferences apply.</p>
        : (
          <dl class="card facts">
            {enforced.map((key) => [<dt key={`${key}-name`}>{settingNames[key]}</dt>, <dd key={key}>{valueText(policies.value[key]!)}</dd>])}
          </dl>
        )}
    </>
  )
}
