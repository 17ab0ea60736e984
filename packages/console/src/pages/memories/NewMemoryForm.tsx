/**
 * Creating a memory: what it says and who it is for. Personal is the author's alone; a workspace
 * memory is read by whoever uses the workspace; an org memory by every member (admins write them).
 */
import { CreateMemoryRequest } from "@huddle/server/contract"
import { useId, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { validate } from "../../validate.js"
import { ContentField } from "./ContentField.js"
import type { Membership, Memory, Workspace } from "./wire.js"

interface Props {
  readonly workspaces: ReadonlyArray<Workspace>
  readonly orgs: ReadonlyArray<Membership>
  readonly onCreated: (memory: Memory) => void
}

type Scope = "personal" | "workspace" | "org"

export const NewMemoryForm = ({ onCreated, orgs, workspaces }: Props) => {
  const api = useApi()
  const scopeField = useId()
  const whereField = useId()
  const adminOf = orgs.filter((membership) => membership.role === "admin")
  const [content, setContent] = useState("")
  const [scope, setScope] = useState<Scope>("personal")
  const [workspace, setWorkspace] = useState(workspaces[0]?.id ?? "")
  const [org, setOrg] = useState(adminOf[0]?.id ?? "")
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)

  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const payload = validate(CreateMemoryRequest, {
      content,
      scope,
      org_id: scope === "org" ? org : null,
      workspace_id: scope === "workspace" ? workspace : null
    })
    if (payload._tag === "Left") return setProblem(payload.left)
    setPending(true)
    const created = await api((client) => client.memories.create({ payload: payload.right }))
    setPending(false)
    if (created._tag === "Left") return setProblem(created.left)
    setProblem(null)
    setContent("")
    onCreated(created.right)
  }

  return (
    <form class="card" onSubmit={onSubmit} noValidate aria-label="Create a memory">
      <h2>Remember something</h2>
      <ContentField label="What to remember" value={content} onValue={setContent} />
      <div class="field">
        <label for={scopeField}>Who it is for</label>
        <select id={scopeField} value={scope} onChange={(event) => setScope(event.currentTarget.value as Scope)}>
          <option value="personal">Only you (personal)</option>
          <option value="workspace">A workspace</option>
          {adminOf.length === 0 ? null : <option value="org">Every member of an organization</option>}
        </select>
      </div>
      {scope === "workspace"
        ? (
          <div class="field">
            <label for={whereField}>Workspace</label>
            <select id={whereField} value={workspace} onChange={(event) => setWorkspace(event.currentTarget.value)}>
              {workspaces.map((w) => <option key={w.id} value={w.id}>{w.personal ? "Your personal workspace" : w.name}</option>)}
            </select>
          </div>
        )
        : null}
      {scope === "org"
        ? (
          <div class="field">
            <label for={whereField}>Organization</label>
            <select id={whereField} value={org} onChange={(event) => setOrg(event.currentTarget.value)}>
              {adminOf.map((membership) => <option key={membership.id} value={membership.id}>{membership.name}</option>)}
            </select>
          </div>
        )
        : null}
      <ProblemNote problem={problem} />
      <button type="submit" disabled={pending}>{pending ? "Saving…" : "Save memory"}</button>
    </form>
  )
}
