/** The header's choice of organization: shown once the person belongs to one. */
import { useId } from "preact/hooks"
import { useOrgs } from "./OrgContext.js"

export const OrgSwitcher = () => {
  const id = useId()
  const orgs = useOrgs()
  if (orgs.profile._tag !== "Loaded" || orgs.current === null) return null
  const list = orgs.profile.value.orgs
  return (
    <div class="org-switcher">
      <label for={id}>Organization</label>
      <select id={id} value={orgs.current.id} onChange={(event) => orgs.choose(event.currentTarget.value)}>
        {list.map((org) => <option key={org.id} value={org.id}>{org.name}{org.role === "admin" ? " (admin)" : ""}</option>)}
      </select>
    </div>
  )
}
