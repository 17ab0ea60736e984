import { Schema } from "effect"

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
  Schema.String.annotations({ description: "an email address" }),
  Schema.String,
  { strict: true, decode: (s) => s.trim().toLowerCase(), encode: (s) => s }
).pipe(Schema.compose(Email))

export const Password = Schema.String.pipe(
  Schema.minLength(8, { message: () => "password must be at least 8 characters" }),
  Schema.maxLength(256, { message: () => "password must be at most 256 characters" })
)

export const UserId = Schema.String.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  email: Email,
  created_at: Schema.DateTimeUtc
}) {}
