import type { DateTime } from "effect"
import { iso, when } from "../format.js"

export const Time = ({ at }: { readonly at: DateTime.Utc }) => <time dateTime={iso(at)}>{when(at)}</time>
