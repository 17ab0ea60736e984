/** The next message: its text, and the mode it is asked in (kept from message to message). */
import { useId, useState } from "preact/hooks"
import { ModePicker } from "./ModePicker.js"
import type { Mode } from "./wire.js"

interface Props {
  readonly pending: boolean
  readonly first: boolean
  /** Resolves true when the message was taken (the box is then emptied). */
  readonly onSend: (text: string, mode: Mode) => Promise<boolean>
}

export const Composer = ({ pending, first, onSend }: Props) => {
  const id = useId()
  const [text, setText] = useState("")
  const [mode, setMode] = useState<Mode>("single")
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    if (await onSend(text, mode)) setText("")
  }
  return (
    <form class="card composer" onSubmit={onSubmit} noValidate aria-label={first ? "Start a conversation" : "Send a message"}>
      <label for={id}>{first ? "Your question" : "Your message"}</label>
      <textarea
        id={id}
        rows={3}
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        onKeyDown={(event) => {
          // Ctrl+Enter (⌘+Enter) sends; Enter alone is a new line.
          if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) event.currentTarget.form?.requestSubmit()
        }}
        aria-describedby={`${id}-hint`}
      />
      <p class="hint" id={`${id}-hint`}>Ctrl+Enter sends.</p>
      <ModePicker mode={mode} onMode={setMode} />
      <button type="submit" disabled={pending}>{pending ? "Answering…" : "Send"}</button>
    </form>
  )
}
