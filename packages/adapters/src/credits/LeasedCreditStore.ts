/**
 * Credit leases (decision 0021): the `CreditStore` port without a write to the account row per
 * request. For each source of a reservation in turn (the payer's personal balance, then the org's
 * pools), this instance earmarks a block of that account in one transaction (a lease,
 * `LeaseTake`), reserves and settles in memory against it (`LeaseLedger`, `LeasedReservation`,
 * `LeasedSettlement`), and writes the reservations and their ledger rows in one transaction per
 * tick, which also closes every lease it holds: what was not used goes back (`LeaseBatches`,
 * `LeaseBatchWrite`). A lease of an org pool is one member's: its earmark counts against that
 * member's cap while it is held (`member_spending.leased`), so the cap stays exact. Parts of a
 * reservation already written go to the SQL store, as does everything once the instance is stopping.
 *
 * Money stays where the SQL store keeps it: an earmark is not a movement (the credits stay in
 * `balance`, which equals the sum of the ledger), reservations from a lease never exceed it, and a
 * batch is written only while its leases are open. A lost instance's leases are reclaimed whole by
 * the others (its unwritten requests are not charged, as a lost instance's held reservations are
 * released today); a paused one that comes back finds them reclaimed and discards its batch.
 * The revocation rule still holds: a read of the credential and the memberships begun after a
 * reservation from a lease was made confirms it, or it is withdrawn (a read locks nothing and so
 * does not serialise; the reads of reservations asking at the same time go in one round trip,
 * `AuthorityReads`). A settle that charges returns once a batch has written it (decision 0041).
 */
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { Context, Duration, Effect, Layer } from "effect"
import * as AuthorityReads from "./AuthorityReads.js"
import * as CreditSql from "./CreditSql.js"
import * as LeaseBatches from "./LeaseBatches.js"
import * as LeaseLedger from "./LeaseLedger.js"
import { reserve } from "./LeasedReservation.js"
import { release, settle, split } from "./LeasedSettlement.js"
import { make as makeSqlCreditStore } from "./SqlCreditStore.js"

export interface Settings {
  /** Whether reservations are taken from leases (personal balances, and org pools member by member). */
  readonly enabled: boolean
  /** How often the batch is written and the leases closed: the longest a credit stays earmarked. */
  readonly tick: Duration.Duration
  /** A lease takes this many times the reservation that needed it (or what is left, if less). */
  readonly blockFactor: number
  /**
   * How long a reservation waits for other instances to give back their earmarks (they do at each
   * of their ticks) before its personal balance counts as short: the next source pays, or 402.
   */
  readonly shortWait: Duration.Duration
  /**
   * A settle that charges is answered only once its charge is written (decision 0041): the batch
   * then comes this long after it rather than a tick later, so that the settles of other requests
   * ending meanwhile share its transaction (a group commit). Only while other reservations are
   * held here (requests that may end soon); otherwise the batch is written at once.
   */
  readonly commitWindow: Duration.Duration
  /**
   * How long a settle waits for its charge to be written (the database unreachable): then it is
   * answered anyway, and the charge is written by a later batch.
   */
  readonly durableWait: Duration.Duration
}

export const defaults: Settings = {
  enabled: true,
  tick: Duration.millis(100),
  blockFactor: 32,
  shortWait: Duration.millis(500),
  commitWindow: Duration.millis(2),
  durableWait: Duration.seconds(5)
}

export class CreditLeases extends Context.Reference<CreditLeases>()("@huddle/adapters/CreditLeases", {
  defaultValue: () => defaults
}) {}

export const make = Effect.gen(function*() {
  const inner = yield* makeSqlCreditStore
  const settings = yield* CreditLeases
  if (!settings.enabled) return inner
  const context = yield* CreditSql.make
  const ledger = yield* LeaseLedger.make
  /** The revocation rule's read, one round trip for all the reservations asking at the time. */
  const authorityOk = yield* AuthorityReads.make(context.sql)
  const { durable, flush } = yield* LeaseBatches.make(context, ledger, settings)
  const reservations = { context, ledger, settings, inner, authorityOk, flush }
  const settlements = { ids: context.ids, ledger, inner, flush, durable }

  const flushed = <A>(read: Effect.Effect<A>) => Effect.zipRight(flush, read)

  return CreditStore.of({
    ...inner,
    flush,
    balance: (account) => flushed(inner.balance(account)),
    ledgerTotal: (account) => flushed(inner.ledgerTotal(account)),
    ledger: (account, page) => flushed(inner.ledger(account, page)),
    reserve: (request) => Effect.orDie(reserve(reservations, request)),
    settle: (reservationId, actual, tokens) => settle(settlements, reservationId, actual, tokens),
    release: (reservationId) => release(settlements, reservationId),
    split: (reservationId, amount) => split(settlements, reservationId, amount),
    releaseExpired: (heldBefore) => flushed(inner.releaseExpired(heldBefore)),
    // What members spent is counted by the batch; a new cap governs this instance's next earmark
    // at once (its earmarks go back first) and other instances' within a tick.
    spending: (orgId, userIds) => flushed(inner.spending(orgId, userIds)),
    setCap: (orgId, userId, cap) => flushed(inner.setCap(orgId, userId, cap)),
    orgUsageSince: (orgId, since) => flushed(inner.orgUsageSince(orgId, since)),
    releaseHeldBy: (instanceIds) => inner.releaseHeldBy(instanceIds)
  })
})

export const layer = Layer.scoped(CreditStore, make)
