import { Schema } from "effect"
import { Line, Secret } from "../shared/WireString.js"

/** An email address as the service stores it: trimmed and lower-cased, so that lookups are exact. */
export const Email = Schema.Trim.pipe(
  Schema.lowercased({ message: () => "email must be lower-case" }),
  Schema.maxLength(254, { message: () => "email must be at most 254 characters" }),
  // No white space, control or format characters, nor lone surrogates (\p{C}), in any part.
  Schema.pattern(/^[^\s@\p{C}]+@[^\s@\p{C}]+\.[^\s@\p{C}]+$/u, { message: () => "email must be a valid address" }),
  Schema.brand("Email")
)
export type Email = typeof Email.Type

/** Accepts any casing on input and normalises it, so `Ann@Example.com` and `ann@example.com` are one account. */
export const EmailInput = Schema.transform(
  Line.annotations({ description: "an email address" }),
  Schema.String,
  { strict: true, decode: (s) => s.trim().toLowerCase(), encode: (s) => s }
).pipe(Schema.compose(Email))

export const maxPasswordLength = 256

/**
 * Characters as a person counts them: Unicode code points (NIST SP 800-63B counts a password's
 * length so), not the UTF-16 units of `length`, in which one emoji is two.
 */
const codePoints = (text: string) => {
  let n = 0
  for (const _ of text) n++
  return n
}

/** A new password: 8 to 256 characters. A failure never quotes it. */
export const Password = Secret(
  Line.pipe(Schema.filter((text) => codePoints(text) >= 8 && codePoints(text) <= maxPasswordLength, {
    jsonSchema: { minLength: 8, maxLength: maxPasswordLength }
  })),
  `password must be 8 to ${maxPasswordLength} characters, without control characters`
)

/** A password as given to log in: any length up to the longest a password can be, never quoted back. */
export const LoginPassword = Secret(
  Line.pipe(Schema.filter((text) => codePoints(text) <= maxPasswordLength, { jsonSchema: { maxLength: maxPasswordLength } })),
  `password must be at most ${maxPasswordLength} characters, without control characters`
)

export const UserId = Schema.String.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  email: Email,
  created_at: Schema.DateTimeUtc
}) {}
