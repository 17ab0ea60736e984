/**
 * The credit pool: the org's balances, the reader's own standing in it (personal balance, cap,
 * what they took, who pays for their requests), and for admins the grants the pool received.
 * Only the operator adds credits, so there is no grant button here.
 */
import { credits } from "../../format.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useResource } from "../../ui/useApi.js"
import { AuditTable } from "./AuditTable.js"
import { capText } from "./MemberTable.js"
import { OrgFrame } from "./OrgFrame.js"
import type { Membership, Profile } from "./wire.js"

export const PoolPage = () => (
  <OrgFrame title="Credits">
    {(org, profile) => (
      <>
        <Balances org={org} />
        {org.role === "admin" ? <Grants org={org} profile={profile} /> : null}
      </>
    )}
  </OrgFrame>
)

const sourceNames = { personal: "your personal credits", subscription: "the subscription pool", addon: "the add-on pool" } as const

const Balances = ({ org }: { readonly org: Membership }) => {
  const [view] = useResource((client) => client.orgs.credits({ path: { orgId: org.id } }))
  if (view._tag === "Loading") return <Loading what="the credit pool" />
  if (view._tag === "Failed") return <ProblemNote problem={view.problem} />
  const pool = view.value
  return (
    <>
      <dl class="card facts">
        <dt>Subscription pool</dt>
        <dd class="balance">{credits(pool.subscription_balance)}</dd>
        <dt>Add-on pool</dt>
        <dd class="balance">{credits(pool.addon_balance)}</dd>
        <dt>Your personal balance</dt>
        <dd>{credits(pool.personal_balance)}</dd>
        <dt>Your cap on the pool</dt>
        <dd>{capText(pool.cap)}</dd>
        <dt>You took from the pool</dt>
        <dd>{credits(pool.spent.month)} this month, {credits(pool.spent.total)} in total</dd>
        <dt>Your requests are paid by</dt>
        <dd>{pool.payment_order.map((source) => sourceNames[source]).join(", then ")}</dd>
      </dl>
    </>
  )
}

const Grants = ({ org, profile }: { readonly org: Membership; readonly profile: Profile }) => {
  const [grants] = useResource((client) =>
    client.orgAdmin.auditLog({ path: { orgId: org.id }, urlParams: { limit: 20, event_type: "credits.granted" } })
  )
  return (
    <section aria-labelledby="grants-title">
      <h2 id="grants-title">Grants received</h2>
      <p class="hint">Credits come from the operator; admins share them out with members' caps.</p>
      {grants._tag === "Loading" ? <Loading what="the grants" /> : null}
      {grants._tag === "Failed" ? <ProblemNote problem={grants.problem} /> : null}
      {grants._tag === "Loaded"
        ? grants.value.data.length === 0
          ? <p class="empty">No grants yet.</p>
          : <AuditTable events={grants.value.data} you={profile.user.id} />
        : null}
    </section>
  )
}
