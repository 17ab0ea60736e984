/** A labelled text input: the label names it, and a hint (if any) describes it. */
import { useId } from "preact/hooks"

interface Props {
  readonly label: string
  readonly value: string
  readonly onValue: (value: string) => void
  readonly type?: "text" | "email" | "password"
  readonly autoComplete?: string
  readonly required?: boolean
  readonly maxLength?: number
  readonly hint?: string
}

export const Field = ({ label, value, onValue, type = "text", autoComplete = "off", required = false, maxLength, hint }: Props) => {
  const id = useId()
  // One element per type: preact types each input type's attributes apart.
  const input = {
    id,
    autoComplete,
    required,
    ...(maxLength === undefined ? {} : { maxLength }),
    ...(hint === undefined ? {} : { "aria-describedby": `${id}-hint` }),
    value,
    onInput: (event: { readonly currentTarget: HTMLInputElement }) => onValue(event.currentTarget.value)
  }
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {type === "password"
        ? <input type="password" {...input} />
        : type === "email"
        ? <input type="email" {...input} />
        : <input type="text" {...input} />}
      {hint === undefined ? null : <p class="hint" id={`${id}-hint`}>{hint}</p>}
    </div>
  )
}
