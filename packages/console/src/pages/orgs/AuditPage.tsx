/**
 * The audit log (admins), newest first: filtered by type and by a first day, the filters kept in
 * the address (`#/audit?type=member.invited&from=2025-01-31`) so a filtered view can be reloaded
 * or shared; one page per call, "Next page" follows the server's cursor.
 */
import { AuditEventType } from "@huddle/domain/audit/Audit"
import { DateTime, Schema } from "effect"
import { useEffect, useId, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { go, useLocation } from "../../route.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { AuditTable } from "./AuditTable.js"
import { eventTypeNames } from "./auditText.js"
import { OrgFrame } from "./OrgFrame.js"
import type { AuditPage as Page, Membership, Profile } from "./wire.js"

const pageSize = 50

export const AuditPage = () => (
  <OrgFrame title="Audit log" adminOnly>
    {(org, profile) => <Audit org={org} profile={profile} />}
  </OrgFrame>
)

const isType = Schema.is(AuditEventType)
const day = /^\d{4}-\d{2}-\d{2}$/

/** The answer for one view (org, filters, page); a view not answered yet is loading. */
type State =
  | { readonly _tag: "Loading" }
  | { readonly _tag: "Failed"; readonly view: string; readonly problem: Problem }
  | { readonly _tag: "Loaded"; readonly view: string; readonly page: Page }

const Audit = ({ org, profile }: { readonly org: Membership; readonly profile: Profile }) => {
  const api = useApi()
  const { query } = useLocation()
  const typeParam = query.get("type") ?? ""
  const type = isType(typeParam) ? typeParam : undefined
  const fromParam = query.get("from") ?? ""
  const from = day.test(fromParam) ? DateTime.make(`${fromParam}T00:00:00Z`) : undefined
  const filters = `${type ?? ""}|${fromParam}`
  /** The cursors of the pages before this one (to go back), and this page's. */
  const [trail, setTrail] = useState<{ readonly filters: string; readonly cursors: ReadonlyArray<string | undefined> }>({ filters, cursors: [undefined] })
  const cursors = trail.filters === filters ? trail.cursors : [undefined]
  const cursor = cursors.at(-1)
  const view = `${org.id}|${filters}|${cursor ?? ""}`
  const [answer, setAnswer] = useState<State>({ _tag: "Loading" })
  // Until its own answer arrives, a view shows as loading, never the previous view's rows.
  const state: State = answer._tag !== "Loading" && answer.view === view ? answer : { _tag: "Loading" }

  useEffect(() => {
    let current = true
    void api((client) =>
      client.orgAdmin.auditLog({
        path: { orgId: org.id },
        urlParams: {
          limit: pageSize,
          ...(cursor === undefined ? {} : { cursor }),
          ...(type === undefined ? {} : { event_type: type }),
          ...(from === undefined || from._tag === "None" ? {} : { start_at: from.value.pipe(DateTime.toUtc) })
        }
      })
    ).then((result) => {
      if (!current) return
      setAnswer(result._tag === "Right" ? { _tag: "Loaded", view, page: result.right } : { _tag: "Failed", view, problem: result.left })
    })
    return () => {
      current = false
    }
  }, [view])

  const filter = (next: { readonly type?: string; readonly from?: string }) => {
    const merged = { type: typeParam, from: fromParam, ...next }
    go("audit", [], Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== "")))
  }

  return (
    <>
      <Filters type={typeParam} from={fromParam} onFilter={filter} />
      <p class="notice" role="status">
        {state._tag === "Loaded" ? `Page ${cursors.length}: ${state.page.data.length} ${state.page.data.length === 1 ? "event" : "events"}${type === undefined ? "" : ` of type “${eventTypeNames[type]}”`}.` : ""}
      </p>
      {state._tag === "Loading" ? <Loading what="the audit log" /> : null}
      {state._tag === "Failed" ? <ProblemNote problem={state.problem} /> : null}
      {state._tag === "Loaded"
        ? state.page.data.length === 0
          ? <p class="empty">No events{type === undefined && fromParam === "" ? "" : " match these filters"}.</p>
          : <AuditTable events={state.page.data} you={profile.user.id} />
        : null}
      <div class="pager">
        {cursors.length > 1
          ? <button type="button" class="secondary" onClick={() => setTrail({ filters, cursors: cursors.slice(0, -1) })}>Previous page</button>
          : null}
        {state._tag === "Loaded" && state.page.next_cursor !== null
          ? <button type="button" class="secondary" onClick={() => setTrail({ filters, cursors: [...cursors, state.page.next_cursor!] })}>Next page</button>
          : null}
      </div>
    </>
  )
}

interface FilterProps {
  readonly type: string
  readonly from: string
  readonly onFilter: (next: { readonly type?: string; readonly from?: string }) => void
}

const Filters = ({ type, from, onFilter }: FilterProps) => {
  const id = useId()
  return (
    <form class="card filters" aria-label="Filter the audit log" onSubmit={(event) => event.preventDefault()}>
      <div class="field">
        <label for={`${id}-type`}>Type</label>
        <select id={`${id}-type`} value={type} onChange={(event) => onFilter({ type: event.currentTarget.value })}>
          <option value="">All types</option>
          {AuditEventType.literals.map((literal) => <option key={literal} value={literal}>{eventTypeNames[literal]}</option>)}
        </select>
      </div>
      <div class="field">
        <label for={`${id}-from`}>From (UTC day)</label>
        <input id={`${id}-from`} type="date" value={from} onChange={(event) => onFilter({ from: event.currentTarget.value })} aria-describedby={`${id}-from-hint`} />
        <p class="hint" id={`${id}-from-hint`}>Events on or after this day.</p>
      </div>
    </form>
  )
}
