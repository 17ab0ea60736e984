/**
 * What every page of an organization shares: its tabs, and the states before its own content
 * (the profile loading or failing, no organization yet or none chosen, a page for admins opened
 * by a member).
 * The page's content is rendered for the org being worked in, keyed by it, so that switching
 * orgs loads the other org's data afresh.
 */
import type { JSX } from "preact"
import { href, type Route, useRoute } from "../../route.js"
import { Page } from "../../ui/Page.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useOrgs } from "./OrgContext.js"
import type { Membership, Profile } from "./wire.js"
import "./orgs.css"

interface Props {
  readonly title: string
  /** Pages only admins may open; members are told so, without a call the server would refuse. */
  readonly adminOnly?: boolean
  readonly children: (org: Membership, profile: Profile) => JSX.Element
}

const tabs: ReadonlyArray<readonly [Route, string, boolean]> = [
  ["org", "Dashboard", true],
  ["members", "Members", true],
  ["policies", "Policies", false],
  ["pool", "Credits", false],
  ["audit", "Audit log", true]
]

export const OrgFrame = ({ title, adminOnly = false, children }: Props) => {
  const orgs = useOrgs()
  const route = useRoute()
  const body = () => {
    if (orgs.profile._tag === "Loading") return <Loading what="your organizations" />
    if (orgs.profile._tag === "Failed") return <ProblemNote problem={orgs.profile.problem} />
    const org = orgs.current
    if (org === null && orgs.personal && orgs.profile.value.orgs.length > 0) {
      return (
        <p class="empty no-org">
          No organization is chosen: you are working personally. Choose an organization in the header (or on
          the <a href={href("orgs")}>Organizations</a> page) to see its {title.toLowerCase()}.
        </p>
      )
    }
    if (org === null) {
      return (
        <p class="empty">
          You do not belong to an organization yet. <a href={href("orgs")}>Create one</a>, or ask an admin to invite you.
        </p>
      )
    }
    const isAdmin = org.role === "admin"
    return (
      <>
        <nav aria-label={`${org.name}`} class="org-tabs">
          {tabs.filter(([, , forAdmins]) => isAdmin || !forAdmins).map(([to, label]) => (
            <a key={to} href={href(to)} {...(route === to ? { "aria-current": "page" as const } : {})}>{label}</a>
          ))}
        </nav>
        {adminOnly && !isAdmin
          ? (
            <p class="empty only-admins">
              Only admins of {org.name} can see this page. You are a member; ask one of its admins.
            </p>
          )
          : <div key={org.id}>{children(org, orgs.profile.value)}</div>}
      </>
    )
  }
  return (
    <Page title={orgs.current === null ? title : `${title} · ${orgs.current.name}`}>
      {body()}
    </Page>
  )
}
