import { Context, type DateTime, type Effect, type Option } from "effect"
import type { User } from "../identity/User.js"

export interface NewWebSession {
  readonly id: string
  readonly userId: string
  readonly prefix: string
  readonly tokenHash: string
  readonly createdAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
}

export interface ActiveWebSession {
  readonly id: string
  readonly user: User
  readonly tokenHash: string
}

export interface Service {
  readonly create: (session: NewWebSession) => Effect.Effect<void>
  /** The unrevoked, unexpired session with this prefix, with its user. */
  readonly findActive: (prefix: string, now: DateTime.Utc) => Effect.Effect<Option.Option<ActiveWebSession>>
  readonly revoke: (id: string, at: DateTime.Utc) => Effect.Effect<void>
  /** Revokes every unrevoked session of the user but `except` (if given); returns how many. */
  readonly revokeAllForUser: (userId: string, at: DateTime.Utc, except?: string) => Effect.Effect<number>
}

export class WebSessionRepository extends Context.Tag("@huddle/domain/WebSessionRepository")<
  WebSessionRepository,
  Service
>() {}
