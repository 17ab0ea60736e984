/**
 * The email-and-password form of signing up and of logging in. What is typed is checked with the
 * contract's own request schema before it is sent, so the form says what the server would.
 */
import type { Schema } from "effect"
import { useState } from "preact/hooks"
import type { Problem } from "../api.js"
import { Field } from "../ui/Field.js"
import { ProblemNote } from "../ui/Status.js"
import { validate } from "../validate.js"

interface Props<A> {
  readonly schema: Schema.Schema<A, { readonly email: string; readonly password: string }>
  readonly action: string
  readonly pendingAction: string
  readonly passwordAutoComplete: "new-password" | "current-password"
  readonly passwordHint?: string
  readonly initialEmail?: string
  /** Sends the request; a problem is shown under the form. */
  readonly submit: (request: A) => Promise<Problem | null>
}

export const CredentialsForm = <A,>(props: Props<A>) => {
  const [email, setEmail] = useState(props.initialEmail ?? "")
  const [password, setPassword] = useState("")
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)

  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const request = validate(props.schema, { email, password })
    if (request._tag === "Left") return setProblem(request.left)
    setPending(true)
    setProblem(await props.submit(request.right))
    setPending(false)
  }

  return (
    <form class="card" onSubmit={onSubmit} noValidate>
      <Field label="Email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
      <Field
        label="Password"
        type="password"
        autoComplete={props.passwordAutoComplete}
        required
        value={password}
        onValue={setPassword}
        {...(props.passwordHint === undefined ? {} : { hint: props.passwordHint })}
      />
      <ProblemNote problem={problem} />
      <button type="submit" disabled={pending}>{pending ? props.pendingAction : props.action}</button>
    </form>
  )
}
