/**
 * The members, by email: each one's role (changed on the spot), cap and spending; a cap is set
 * or lifted, and a member removed after a confirmation, in the member's own row.
 */
import { useId, useLayoutEffect, useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { credits } from "../../format.js"
import { ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { CapEditor } from "./CapEditor.js"
import type { Member } from "./wire.js"

interface Props {
  readonly orgId: string
  readonly members: ReadonlyArray<Member>
  /** The signed-in user's id, to say which row is theirs. */
  readonly you: string
  readonly onChanged: (member: Member, message: string) => void
  readonly onRemoved: (member: Member) => void
}

/** The path's `member`: the user's id, or the email of a pending invitation. */
export const memberRef = (member: Member): string => member.user_id ?? member.email

export const capText = (cap: Member["cap"]): string =>
  cap === null ? "No cap" : `${credits(cap.amount)} ${cap.period === "month" ? "a month" : "in total"}`

export const MemberTable = ({ orgId, members, you, onChanged, onRemoved }: Props) => {
  const [open, setOpen] = useState<{ readonly email: string; readonly what: "cap" | "remove" } | null>(null)
  return (
    <table class="keys members">
      <thead>
        <tr>
          <th scope="col">Member</th>
          <th scope="col">Role</th>
          <th scope="col">Spending cap</th>
          <th scope="col">Spent this month</th>
          <th scope="col">Spent in total</th>
          <th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        {members.map((member) => (
          <tr key={member.email}>
            <th scope="row" data-label="Member">
              {member.email}
              {member.user_id === you ? <span class="tag">you</span> : null}
              {member.status === "pending" ? <span class="tag">invited</span> : null}
            </th>
            <td data-label="Role"><RoleSelect orgId={orgId} member={member} onChanged={onChanged} /></td>
            <td data-label="Spending cap">{capText(member.cap)}</td>
            <td data-label="Spent this month">{credits(member.spent.month)}</td>
            <td data-label="Spent in total">{credits(member.spent.total)}</td>
            <td class="actions">
              {open?.email === member.email && open.what === "cap"
                ? (
                  <CapEditor
                    orgId={orgId}
                    member={member}
                    onCancel={() => setOpen(null)}
                    onSaved={(next) => {
                      setOpen(null)
                      onChanged(next, next.cap === null ? `Lifted the cap of ${next.email}.` : `${next.email} may now take ${capText(next.cap)} from the pool.`)
                    }}
                  />
                )
                : open?.email === member.email && open.what === "remove"
                ? <ConfirmRemove orgId={orgId} member={member} onCancel={() => setOpen(null)} onRemoved={() => onRemoved(member)} />
                : (
                  <>
                    {member.status === "active"
                      ? <button type="button" class="secondary" onClick={() => setOpen({ email: member.email, what: "cap" })} aria-label={`Spending cap of ${member.email}`}>Cap</button>
                      : null}
                    <button type="button" class="secondary" onClick={() => setOpen({ email: member.email, what: "remove" })} aria-label={`Remove ${member.email}`}>Remove</button>
                  </>
                )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

const RoleSelect = ({ orgId, member, onChanged }: { readonly orgId: string; readonly member: Member; readonly onChanged: Props["onChanged"] }) => {
  const api = useApi()
  const id = useId()
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const onChange = async (event: { readonly currentTarget: HTMLSelectElement }) => {
    const select = event.currentTarget
    const role = select.value === "admin" ? "admin" : "member"
    setPending(true)
    const result = await api((client) => client.orgAdmin.setRole({ path: { orgId, member: memberRef(member) }, payload: { role } }))
    setPending(false)
    if (result._tag === "Left") {
      // Refused (the last admin): the select shows the role the member still has.
      select.value = member.role
      return setProblem(result.left)
    }
    setProblem(null)
    onChanged(result.right, `${result.right.email} is now ${result.right.role === "admin" ? "an admin" : "a member"}.`)
  }
  return (
    <>
      <label for={id} class="visually-hidden">Role of {member.email}</label>
      <select id={id} value={member.role} disabled={pending} onChange={onChange}>
        <option value="member">Member</option>
        <option value="admin">Admin</option>
      </select>
      <ProblemNote problem={problem} />
    </>
  )
}

interface ConfirmProps {
  readonly orgId: string
  readonly member: Member
  readonly onCancel: () => void
  readonly onRemoved: () => void
}

const ConfirmRemove = ({ orgId, member, onCancel, onRemoved }: ConfirmProps) => {
  const api = useApi()
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const cancel = useRef<HTMLButtonElement>(null)
  // Focus lands on the safe choice.
  useLayoutEffect(() => cancel.current?.focus(), [])
  const remove = async () => {
    setPending(true)
    const result = await api((client) => client.orgAdmin.removeMember({ path: { orgId, member: memberRef(member) } }))
    setPending(false)
    if (result._tag === "Left") return setProblem(result.left)
    onRemoved()
  }
  return (
    <div class="confirm" role="group" aria-label={`Remove ${member.email}`} onKeyDown={(event) => event.key === "Escape" && onCancel()}>
      <p>{member.status === "pending" ? "The invitation is withdrawn." : "They lose access to the organization's pool, memories and workspaces."}</p>
      <button type="button" class="danger" disabled={pending} onClick={remove}>{pending ? "Removing…" : "Remove member"}</button>
      <button type="button" class="secondary" onClick={onCancel} ref={cancel}>Cancel</button>
      <ProblemNote problem={problem} />
    </div>
  )
}
