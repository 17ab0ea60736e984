/**
 * Intents awaiting review (a policy or the person's preference turned automatic execution off):
 * each with what it asks and what it may cost, to approve (it runs, and is charged) or reject
 * (nothing runs or is charged). An admin working in their org sees its queue too, every member's
 * held messages with who sent them. The intents come from JSON-RPC, the only API that offers them.
 */
import { useOrgs } from "../orgs/OrgContext.js"
import { Page } from "../../ui/Page.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { ReviewQueue } from "./ReviewQueue.js"
import "./reviews.css"

export const ReviewsPage = () => {
  const orgs = useOrgs()
  const body = () => {
    if (orgs.profile._tag === "Loading") return <Loading what="your organizations" />
    if (orgs.profile._tag === "Failed") return <ProblemNote problem={orgs.profile.problem} />
    const you = orgs.profile.value.user.id
    const org = orgs.current?.role === "admin" ? orgs.current : null
    return (
      <>
        {org === null ? null : (
          <ReviewQueue
            key={org.id}
            title={`Awaiting review in ${org.name}`}
            orgId={org.id}
            you={you}
            empty={`Nothing in ${org.name} awaits review.`}
          />
        )}
        <ReviewQueue
          title={org === null ? "Awaiting review" : `Your own, outside ${org.name}`}
          you={you}
          shownElsewhere={(intent) => org !== null && intent.org_id === org.id}
          empty="Nothing awaits review."
        />
      </>
    )
  }
  return (
    <Page title="Reviews">
      <p>
        With automatic execution off, a message waits here before anything runs or is charged. Approving runs it and charges
        its credits; rejecting drops it.
      </p>
      {body()}
    </Page>
  )
}
