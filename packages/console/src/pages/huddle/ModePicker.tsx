/** Single, multi or auto for the next message: a group of radio buttons, arrow keys move between them. */
import { useId } from "preact/hooks"
import type { Mode } from "./wire.js"

const modes: ReadonlyArray<{ readonly mode: Mode; readonly label: string; readonly hint: string }> = [
  { mode: "single", label: "Single", hint: "one model answers" },
  { mode: "multi", label: "Multi", hint: "a council of models debates and reports agreement and dissent" },
  { mode: "auto", label: "Auto", hint: "Huddle convenes the council only when two answers disagree" }
]

export const ModePicker = ({ mode, onMode }: { readonly mode: Mode; readonly onMode: (mode: Mode) => void }) => {
  const name = useId()
  return (
    <fieldset class="modes">
      <legend>Mode for this message</legend>
      {modes.map((option) => (
        <label key={option.mode} class="mode">
          <input type="radio" name={name} value={option.mode} checked={mode === option.mode} onChange={() => onMode(option.mode)} />
          <span>{option.label}</span> <span class="hint">{option.hint}</span>
        </label>
      ))}
    </fieldset>
  )
}
