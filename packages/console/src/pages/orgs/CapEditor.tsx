/** Setting or lifting a member's cap on what they may take from the org's pool. */
import { CapRequest } from "@huddle/server/contract"
import { useId, useLayoutEffect, useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { validate } from "../../validate.js"
import { memberRef } from "./MemberTable.js"
import type { Member } from "./wire.js"

interface Props {
  readonly orgId: string
  readonly member: Member
  readonly onCancel: () => void
  readonly onSaved: (member: Member) => void
}

export const CapEditor = ({ orgId, member, onCancel, onSaved }: Props) => {
  const api = useApi()
  const id = useId()
  const [amount, setAmount] = useState(member.cap === null ? "" : String(member.cap.amount))
  const [period, setPeriod] = useState<"month" | "total">(member.cap?.period ?? "month")
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const first = useRef<HTMLInputElement>(null)
  useLayoutEffect(() => first.current?.focus(), [])

  const save = async (cap: { amount: number; period: "month" | "total" } | null) => {
    const payload = validate(CapRequest, cap)
    if (payload._tag === "Left") return setProblem(payload.left)
    setPending(true)
    const result = await api((client) => client.orgAdmin.setCap({ path: { orgId, member: memberRef(member) }, payload: payload.right }))
    setPending(false)
    if (result._tag === "Left") return setProblem(result.left)
    onSaved(result.right)
  }
  const onSubmit = (event: Event) => {
    event.preventDefault()
    // An empty or non-numeric amount fails the contract's integer rule, said in its words.
    void save({ amount: amount.trim() === "" ? Number.NaN : Number(amount), period })
  }

  return (
    <form class="confirm cap" aria-label={`Spending cap of ${member.email}`} onSubmit={onSubmit} noValidate onKeyDown={(event) => event.key === "Escape" && onCancel()}>
      <label for={`${id}-amount`}>Credits</label>
      <input id={`${id}-amount`} ref={first} type="number" min={0} step={1} inputMode="numeric" value={amount} onInput={(event) => setAmount(event.currentTarget.value)} />
      <label for={`${id}-period`}>Per</label>
      <select id={`${id}-period`} value={period} onChange={(event) => setPeriod(event.currentTarget.value === "total" ? "total" : "month")}>
        <option value="month">Calendar month (UTC)</option>
        <option value="total">In total</option>
      </select>
      <ProblemNote problem={problem} />
      <button type="submit" disabled={pending}>Save cap</button>
      {member.cap === null ? null : <button type="button" class="secondary" disabled={pending} onClick={() => save(null)}>Lift cap</button>}
      <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
    </form>
  )
}
