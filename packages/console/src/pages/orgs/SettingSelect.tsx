/** One setting as a select: its values in order, and "none" for leaving it unset. */
import { useId } from "preact/hooks"
import { choices, fromOption, type Setting, settingNames, valueText } from "./settings.js"

interface SelectProps {
  readonly setting: Setting
  readonly value: string | boolean | undefined
  readonly none: string
  readonly onValue: (value: string | boolean | undefined) => void
}

export const SettingSelect = ({ setting, value, none, onValue }: SelectProps) => {
  const id = useId()
  return (
    <div class="field">
      <label for={id}>{settingNames[setting]}</label>
      <select id={id} value={value === undefined ? "" : String(value)} onChange={(event) => onValue(fromOption(event.currentTarget.value))}>
        <option value="">{none}</option>
        {choices[setting].map((choice) => <option key={String(choice)} value={String(choice)}>{valueText(choice)}</option>)}
      </select>
    </div>
  )
}
