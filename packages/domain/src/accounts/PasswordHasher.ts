import { Context, type Effect, type Redacted } from "effect"

export interface Service {
  /** A self-describing hash (algorithm, parameters, salt) to store. */
  readonly hash: (password: Redacted.Redacted<string>) => Effect.Effect<string>
  /** Whether the password matches; compares in constant time. */
  readonly verify: (password: Redacted.Redacted<string>, stored: string) => Effect.Effect<boolean>
}

export class PasswordHasher extends Context.Tag("@huddle/domain/PasswordHasher")<PasswordHasher, Service>() {}
