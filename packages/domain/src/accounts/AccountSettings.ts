import { Context, Duration } from "effect"

/** Account rules an operator may tune. */
export interface Settings {
  /** Personal credits granted to every new user. */
  readonly starterCredits: number
  /** How long a web session lasts after login. */
  readonly sessionTtl: Duration.Duration
  /** How long a password-reset token the operator issues stays redeemable. */
  readonly passwordResetTtl: Duration.Duration
}

export class AccountSettings extends Context.Tag("@huddle/domain/AccountSettings")<AccountSettings, Settings>() {
  static readonly defaults: Settings = { starterCredits: 1000, sessionTtl: Duration.days(7), passwordResetTtl: Duration.hours(24) }
}
