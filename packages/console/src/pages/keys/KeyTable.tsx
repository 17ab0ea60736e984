/** The keys, newest first; each can be revoked, after a confirmation in its own row. */
import { useLayoutEffect, useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { ProblemNote } from "../../ui/Status.js"
import { Time } from "../../ui/Time.js"
import { useApi } from "../../ui/useApi.js"
import type { ApiKey, Membership } from "./wire.js"

interface Props {
  readonly keys: ReadonlyArray<ApiKey>
  readonly orgs: ReadonlyArray<Membership>
  readonly onRevoked: (key: ApiKey) => void
}

export const KeyTable = ({ keys, orgs, onRevoked }: Props) => {
  const [confirming, setConfirming] = useState<string | null>(null)
  const orgName = (id: string | null) =>
    id === null ? "Personal" : orgs.find((membership) => membership.id === id)?.name ?? id
  return (
    <table class="keys">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Key</th>
          <th scope="col">Acts in</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key.id}>
            <th scope="row" data-label="Name">{key.name}</th>
            <td data-label="Key"><code>{key.prefix}…{key.last_four}</code></td>
            <td data-label="Acts in">{orgName(key.org_id)}</td>
            <td data-label="Created"><Time at={key.created_at} /></td>
            <td data-label="Last used">{key.last_used_at === null ? "Never" : <Time at={key.last_used_at} />}</td>
            <td class="actions">
              {confirming === key.id
                ? <ConfirmRevoke apiKey={key} onCancel={() => setConfirming(null)} onRevoked={() => onRevoked(key)} />
                : <button type="button" class="secondary" onClick={() => setConfirming(key.id)} aria-label={`Revoke ${key.name}`}>Revoke</button>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

interface ConfirmProps {
  readonly apiKey: ApiKey
  readonly onCancel: () => void
  readonly onRevoked: () => void
}

const ConfirmRevoke = ({ apiKey, onCancel, onRevoked }: ConfirmProps) => {
  const api = useApi()
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const cancel = useRef<HTMLButtonElement>(null)
  // Focus lands on the safe choice.
  useLayoutEffect(() => cancel.current?.focus(), [])
  const revoke = async () => {
    setPending(true)
    const result = await api((client) => client.apiKeys.revoke({ path: { id: apiKey.id } }))
    setPending(false)
    if (result._tag === "Left") return setProblem(result.left)
    onRevoked()
  }
  return (
    <div
      class="confirm"
      role="group"
      aria-label={`Revoke ${apiKey.name}`}
      onKeyDown={(event) => event.key === "Escape" && onCancel()}
    >
      <p>Programs using this key are refused from the next request on.</p>
      <button type="button" class="danger" disabled={pending} onClick={revoke}>{pending ? "Revoking…" : "Revoke key"}</button>
      <button type="button" class="secondary" onClick={onCancel} ref={cancel}>Cancel</button>
      <ProblemNote problem={problem} />
    </div>
  )
}
