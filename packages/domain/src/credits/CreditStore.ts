/**
 * Credit balances and their append-only ledger. Amounts are integers; a balance is the sum of
 * its ledger rows and can never go below zero.
 */
import { Context, type DateTime, type Effect, type Option } from "effect"
import type { CredentialKind } from "../identity/Principal.js"

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
  /** The user who granted, or null for the operator and the service itself. */
  readonly actorId: string | null
}

/**
 * Who acts, checked by the reservation statement itself (it reaches the database anyway): a
 * credential revoked, or a membership removed, before the statement runs can no longer spend,
 * whatever an instance's caches still say.
 */
export interface Authority {
  readonly via: CredentialKind
  readonly credentialId: string
  /** The user acting through the credential (the approver of an intent; otherwise the payer). */
  readonly actorId: string
}

export interface NewReservation {
  /** The accounts that may pay, in the order they are tried. */
  readonly accounts: ReadonlyArray<CreditAccountRef>
  readonly amount: number
  /** The member who pays (their personal balance, or their share of the org pool). */
  readonly userId: string
  /** The org context: the payer (and the actor) must be active members of it. */
  readonly orgId: string | null
  readonly purpose: string
  /** Omitted only by the service itself (tools, tests of the store). */
  readonly authority?: Authority | undefined
}

export type CapPeriod = "month" | "total"

export interface Cap {
  readonly amount: number
  readonly period: CapPeriod
}

/** What a member has taken from an org's pool (held and settled), and their cap if any. */
export interface Spending {
  readonly cap: Cap | null
  /** In the current calendar month (UTC). */
  readonly month: number
  readonly total: number
}

export type ReserveOutcome =
  | { readonly _tag: "Held"; readonly id: string; readonly account: CreditAccountRef }
  /** The credential was revoked or expired, or a membership is gone. */
  | { readonly _tag: "Refused"; readonly reason: "credential" | "membership" }
  /** No account could pay; `capRemaining` when the member's cap kept the org pool out. */
  | { readonly _tag: "Insufficient"; readonly cap: (Cap & { readonly remaining: number }) | null }

/** The tokens a settled call consumed, kept on its settle row for spend reports. */
export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
}

export interface LedgerEntry {
  readonly id: string
  readonly delta: number
  readonly kind: "grant" | "reserve" | "settle" | "release"
  readonly reservation_id: string | null
  readonly reason: string
  readonly actor_id: string | null
  readonly balance_after: number
  readonly created_at: DateTime.Utc
  /** What a settled model call was charged for (its settle row); null on every other row. */
  readonly input_tokens: number | null
  readonly output_tokens: number | null
}

export interface Service {
  /** Adds credits (creating the account when needed); returns the new balance. */
  readonly grant: (grant: Grant) => Effect.Effect<number>
  /** The balance, 0 for an account that does not exist yet. */
  readonly balance: (account: CreditAccountRef) => Effect.Effect<number>
  /** The sum of the account's ledger rows, to reconcile against `balance`. */
  readonly ledgerTotal: (account: CreditAccountRef) => Effect.Effect<number>
  /** The account's ledger, newest first, up to `limit + 1` rows (cursor: a ledger id). */
  readonly ledger: (
    account: CreditAccountRef,
    page: { readonly limit: number; readonly cursor?: string | undefined }
  ) => Effect.Effect<ReadonlyArray<LedgerEntry>>
  /**
   * Takes `amount` from the first of `accounts` whose balance covers it (an org account only
   * within the payer's cap), atomically with respect to every other reservation; checks the
   * authority in the same statement.
   */
  readonly reserve: (reservation: NewReservation) => Effect.Effect<ReserveOutcome>
  /**
   * Charges `actual` (at most the amount held) and returns the rest; none if not held. `tokens`,
   * when the reservation paid for a model call, are written on the settle row.
   */
  readonly settle: (
    reservationId: string,
    actual: number,
    tokens?: TokenUsage | undefined
  ) => Effect.Effect<Option.Option<{ readonly charged: number }>>
  /** Returns everything held; false if the reservation was not held. */
  readonly release: (reservationId: string) => Effect.Effect<boolean>
  /**
   * Moves `amount` of a held reservation into a new held reservation of the same account, member,
   * org and purpose (its child), which is then settled or released on its own; the parent keeps the
   * rest and is closed as usual. No balance, ledger or spending changes: the credits stay held.
   * None when the parent is not held or holds less than `amount`.
   */
  readonly split: (reservationId: string, amount: number) => Effect.Effect<Option.Option<{ readonly id: string }>>
  /**
   * Releases every reservation still held that was made before `heldBefore` (its request can no
   * longer be running: its process died, or could not reach the database to close it); returns
   * how many. Safe to run from several instances at once.
   */
  readonly releaseExpired: (heldBefore: DateTime.Utc) => Effect.Effect<number>
  /** Releases every reservation still held by these (lost) instances; returns how many. */
  readonly releaseHeldBy: (instanceIds: ReadonlyArray<string>) => Effect.Effect<number>
  /**
   * Writes what this instance keeps of the credits in memory (a leased store's batch, decision
   * 0021), so that reads of the database made after it (the member list's spending, the spend
   * reports) see every charge it has answered for; nothing to do for a store that writes as it goes.
   */
  readonly flush: Effect.Effect<void>
  /** Credits charged to an org's pool (settled reservations) since a time. */
  readonly orgUsageSince: (orgId: string, since: DateTime.Utc) => Effect.Effect<number>
  /** Sets or lifts (null) a member's cap on the org pool; returns their spending. */
  readonly setCap: (orgId: string, userId: string, cap: Cap | null) => Effect.Effect<Spending>
  /** The spending of these members of the org (members who never spent: zero, no cap). */
  readonly spending: (orgId: string, userIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, Spending>>
}

export class CreditStore extends Context.Tag("@huddle/domain/CreditStore")<CreditStore, Service>() {}
