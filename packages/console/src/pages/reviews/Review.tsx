/**
 * One intent awaiting review: what it asks, who asked (in an org's queue), what it may cost, what
 * the review flagged; approving runs it (and charges its submitter), rejecting drops it.
 */
import { IntentMethods } from "@huddle/server/contract"
import { useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { credits } from "../../format.js"
import { href } from "../../route.js"
import { rpc } from "../../rpc.js"
import { ProblemNote } from "../../ui/Status.js"
import { Time } from "../../ui/Time.js"
import { useApi } from "../../ui/useApi.js"

export type Intent = typeof IntentMethods.Intent.Type
export type ListedIntent = typeof IntentMethods.ListedIntent.Type

interface Props {
  readonly intent: ListedIntent
  /** Who submitted it, when the queue holds more than the reader's own. */
  readonly submitter?: string | undefined
  /** Whether the reader submitted it, and so may open its conversation. */
  readonly mine: boolean
  readonly onDecided: (intent: Intent) => void
}

export const Review = ({ intent, submitter, mine, onDecided }: Props) => {
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
        {submitter === undefined ? null : <><span class="submitter">From {submitter}</span> · </>}
        {intent.mode} mode · asked <Time at={intent.created_at} />
        {worstCase === undefined ? "" : ` · at most ${credits(worstCase)}`}
        {intent.session_id === null || !mine ? null : <> · <a href={href("sessions", [intent.session_id])}>its conversation</a></>}
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
