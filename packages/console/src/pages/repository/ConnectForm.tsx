/**
 * Connecting a repository to a workspace: a directory on the server (inside the roots the
 * operator allows) or a git URL the server clones. Connecting again replaces the repository.
 */
import { ConnectRepositoryRequest } from "@huddle/server/contract"
import { useId, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { Field } from "../../ui/Field.js"
import { ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { validate } from "../../validate.js"
import type { Status, Workspace } from "./wire.js"

interface Props {
  readonly workspace: Workspace
  readonly replacing: boolean
  readonly onConnected: (status: Status) => void
  readonly onCancel?: () => void
}

type Kind = "path" | "git_url"

export const ConnectForm = ({ onCancel, onConnected, replacing, workspace }: Props) => {
  const api = useApi()
  const group = useId()
  const [kind, setKind] = useState<Kind>("path")
  const [value, setValue] = useState("")
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)

  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const payload = validate(ConnectRepositoryRequest, kind === "path" ? { path: value } : { git_url: value })
    if (payload._tag === "Left") return setProblem(payload.left)
    setPending(true)
    const connected = await api((client) => client.workspaces.connect({ path: { id: workspace.id }, payload: payload.right }))
    setPending(false)
    if (connected._tag === "Left") return setProblem(connected.left)
    setProblem(null)
    setValue("")
    onConnected(connected.right)
  }

  const label = replacing ? "Connect another repository" : "Connect a repository"
  return (
    <form class="connect" onSubmit={onSubmit} noValidate aria-label={`${label} to ${workspace.name}`}>
      <fieldset>
        <legend id={group}>Where the code is</legend>
        <label class="choice">
          <input type="radio" name={`${group}-kind`} checked={kind === "path"} onChange={() => setKind("path")} />
          A directory on the server
        </label>
        <label class="choice">
          <input type="radio" name={`${group}-kind`} checked={kind === "git_url"} onChange={() => setKind("git_url")} />
          A git URL
        </label>
      </fieldset>
      {kind === "path"
        ? <Field label="Directory" value={value} onValue={setValue} hint="An absolute path, inside the directories the operator allows (HUDDLE_REPO_ROOTS)." />
        : <Field label="Git URL" value={value} onValue={setValue} hint="For example https://github.com/owner/project.git; the server clones it." />}
      <ProblemNote problem={problem} />
      <div class="actions">
        <button type="submit" disabled={pending}>{pending ? "Connecting…" : label}</button>
        {onCancel === undefined ? null : <button type="button" class="secondary" onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  )
}
