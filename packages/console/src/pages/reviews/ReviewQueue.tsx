/**
 * A queue of intents awaiting review, a page at a time: the reader's own, or an org's (every
 * member's, for its admins, each with who submitted it). A decided intent leaves the queue, and
 * what became of it is said where the focus goes.
 */
import { IntentMethods } from "@huddle/server/contract"
import { useRef, useState } from "preact/hooks"
import type { Client, Problem } from "../../api.js"
import { credits } from "../../format.js"
import { rpc } from "../../rpc.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useApi, useResource } from "../../ui/useApi.js"
import { type Intent, type ListedIntent, Review } from "./Review.js"

const pageSize = 50

type IntentPage = typeof IntentMethods.IntentPage.Type

interface Props {
  readonly title: string
  /** An org the reader administers: its queue, every member's; otherwise the reader's own. */
  readonly orgId?: string | undefined
  /** The reader, to tell their own intents from others'. */
  readonly you: string
  /** Intents listed elsewhere on the page (the reader's own in the org shown above). */
  readonly shownElsewhere?: (intent: ListedIntent) => boolean
  readonly empty: string
}

export const ReviewQueue = ({ title, orgId, you, shownElsewhere = () => false, empty }: Props) => {
  const api = useApi()
  const listPage = (client: Client, cursor?: string) =>
    rpc(
      client,
      "intent.list",
      { schema: IntentMethods.ListParams, value: { limit: pageSize, status: "awaiting_review", cursor, org_id: orgId } },
      IntentMethods.IntentPage
    )
  const [first] = useResource((client) => listPage(client))
  const [more, setMore] = useState<ReadonlyArray<IntentPage>>([])
  const [moreProblem, setMoreProblem] = useState<Problem | null>(null)
  const [decided, setDecided] = useState<ReadonlyMap<string, Intent>>(new Map())
  const [said, setSaid] = useState("")
  const heading = useRef<HTMLHeadingElement>(null)

  const onDecided = (intent: Intent) => {
    setDecided(new Map(decided).set(intent.id, intent))
    setSaid(
      intent.status === "rejected"
        ? "Rejected: it will not run, and nothing was charged."
        : intent.status === "completed"
        ? `Approved and answered: ${credits(intent.credits_charged)} charged.`
        : `Approved; it ended ${intent.status}${intent.error === null ? "" : `: ${intent.error.message}`}.`
    )
    heading.current?.focus()
  }

  const body = () => {
    if (first._tag === "Loading") return <Loading what="intents awaiting review" />
    if (first._tag === "Failed") return <ProblemNote problem={first.problem} />
    const pages = [first.value, ...more]
    const cursor = pages.at(-1)?.next_cursor ?? null
    const intents = pages.flatMap((page) => page.data).filter((intent) => !decided.has(intent.id) && !shownElsewhere(intent))
    const loadMore = async () => {
      if (cursor === null) return
      const next = await api((client) => listPage(client, cursor))
      if (next._tag === "Left") return setMoreProblem(next.left)
      setMoreProblem(null)
      setMore([...more, next.right])
    }
    return (
      <>
        <p class="notice" role="status">{said}</p>
        {intents.length === 0
          // With more pages to come, the ones still unseen may hold some: no "nothing" beside "Show more".
          ? cursor === null ? <p class="empty">{empty}</p> : null
          : (
            <ul class="reviews">
              {intents.map((intent) => {
                const mine = intent.submitted_by.user_id === you
                return (
                  <Review
                    key={intent.id}
                    intent={intent}
                    mine={mine}
                    submitter={orgId === undefined ? undefined : mine ? "you" : intent.submitted_by.email}
                    onDecided={onDecided}
                  />
                )
              })}
            </ul>
          )}
        <ProblemNote problem={moreProblem} />
        {cursor === null ? null : <button type="button" class="secondary" onClick={loadMore}>Show more</button>}
      </>
    )
  }

  return (
    <section aria-labelledby={`${orgId ?? "own"}-reviews`}>
      <h2 id={`${orgId ?? "own"}-reviews`} tabIndex={-1} ref={heading}>{title}</h2>
      {body()}
    </section>
  )
}
