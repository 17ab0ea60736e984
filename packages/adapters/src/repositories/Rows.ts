/** Shared row decoding for the SQL repositories. */
import { DateTime } from "effect"
import { User, type Email, type UserId } from "@huddle/domain/identity/User"

export const utc = (value: Date | string): DateTime.Utc => DateTime.unsafeMake(value)
export const utcOrNull = (value: Date | string | null): DateTime.Utc | null => value === null ? null : utc(value)
export const toDate = (value: DateTime.Utc): Date => DateTime.toDateUtc(value)

export interface UserRow {
  readonly user_id: string
  readonly user_email: string
  readonly user_created_at: Date
}

export const userFromRow = (row: UserRow): User =>
  new User({ id: row.user_id as UserId, email: row.user_email as Email, created_at: utc(row.user_created_at) }, { disableValidation: true })

/** Whether a SQL failure is a unique-constraint violation (SQLSTATE 23505) on either engine. */
export const isUniqueViolation = (error: { readonly cause?: unknown }): boolean => {
  const cause = error.cause as { code?: unknown } | null | undefined
  return typeof cause === "object" && cause !== null && cause.code === "23505"
}
