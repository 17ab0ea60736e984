/**
 * One workspace's repository: none yet (and the form to connect one), or its status, followed
 * every second while indexing; re-index, replace, disconnect, and open an indexed file.
 */
import { useEffect, useId, useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { go } from "../../route.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { ConnectForm } from "./ConnectForm.js"
import { RepositoryStatus } from "./RepositoryStatus.js"
import type { Membership, Status, Workspace } from "./wire.js"

const pollEvery = 1000

type State =
  | { readonly _tag: "None" }
  | { readonly _tag: "Loading" }
  | { readonly _tag: "Failed"; readonly problem: Problem }
  | { readonly _tag: "Connected"; readonly status: Status }

interface Props {
  readonly workspace: Workspace
  /** The organization of an org workspace, as the person belongs to it. */
  readonly org: Membership | null
}

export const WorkspaceRepository = ({ org, workspace }: Props) => {
  const api = useApi()
  const id = useId()
  const [state, setState] = useState<State>(workspace.repository === null ? { _tag: "None" } : { _tag: "Loading" })
  const [replacing, setReplacing] = useState(false)
  const [confirming, setConfirming] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [pending, setPending] = useState(false)
  const cancel = useRef<HTMLButtonElement>(null)

  const load = async () => {
    const result = await api((client) => client.workspaces.repository({ path: { id: workspace.id } }))
    setState(result._tag === "Right" ? { _tag: "Connected", status: result.right } : { _tag: "Failed", problem: result.left })
  }
  useEffect(() => {
    if (workspace.repository !== null) void load()
  }, [workspace.id])

  // Indexing runs in the background: follow it until it ends.
  const running = state._tag === "Connected" && (state.status.status === "pending" || state.status.status === "indexing")
  useEffect(() => {
    if (!running) return
    const timer = setTimeout(() => void load(), pollEvery)
    return () => clearTimeout(timer)
  }, [state])
  useEffect(() => {
    if (confirming) cancel.current?.focus()
  }, [confirming])

  const act = async (what: "reindex" | "disconnect") => {
    setPending(true)
    const result = what === "reindex"
      ? await api((client) => client.workspaces.reindex({ path: { id: workspace.id } }))
      : await api((client) => client.workspaces.disconnect({ path: { id: workspace.id } }))
    setPending(false)
    setConfirming(false)
    if (result._tag === "Left") return setProblem(result.left)
    setProblem(null)
    setState(result.right === undefined ? { _tag: "None" } : { _tag: "Connected", status: result.right })
  }

  const connected = (status: Status) => {
    setReplacing(false)
    setState({ _tag: "Connected", status })
  }

  const body = () => {
    switch (state._tag) {
      case "Loading":
        return <Loading what="the repository" />
      case "Failed":
        return <ProblemNote problem={state.problem} />
      case "None":
        return (
          <>
            <p class="empty">No repository is connected. Connect one so that answers can cite its files.</p>
            <ConnectForm workspace={workspace} replacing={false} onConnected={connected} />
          </>
        )
      case "Connected":
        return (
          <>
            <RepositoryStatus status={state.status} />
            {state.status.index_version > 0 ? <OpenFile workspace={workspace} /> : null}
            {replacing
              ? <ConnectForm workspace={workspace} replacing onConnected={connected} onCancel={() => setReplacing(false)} />
              : confirming
              ? (
                <div class="confirm" role="group" aria-label={`Disconnect the repository of ${workspace.name}`}
                  onKeyDown={(event) => event.key === "Escape" && setConfirming(false)}>
                  <p>Its index is deleted; answers stop citing it.</p>
                  <button type="button" class="danger" disabled={pending} onClick={() => act("disconnect")}>
                    {pending ? "Disconnecting…" : "Disconnect"}
                  </button>
                  <button type="button" class="secondary" ref={cancel} onClick={() => setConfirming(false)}>Cancel</button>
                </div>
              )
              : (
                <div class="actions">
                  <button type="button" class="secondary" disabled={pending || running} onClick={() => act("reindex")}>Re-index</button>
                  <button type="button" class="secondary" onClick={() => setReplacing(true)}>Replace</button>
                  <button type="button" class="secondary" onClick={() => setConfirming(true)}>Disconnect…</button>
                </div>
              )}
            <ProblemNote problem={problem} />
          </>
        )
    }
  }

  return (
    <section class="card" aria-labelledby={`${id}-name`}>
      <h2 id={`${id}-name`}>{workspace.personal ? "Your personal workspace" : workspace.name}</h2>
      {org === null ? null : (
        <p class="hint">
          A workspace of {org.name}: {org.role === "admin" ? "you manage its repository as an admin." : "its admins manage the repository."}
        </p>
      )}
      {body()}
    </section>
  )
}

/** Opens an indexed file by its path in the file view. */
const OpenFile = ({ workspace }: { readonly workspace: Workspace }) => {
  const id = useId()
  const [path, setPath] = useState("")
  return (
    <form class="open-file" aria-label={`Open a file of ${workspace.name}`} onSubmit={(event) => {
      event.preventDefault()
      const clean = path.trim().replace(/^\/+/, "")
      if (clean !== "") go("files", [workspace.id, clean])
    }}>
      <label for={id}>Open a file</label>
      <div class="copyable">
        <input id={id} value={path} placeholder="src/index.ts" spellcheck={false} onInput={(event) => setPath(event.currentTarget.value)} />
        <button type="submit">Open</button>
      </div>
    </form>
  )
}
