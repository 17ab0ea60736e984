/** Creating a key: a name, and the organization it acts in (if the person belongs to any). */
import { CreateApiKeyRequest } from "@huddle/server/contract"
import { useId, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { Field } from "../../ui/Field.js"
import { ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { validate } from "../../validate.js"
import type { CreatedKey, Membership } from "./wire.js"

interface Props {
  readonly orgs: ReadonlyArray<Membership>
  readonly onCreated: (key: CreatedKey) => void
}

export const NewKeyForm = ({ orgs, onCreated }: Props) => {
  const api = useApi()
  const orgField = useId()
  const [name, setName] = useState("")
  const [org, setOrg] = useState("")
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)

  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const payload = validate(CreateApiKeyRequest, { name, org_id: org === "" ? null : org })
    if (payload._tag === "Left") return setProblem(payload.left)
    setPending(true)
    const created = await api((client) => client.apiKeys.create({ payload: payload.right }))
    setPending(false)
    if (created._tag === "Left") return setProblem(created.left)
    setProblem(null)
    setName("")
    onCreated(created.right)
  }

  return (
    <form class="card" onSubmit={onSubmit} noValidate aria-label="Create an API key">
      <h2>Create a key</h2>
      <Field label="Name" required maxLength={100} value={name} onValue={setName} hint="Say where it is used, e.g. “build server”." />
      {orgs.length === 0 ? null : (
        <div class="field">
          <label for={orgField}>Acts in</label>
          <select id={orgField} value={org} onChange={(event) => setOrg(event.currentTarget.value)}>
            <option value="">Your personal account</option>
            {orgs.map((membership) => <option key={membership.id} value={membership.id}>{membership.name}</option>)}
          </select>
        </div>
      )}
      <ProblemNote problem={problem} />
      <button type="submit" disabled={pending}>{pending ? "Creating key…" : "Create key"}</button>
    </form>
  )
}
