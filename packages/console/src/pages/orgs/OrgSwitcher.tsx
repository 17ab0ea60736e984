/**
 * The header's choice of organization, shown once the person belongs to one: one of their orgs,
 * or Personal (their own credits, memories and workspace).
 */
import { useId } from "preact/hooks"
import { personalChoice as personal, useOrgs } from "./OrgContext.js"

export const OrgSwitcher = () => {
  const id = useId()
  const orgs = useOrgs()
  if (orgs.profile._tag !== "Loaded" || orgs.profile.value.orgs.length === 0) return null
  const list = orgs.profile.value.orgs
  return (
    <div class="org-switcher">
      <label for={id}>Organization</label>
      <select
        id={id}
        value={orgs.current?.id ?? personal}
        onChange={(event) => orgs.choose(event.currentTarget.value === personal ? null : event.currentTarget.value)}
      >
        <option value={personal}>Personal</option>
        {list.map((org) => <option key={org.id} value={org.id}>{org.name}{org.role === "admin" ? " (admin)" : ""}</option>)}
      </select>
    </div>
  )
}
