/**
 * Intents awaiting review (a policy or the person's preference turned automatic execution off):
 * each with what it asks and what it may cost, to approve (it runs, and is charged) or reject
 * (nothing runs or is charged). The intents come from JSON-RPC, the only API that offers them.
 */
import { IntentMethods } from "@huddle/server/contract"
import { useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { credits } from "../../format.js"
import { href } from "../../route.js"
import { rpc } from "../../rpc.js"
import { Page } from "../../ui/Page.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { Time } from "../../ui/Time.js"
import { useApi, useResource } from "../../ui/useApi.js"
import "./reviews.css"

type Intent = typeof IntentMethods.Intent.Type

export const ReviewsPage = () => {
  const [waiting] = useResource((client) =>
    rpc(client, "intent.list", { schema: IntentMethods.ListParams, value: { limit: 50, status: "awaiting_review" } }, IntentMethods.IntentPage)
  )
  const [decided, setDecided] = useState<ReadonlyMap<string, Intent>>(new Map())
  const [said, setSaid] = useState("")
  const listHeading = useRef<HTMLHeadingElement>(null)

  const onDecided = (intent: Intent) => {
    setDecided(new Map(decided).set(intent.id, intent))
    setSaid(
      intent.status === "rejected"
        ? "Rejected: it will not run, and nothing was charged."
        : intent.status === "completed"
        ? `Approved and answered: ${credits(intent.credits_charged)} charged.`
        : `Approved; it ended ${intent.status}${intent.error === null ? "" : `: ${intent.error.message}`}.`
    )
    listHeading.current?.focus()
  }

  const body = () => {
    if (waiting._tag === "Loading") return <Loading what="intents awaiting review" />
    if (waiting._tag === "Failed") return <ProblemNote problem={waiting.problem} />
    const intents = waiting.value.data.filter((intent) => !decided.has(intent.id))
    return (
      <>
        <h2 tabIndex={-1} ref={listHeading}>Awaiting review</h2>
        <p class="notice" role="status">{said}</p>
        {intents.length === 0
          ? <p class="empty">Nothing awaits review.</p>
          : <ul class="reviews">{intents.map((intent) => <Review key={intent.id} intent={intent} onDecided={onDecided} />)}</ul>}
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

const Review = ({ intent, onDecided }: { readonly intent: Intent; readonly onDecided: (intent: Intent) => void }) => {
  const api = useApi()
  const [pending, setPending] = useState<"approve" | "reject" | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const decide = async (method: "approve" | "reject") => {
    setPending(method)
    const result = await api((client) =>
      rpc(client, `intent.${method}`, { schema: IntentMethods.ById, value: { id: intent.id } }, IntentMethods.Intent)
    )
    setPending(null)
    if (result._tag === "Left") return setProblem(result.left)
    onDecided(result.right)
  }
  const flags = intent.plan?.flags ?? []
  const worstCase = intent.plan?.worst_case_credits
  return (
    <li class="card review">
      <p class="text">{intent.input}</p>
      <p class="hint">
        {intent.mode} mode · asked <Time at={intent.created_at} />
        {worstCase === undefined ? "" : ` · at most ${credits(worstCase)}`}
        {intent.session_id === null ? null : <> · <a href={href("sessions", [intent.session_id])}>its conversation</a></>}
      </p>
      {flags.length === 0 ? null : (
        <ul class="flags" aria-label="Flagged for review">
          {flags.map((flag, i) => <li key={i}>{flag.category}: “{flag.match}”</li>)}
        </ul>
      )}
      <button type="button" disabled={pending !== null} onClick={() => decide("approve")} aria-label={`Approve “${intent.input}”`}>
        {pending === "approve" ? "Approving…" : "Approve"}
      </button>{" "}
      <button type="button" class="secondary" disabled={pending !== null} onClick={() => decide("reject")} aria-label={`Reject “${intent.input}”`}>
        {pending === "reject" ? "Rejecting…" : "Reject"}
      </button>
      <ProblemNote problem={problem} />
    </li>
  )
}
