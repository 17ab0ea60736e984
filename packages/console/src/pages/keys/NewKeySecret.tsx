/**
 * A key just created: its secret, shown this once, with a copy button. Where the clipboard is
 * refused (a page not served over HTTPS or from this machine), the key is selected for copying.
 */
import { useEffect, useId, useRef, useState } from "preact/hooks"
import type { CreatedKey } from "./wire.js"

export const NewKeySecret = ({ created, onDone }: { readonly created: CreatedKey; readonly onDone: () => void }) => {
  const id = useId()
  const heading = useRef<HTMLHeadingElement>(null)
  const field = useRef<HTMLInputElement>(null)
  const [copied, setCopied] = useState("")
  useEffect(() => heading.current?.focus(), [created.id])

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key)
      setCopied("Copied to the clipboard.")
    } catch {
      field.current?.select()
      setCopied("The browser refused the clipboard: the key is selected, copy it with Ctrl+C (⌘C on a Mac).")
    }
  }

  return (
    <section class="card secret" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} tabIndex={-1} ref={heading}>Your new key “{created.name}”</h2>
      <p>Copy it now and keep it somewhere safe: this is the only time Huddle shows it.</p>
      <label for={id}>Your new API key</label>
      <div class="copyable">
        <input id={id} ref={field} readOnly spellcheck={false} value={created.key} onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={copy}>Copy</button>
      </div>
      <p class="hint" role="status">{copied}</p>
      <button type="button" class="secondary" onClick={onDone}>I have saved it</button>
    </section>
  )
}
