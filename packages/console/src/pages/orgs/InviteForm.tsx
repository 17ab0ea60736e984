/** Inviting someone by email, as a member or an admin. */
import { InviteRequest } from "@huddle/server/contract"
import { useId, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { Field } from "../../ui/Field.js"
import { ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { validate } from "../../validate.js"
import type { Member } from "./wire.js"

interface Props {
  readonly orgId: string
  readonly onInvited: (member: Member) => void
}

export const InviteForm = ({ orgId, onInvited }: Props) => {
  const api = useApi()
  const roleField = useId()
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<"member" | "admin">("member")
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)

  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const payload = validate(InviteRequest, { email, role })
    if (payload._tag === "Left") return setProblem(payload.left)
    setPending(true)
    const invited = await api((client) => client.orgAdmin.invite({ path: { orgId }, payload: payload.right }))
    setPending(false)
    if (invited._tag === "Left") return setProblem(invited.left)
    setProblem(null)
    setEmail("")
    onInvited(invited.right)
  }

  return (
    <form class="card" onSubmit={onSubmit} noValidate aria-label="Invite a member">
      <h2>Invite someone</h2>
      <Field label="Email" type="email" required value={email} onValue={setEmail} hint="They join when they sign up or log in with this address." />
      <div class="field">
        <label for={roleField}>Role</label>
        <select id={roleField} value={role} onChange={(event) => setRole(event.currentTarget.value === "admin" ? "admin" : "member")}>
          <option value="member">Member</option>
          <option value="admin">Admin</option>
        </select>
      </div>
      <ProblemNote problem={problem} />
      <button type="submit" disabled={pending}>{pending ? "Inviting…" : "Invite"}</button>
    </form>
  )
}
