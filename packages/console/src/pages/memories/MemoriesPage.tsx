/**
 * Memories: what Huddle keeps in front of the models for the person, a workspace or an
 * organization. The first page of memories, the workspaces and the person's organizations (to
 * name each memory's scope) load together; further pages on request.
 */
import { Effect } from "effect"
import { useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { Page } from "../../ui/Page.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useApi, useResource } from "../../ui/useApi.js"
import { MemoryItem } from "./MemoryItem.js"
import { NewMemoryForm } from "./NewMemoryForm.js"
import { type Memory, type MemoryPage, scopeLabel } from "./wire.js"

const pageSize = 50

export const MemoriesPage = () => {
  const api = useApi()
  const [first, reload] = useResource((client) =>
    Effect.all({
      memories: client.memories.list({ urlParams: { limit: pageSize } }),
      workspaces: client.workspaces.list({ urlParams: { limit: 100 } }),
      profile: client.me.me()
    }, { concurrency: "unbounded" })
  )
  const [more, setMore] = useState<ReadonlyArray<MemoryPage>>([])
  /** Changes since the pages loaded: edits by id, deletions. */
  const [edited, setEdited] = useState<ReadonlyMap<string, Memory>>(new Map())
  const [deleted, setDeleted] = useState<ReadonlySet<string>>(new Set())
  const [said, setSaid] = useState("")
  const [moreProblem, setMoreProblem] = useState<Problem | null>(null)
  const listHeading = useRef<HTMLHeadingElement>(null)

  const body = () => {
    if (first._tag === "Loading") return <Loading what="your memories" />
    if (first._tag === "Failed") return <ProblemNote problem={first.problem} />
    const { profile, workspaces } = first.value
    const pages = [first.value.memories, ...more]
    const memories = pages.flatMap((page) => page.data).filter((m) => !deleted.has(m.id)).map((m) => edited.get(m.id) ?? m)
    const cursor = pages.at(-1)?.next_cursor ?? null
    const loadMore = async () => {
      if (cursor === null) return
      const next = await api((client) => client.memories.list({ urlParams: { limit: pageSize, cursor } }))
      if (next._tag === "Left") return setMoreProblem(next.left)
      setMoreProblem(null)
      setMore([...more, next.right])
    }
    const onCreated = () => {
      setMore([])
      setEdited(new Map())
      setSaid("Memory saved.")
      void reload()
    }
    const onSaved = (memory: Memory) => {
      setEdited(new Map(edited).set(memory.id, memory))
      setSaid("Memory changed.")
    }
    const onDeleted = () => {
      setSaid("Memory deleted.")
      listHeading.current?.focus()
    }
    return (
      <>
        <NewMemoryForm workspaces={workspaces.data} orgs={profile.orgs} onCreated={onCreated} />
        <h2 tabIndex={-1} ref={listHeading}>What Huddle remembers</h2>
        <p class="notice" role="status">{said}</p>
        {memories.length === 0
          ? <p class="empty">No memories yet. Save one above: a fact about you, a project or your team.</p>
          : (
            <ul class="memories">
              {memories.map((memory) => (
                <MemoryItem
                  key={memory.id}
                  memory={memory}
                  scope={scopeLabel(memory, workspaces.data, profile.orgs)}
                  onSaved={onSaved}
                  onDeleted={(m) => {
                    setDeleted(new Set(deleted).add(m.id))
                    onDeleted()
                  }}
                />
              ))}
            </ul>
          )}
        <ProblemNote problem={moreProblem} />
        {cursor === null ? null : <button type="button" class="secondary" onClick={loadMore}>Show more memories</button>}
      </>
    )
  }

  return (
    <Page title="Memories">
      <p>
        Memories are facts Huddle puts in front of the models: yours alone, a workspace's (for whoever uses it) or an
        organization's (for every member).
      </p>
      {body()}
    </Page>
  )
}
