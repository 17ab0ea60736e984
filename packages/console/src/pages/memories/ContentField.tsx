/** A memory's text: a labelled multi-line field with its limit said. */
import { useId } from "preact/hooks"

interface Props {
  readonly label: string
  readonly value: string
  readonly onValue: (value: string) => void
}

export const maxContent = 8000

export const ContentField = ({ label, value, onValue }: Props) => {
  const id = useId()
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        rows={4}
        required
        maxLength={maxContent}
        aria-describedby={`${id}-hint`}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
      <p class="hint" id={`${id}-hint`}>Up to {maxContent.toLocaleString()} characters. Huddle puts it in front of the models when it applies.</p>
    </div>
  )
}
