/**
 * The strings a client may send (docs/decisions/0014-wire-strings.md). Every string of the
 * contract's requests is one of these, so that decoding refuses bad text before anything is
 * stored or sent on: text must be well-formed Unicode (no lone surrogates, which cannot be
 * stored or encoded as UTF-8) and hold no control characters (C0, DEL, C1; NUL among them,
 * which PostgreSQL cannot store), except tab, newline and carriage return in free-form text.
 */
import { Schema } from "effect"

const isControl = (unit: number) => unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)
const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff
const codePoint = (unit: number) => `U+${unit.toString(16).toUpperCase().padStart(4, "0")}`

/** Why `text` is refused (never quoting it), or `undefined` when it is acceptable. */
const refusal = (text: string, allowed: ReadonlySet<number>): string | undefined => {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (isHigh(unit) && isLow(text.charCodeAt(i + 1))) {
      i++
    } else if (isHigh(unit) || isLow(unit)) {
      return "must be well-formed Unicode: it holds a lone surrogate"
    } else if (isControl(unit) && !allowed.has(unit)) {
      return allowed.size === 0
        ? `must not contain control characters (found ${codePoint(unit)})`
        : `must not contain control characters other than tab, newline and carriage return (found ${codePoint(unit)})`
    }
  }
  return undefined
}

const wireString = (allowed: ReadonlySet<number>, pattern: string, description: string) =>
  Schema.String.pipe(
    Schema.filter((text) => refusal(text, allowed) ?? true, {
      description,
      // What the OpenAPI document shows; the filter above is the rule.
      jsonSchema: { pattern }
    })
  )

/** Free-form text (a huddle input or message, a memory, a chat message): tab, newline and CR allowed. */
export const Text = wireString(
  new Set([0x09, 0x0a, 0x0d]),
  "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$",
  "well-formed Unicode text; no control characters except tab, newline and carriage return"
)

/** Every other string (ids, names, titles, emails, passwords, cursors): no control characters at all. */
export const Line = wireString(
  new Set(),
  "^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
  "well-formed Unicode text without control characters"
)

/** An identifier as clients send one back (`usr_…`, `org_…`): at most 64 characters. */
export const Id = Line.pipe(Schema.maxLength(64, { message: () => "must be at most 64 characters" }))

/**
 * A secret (a password): decoded by `schema` into a `Redacted`, so that it is never logged,
 * and refused with `rule` alone: no failure message, whatever failed, quotes the value.
 */
export const Secret = <I>(schema: Schema.Schema<string, I>, rule: string) =>
  Schema.Redacted(schema).annotations({ message: () => ({ message: rule, override: true }) })
