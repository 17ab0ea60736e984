/** The person's conversations, newest first: open one, rename it, delete it (after a confirmation). */
import { RenameRequest } from "@huddle/server/contract"
import { useId, useLayoutEffect, useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { href } from "../../route.js"
import { Page } from "../../ui/Page.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { Time } from "../../ui/Time.js"
import { useApi, useResource } from "../../ui/useApi.js"
import { validate } from "../../validate.js"
import type { Session, SessionPage } from "./wire.js"

const pageSize = 20

export const SessionList = () => {
  const api = useApi()
  const [first] = useResource((client) => client.huddle.sessions({ urlParams: { limit: pageSize } }))
  const [more, setMore] = useState<ReadonlyArray<SessionPage>>([])
  const [renamed, setRenamed] = useState<ReadonlyMap<string, Session>>(new Map())
  const [deleted, setDeleted] = useState<ReadonlySet<string>>(new Set())
  const [said, setSaid] = useState("")
  const [moreProblem, setMoreProblem] = useState<Problem | null>(null)
  const listHeading = useRef<HTMLHeadingElement>(null)

  const body = () => {
    if (first._tag === "Loading") return <Loading what="your conversations" />
    if (first._tag === "Failed") return <ProblemNote problem={first.problem} />
    const pages = [first.value, ...more]
    const sessions = pages.flatMap((page) => page.data).filter((s) => !deleted.has(s.id)).map((s) => renamed.get(s.id) ?? s)
    const cursor = pages.at(-1)?.next_cursor ?? null
    const loadMore = async () => {
      if (cursor === null) return
      const next = await api((client) => client.huddle.sessions({ urlParams: { limit: pageSize, cursor } }))
      if (next._tag === "Left") return setMoreProblem(next.left)
      setMoreProblem(null)
      setMore([...more, next.right])
    }
    return (
      <>
        <h2 tabIndex={-1} ref={listHeading}>Your conversations</h2>
        <p class="notice" role="status">{said}</p>
        {sessions.length === 0
          ? <p class="empty">No conversations yet. Start one to ask a question.</p>
          : (
            <ul class="sessions">
              {sessions.map((s) => (
                <SessionRow
                  key={s.id}
                  session={s}
                  onRenamed={(updated) => {
                    setRenamed(new Map(renamed).set(updated.id, updated))
                    setSaid(`Renamed to “${updated.title}”.`)
                  }}
                  onDeleted={() => {
                    setDeleted(new Set(deleted).add(s.id))
                    setSaid(`Deleted “${s.title}”.`)
                    listHeading.current?.focus()
                  }}
                />
              ))}
            </ul>
          )}
        <ProblemNote problem={moreProblem} />
        {cursor === null ? null : <button type="button" class="secondary" onClick={loadMore}>Show more conversations</button>}
      </>
    )
  }

  return (
    <Page title="Conversations">
      <p><a class="button" href={href("sessions", ["new"])}>Start a conversation</a></p>
      {body()}
    </Page>
  )
}

interface RowProps {
  readonly session: Session
  readonly onRenamed: (session: Session) => void
  readonly onDeleted: () => void
}

const SessionRow = ({ session, onRenamed, onDeleted }: RowProps) => {
  const [doing, setDoing] = useState<"rename" | "delete" | null>(null)
  return (
    <li class="session">
      <a href={href("sessions", [session.id])}>{session.title}</a>
      <span class="hint"> · updated <Time at={session.updated_at} /></span>
      {doing === null
        ? (
          <span class="actions">
            <button type="button" class="secondary" onClick={() => setDoing("rename")} aria-label={`Rename ${session.title}`}>Rename</button>
            <button type="button" class="secondary" onClick={() => setDoing("delete")} aria-label={`Delete ${session.title}`}>Delete</button>
          </span>
        )
        : doing === "rename"
        ? <RenameForm session={session} onCancel={() => setDoing(null)} onRenamed={(s) => {
          setDoing(null)
          onRenamed(s)
        }} />
        : <ConfirmDelete session={session} onCancel={() => setDoing(null)} onDeleted={onDeleted} />}
    </li>
  )
}

const RenameForm = ({ session, onCancel, onRenamed }: { readonly session: Session; readonly onCancel: () => void; readonly onRenamed: (s: Session) => void }) => {
  const api = useApi()
  const id = useId()
  const [title, setTitle] = useState(session.title)
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const field = useRef<HTMLInputElement>(null)
  useLayoutEffect(() => field.current?.select(), [])
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const checked = validate(RenameRequest, { title })
    if (checked._tag === "Left") return setProblem(checked.left)
    setPending(true)
    const result = await api((client) => client.huddle.rename({ path: { session_id: session.id }, payload: checked.right }))
    setPending(false)
    if (result._tag === "Left") return setProblem(result.left)
    onRenamed(result.right)
  }
  return (
    <form class="rename" onSubmit={onSubmit} noValidate onKeyDown={(event) => event.key === "Escape" && onCancel()}>
      <label for={id}>New title for “{session.title}”</label>
      <input id={id} ref={field} value={title} maxLength={200} onInput={(event) => setTitle(event.currentTarget.value)} />
      <button type="submit" disabled={pending}>{pending ? "Saving…" : "Save"}</button>
      <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
      <ProblemNote problem={problem} />
    </form>
  )
}

const ConfirmDelete = ({ session, onCancel, onDeleted }: { readonly session: Session; readonly onCancel: () => void; readonly onDeleted: () => void }) => {
  const api = useApi()
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const cancel = useRef<HTMLButtonElement>(null)
  // Focus lands on the safe choice.
  useLayoutEffect(() => cancel.current?.focus(), [])
  const remove = async () => {
    setPending(true)
    const result = await api((client) => client.huddle.delete({ path: { session_id: session.id } }))
    setPending(false)
    if (result._tag === "Left") return setProblem(result.left)
    onDeleted()
  }
  return (
    <div class="confirm" role="group" aria-label={`Delete ${session.title}`} onKeyDown={(event) => event.key === "Escape" && onCancel()}>
      <p>Delete this conversation and all its messages? This cannot be undone.</p>
      <button type="button" class="danger" disabled={pending} onClick={remove}>{pending ? "Deleting…" : "Delete conversation"}</button>
      <button type="button" class="secondary" onClick={onCancel} ref={cancel}>Cancel</button>
      <ProblemNote problem={problem} />
    </div>
  )
}
