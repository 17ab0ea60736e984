import { Context, type Effect, type Option } from "effect"
import type { Conflict } from "../shared/Errors.js"
import type { Email, User, UserId } from "../identity/User.js"

export interface UserWithPassword {
  readonly user: User
  readonly passwordHash: string
}

export interface Service {
  /** Fails with `Conflict` when the email is already registered. */
  readonly create: (user: User, passwordHash: string) => Effect.Effect<void, Conflict>
  readonly findByEmail: (email: Email) => Effect.Effect<Option.Option<UserWithPassword>>
  readonly findById: (id: UserId) => Effect.Effect<Option.Option<User>>
  readonly setPasswordHash: (id: UserId, passwordHash: string) => Effect.Effect<void>
}

export class UserRepository extends Context.Tag("@huddle/domain/UserRepository")<UserRepository, Service>() {}
