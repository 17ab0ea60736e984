/** The organization at a glance (admins): members, the pool, this month's usage, policies, recent events. */
import { credits } from "../../format.js"
import { href } from "../../route.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { Time } from "../../ui/Time.js"
import { useResource } from "../../ui/useApi.js"
import { AuditTable } from "./AuditTable.js"
import { OrgFrame } from "./OrgFrame.js"
import { settingNames, valueText } from "./settings.js"
import type { Membership, Profile } from "./wire.js"

export const DashboardPage = () => (
  <OrgFrame title="Dashboard" adminOnly>
    {(org, profile) => <Dashboard org={org} profile={profile} />}
  </OrgFrame>
)

const policyKeys = ["model_tier", "risk_tolerance", "auto_execute", "credit_fallback"] as const

const Dashboard = ({ org, profile }: { readonly org: Membership; readonly profile: Profile }) => {
  const [dashboard] = useResource((client) => client.orgAdmin.dashboard({ path: { orgId: org.id } }))
  if (dashboard._tag === "Loading") return <Loading what="the dashboard" />
  if (dashboard._tag === "Failed") return <ProblemNote problem={dashboard.problem} />
  const d = dashboard.value
  const enforced = policyKeys.filter((key) => d.policies[key] !== undefined)
  return (
    <>
      <dl class="card facts">
        <dt>Created</dt>
        <dd><Time at={d.organization.created_at} /></dd>
        <dt>Members</dt>
        <dd><a href={href("members")}>{d.members.active} active, {d.members.pending} invited</a></dd>
        <dt>Subscription pool</dt>
        <dd class="balance">{credits(d.credits.subscription_balance)}</dd>
        <dt>Add-on pool</dt>
        <dd class="balance">{credits(d.credits.addon_balance)}</dd>
        <dt>Used since <Time at={d.usage.period_start} /></dt>
        <dd>{credits(d.usage.credits_used)}</dd>
        <dt>Enforced policies</dt>
        <dd>
          {enforced.length === 0
            ? <a href={href("policies")}>None</a>
            : <a href={href("policies")}>{enforced.map((key) => `${settingNames[key]}: ${valueText(d.policies[key]!)}`).join("; ")}</a>}
        </dd>
      </dl>
      <h2>Recent events</h2>
      {d.recent_audit_events.length === 0
        ? <p class="empty">Nothing has happened yet.</p>
        : <AuditTable events={d.recent_audit_events} you={profile.user.id} />}
      <p><a href={href("audit")}>The whole audit log</a></p>
    </>
  )
}
