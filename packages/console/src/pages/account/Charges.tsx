/**
 * The personal balance's recent movements, newest first: what each request reserved and what
 * it gave back, and what was granted, with the balance after each. Further pages on request.
 */
import { useState } from "preact/hooks"
import type { Answer } from "../../answer.js"
import type { Client, Problem } from "../../api.js"
import { credits, tokens } from "../../format.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { Time } from "../../ui/Time.js"
import { useApi, useResource } from "../../ui/useApi.js"

type LedgerPage = Answer<Client["me"]["ledger"]>
type Entry = LedgerPage["data"][number]

const pageSize = 20

const kinds: Record<Entry["kind"], string> = {
  grant: "Granted",
  reserve: "Held while running",
  settle: "Returned, not used",
  release: "Returned, request stopped"
}

/** What a row was for: a request by its intent, or the grant's reason. */
const about = (entry: Entry) => {
  const intent = /^intent (\S+)$/.exec(entry.reason)
  return intent === null ? entry.reason : `Request ${intent[1]}`
}

/** The tokens a model call was charged for (its settle row); nothing on other rows. */
const used = (entry: Entry) =>
  entry.input_tokens === null || entry.output_tokens === null ? "" : tokens(entry.input_tokens, entry.output_tokens)

const signed = (delta: number) => (delta > 0 ? `+${credits(delta)}` : delta < 0 ? `−${credits(-delta)}` : credits(0))

export const Charges = () => {
  const api = useApi()
  const [first] = useResource((client) => client.me.ledger({ urlParams: { limit: pageSize } }))
  const [more, setMore] = useState<ReadonlyArray<LedgerPage>>([])
  const [problem, setProblem] = useState<Problem | null>(null)

  const body = () => {
    if (first._tag === "Loading") return <Loading what="your recent charges" />
    if (first._tag === "Failed") return <ProblemNote problem={first.problem} />
    const pages = [first.value, ...more]
    const entries = pages.flatMap((page) => page.data)
    const cursor = pages.at(-1)?.next_cursor ?? null
    const loadMore = async () => {
      if (cursor === null) return
      const next = await api((client) => client.me.ledger({ urlParams: { limit: pageSize, cursor } }))
      if (next._tag === "Left") return setProblem(next.left)
      setProblem(null)
      setMore([...more, next.right])
    }
    if (entries.length === 0) return <p class="empty">No charges yet. Each request you make is charged here.</p>
    return (
      <>
        <table class="keys charges">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">For</th>
              <th scope="col">Tokens</th>
              <th scope="col" class="number">Amount</th>
              <th scope="col" class="number">Balance after</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.id}>
                <td data-label="When"><Time at={entry.created_at} /></td>
                <th scope="row" data-label="What">{kinds[entry.kind]}</th>
                <td data-label="For">{about(entry)}</td>
                <td data-label="Tokens">{used(entry)}</td>
                <td data-label="Amount" class={entry.delta < 0 ? "number out" : "number"}>{signed(entry.delta)}</td>
                <td data-label="Balance after" class="number">{credits(entry.balance_after)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <ProblemNote problem={problem} />
        {cursor === null ? null : <button type="button" class="secondary" onClick={loadMore}>Show earlier charges</button>}
      </>
    )
  }

  return (
    <section aria-labelledby="charges-title">
      <h2 id="charges-title">Recent charges</h2>
      <p class="hint">
        A request holds its most possible cost while it runs and returns what it did not use when it ends, with the tokens its
        model call was charged for.
      </p>
      {body()}
    </section>
  )
}
