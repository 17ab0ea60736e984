import { Context, type DateTime, type Effect, type Option } from "effect"
import type { UserId } from "../identity/User.js"

export interface NewPasswordReset {
  readonly id: string
  readonly userId: UserId
  readonly prefix: string
  readonly tokenHash: string
  readonly createdAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
}

export interface PendingPasswordReset {
  readonly id: string
  readonly userId: UserId
  readonly tokenHash: string
}

/** One-time password-reset tokens, stored as digests (never the token). */
export interface Service {
  /** Stores a reset, cancelling the user's earlier unused ones: one live token per user. */
  readonly create: (reset: NewPasswordReset) => Effect.Effect<void>
  /** The unused, unexpired reset with this prefix. */
  readonly findPending: (prefix: string, now: DateTime.Utc) => Effect.Effect<Option.Option<PendingPasswordReset>>
  /** Marks it used; false when it was used (or cancelled) already, so that only one redemption wins. */
  readonly consume: (id: string, at: DateTime.Utc) => Effect.Effect<boolean>
}

export class PasswordResetRepository extends Context.Tag("@huddle/domain/PasswordResetRepository")<
  PasswordResetRepository,
  Service
>() {}
