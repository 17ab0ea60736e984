/**
 * Credit balances and their append-only ledger. Amounts are integers; a balance is the sum of
 * its ledger rows and can never go below zero.
 */
import { Context, type DateTime, type Effect, type Option } from "effect"

export type CreditPool = "personal" | "subscription" | "addon"

export interface CreditAccountRef {
  readonly ownerType: "user" | "org"
  readonly ownerId: string
  readonly pool: CreditPool
}

export interface Grant {
  readonly account: CreditAccountRef
  readonly amount: number
  readonly reason: string
  readonly actorId: string | null
}

export interface NewReservation {
  /** The accounts that may pay, in the order they are tried. */
  readonly accounts: ReadonlyArray<CreditAccountRef>
  readonly amount: number
  readonly userId: string
  readonly orgId: string | null
  readonly purpose: string
}

export interface Service {
  /** Adds credits (creating the account when needed); returns the new balance. */
  readonly grant: (grant: Grant) => Effect.Effect<number>
  /** The balance, 0 for an account that does not exist yet. */
  readonly balance: (account: CreditAccountRef) => Effect.Effect<number>
  /** The sum of the account's ledger rows, to reconcile against `balance`. */
  readonly ledgerTotal: (account: CreditAccountRef) => Effect.Effect<number>
  /**
   * Takes `amount` from the first of `accounts` whose balance covers it, atomically with respect
   * to every other reservation; returns the reservation id and the account that paid, or none.
   */
  readonly reserve: (
    reservation: NewReservation
  ) => Effect.Effect<Option.Option<{ readonly id: string; readonly account: CreditAccountRef }>>
  /** Charges `actual` (at most the amount held) and returns the rest; none if not held. */
  readonly settle: (reservationId: string, actual: number) => Effect.Effect<Option.Option<{ readonly charged: number }>>
  /** Returns everything held; false if the reservation was not held. */
  readonly release: (reservationId: string) => Effect.Effect<boolean>
  /**
   * Releases every reservation still held that was made before `heldBefore` (its request can no
   * longer be running: its process died, or could not reach the database to close it); returns
   * how many. Safe to run from several instances at once.
   */
  readonly releaseExpired: (heldBefore: DateTime.Utc) => Effect.Effect<number>
  /** Credits charged to an org's pool (settled reservations) since a time. */
  readonly orgUsageSince: (orgId: string, since: DateTime.Utc) => Effect.Effect<number>
}

export class CreditStore extends Context.Tag("@huddle/domain/CreditStore")<CreditStore, Service>() {}
