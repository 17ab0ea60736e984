/** One memory: its scope, its text, when it changed; edited in place, deleted after a confirmation. */
import { UpdateMemoryRequest } from "@huddle/server/contract"
import { useLayoutEffect, useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { ProblemNote } from "../../ui/Status.js"
import { Time } from "../../ui/Time.js"
import { useApi } from "../../ui/useApi.js"
import { validate } from "../../validate.js"
import { ContentField } from "./ContentField.js"
import type { Memory } from "./wire.js"

interface Props {
  readonly memory: Memory
  readonly scope: string
  readonly onSaved: (memory: Memory) => void
  readonly onDeleted: (memory: Memory) => void
}

type Mode = "view" | "edit" | "delete"

/** The first words, to name a memory in a button's label. */
const gist = (content: string) => (content.length > 40 ? `${content.slice(0, 40)}…` : content)

export const MemoryItem = ({ memory, onDeleted, onSaved, scope }: Props) => {
  const api = useApi()
  const [mode, setMode] = useState<Mode>("view")
  const [draft, setDraft] = useState(memory.content)
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const form = useRef<HTMLFormElement>(null)
  const confirm = useRef<HTMLDivElement>(null)
  const editButton = useRef<HTMLButtonElement>(null)
  // Editing starts in the text; deleting starts on the safe choice.
  useLayoutEffect(() => {
    if (mode === "edit") form.current?.querySelector("textarea")?.focus()
    if (mode === "delete") confirm.current?.querySelector<HTMLButtonElement>("button.secondary")?.focus()
  }, [mode])

  const back = () => {
    setMode("view")
    setProblem(null)
    setDraft(memory.content)
    setTimeout(() => editButton.current?.focus())
  }

  const save = async (event: Event) => {
    event.preventDefault()
    const payload = validate(UpdateMemoryRequest, { content: draft })
    if (payload._tag === "Left") return setProblem(payload.left)
    setPending(true)
    const saved = await api((client) => client.memories.update({ path: { id: memory.id }, payload: payload.right }))
    setPending(false)
    if (saved._tag === "Left") return setProblem(saved.left)
    setProblem(null)
    setMode("view")
    onSaved(saved.right)
    setTimeout(() => editButton.current?.focus())
  }

  const remove = async () => {
    setPending(true)
    const done = await api((client) => client.memories.delete({ path: { id: memory.id } }))
    setPending(false)
    if (done._tag === "Left") return setProblem(done.left)
    onDeleted(memory)
  }

  const name = gist(memory.content)
  return (
    <li class="card memory">
      <p class="scope">{scope}</p>
      {mode === "edit"
        ? (
          <form onSubmit={save} noValidate aria-label={`Edit memory “${name}”`} ref={form}
            onKeyDown={(event) => event.key === "Escape" && back()}>
            <ContentField label="What to remember" value={draft} onValue={setDraft} />
            <ProblemNote problem={problem} />
            <div class="actions">
              <button type="submit" disabled={pending}>{pending ? "Saving…" : "Save"}</button>
              <button type="button" class="secondary" onClick={back}>Cancel</button>
            </div>
          </form>
        )
        : (
          <>
            <p class="content">{memory.content}</p>
            <p class="hint">
              {memory.updated_at.epochMillis === memory.created_at.epochMillis ? "Saved " : "Changed "}
              <Time at={memory.updated_at} />
            </p>
            {mode === "delete"
              ? (
                <div class="confirm" role="group" aria-label={`Delete memory “${name}”`} ref={confirm}
                  onKeyDown={(event) => event.key === "Escape" && back()}>
                  <p>Huddle will no longer use it. This cannot be undone.</p>
                  <button type="button" class="danger" disabled={pending} onClick={remove}>{pending ? "Deleting…" : "Delete memory"}</button>
                  <button type="button" class="secondary" onClick={back}>Cancel</button>
                  <ProblemNote problem={problem} />
                </div>
              )
              : (
                <div class="actions">
                  <button type="button" class="secondary" ref={editButton} onClick={() => setMode("edit")} aria-label={`Edit memory “${name}”`}>Edit</button>
                  <button type="button" class="secondary" onClick={() => setMode("delete")} aria-label={`Delete memory “${name}”`}>Delete</button>
                </div>
              )}
          </>
        )}
    </li>
  )
}
