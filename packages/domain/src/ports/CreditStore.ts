/**
 * Credit balances and their append-only ledger. Amounts are integers; a balance is the sum of
 * its ledger rows and can never go below zero.
 */
import { Context, type Effect } from "effect"

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

export interface Service {
  /** Adds credits (creating the account when needed); returns the new balance. */
  readonly grant: (grant: Grant) => Effect.Effect<number>
  /** The balance, 0 for an account that does not exist yet. */
  readonly balance: (account: CreditAccountRef) => Effect.Effect<number>
  /** The sum of the account's ledger rows, to reconcile against `balance`. */
  readonly ledgerTotal: (account: CreditAccountRef) => Effect.Effect<number>
}

export class CreditStore extends Context.Tag("@huddle/domain/CreditStore")<CreditStore, Service>() {}
