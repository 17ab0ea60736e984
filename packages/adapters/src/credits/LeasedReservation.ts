/**
 * A reservation from a lease (decisions 0021, 0041): made in memory against this instance's
 * earmark on the first source that can pay (taking or topping up a lease as needed, waiting a
 * while for other instances' earmarks to come back), then confirmed by a read of the credential
 * and the memberships that began after it was made.
 */
import type { SqlError } from "@effect/sql/SqlError"
import type {
  CreditAccountRef,
  NewReservation,
  ReserveOutcome,
  Service as CreditStoreService
} from "@huddle/domain/credits/CreditStore"
import { Duration, Effect } from "effect"
import type { Authority } from "./AuthorityReads.js"
import type { CreditSql } from "./CreditSql.js"
import { type LeaseLedger, potKey, reserveLocally } from "./LeaseLedger.js"
import { type Short, take } from "./LeaseTake.js"
import { close } from "./LeasedSettlement.js"

export interface ReservationDeps {
  readonly context: CreditSql
  readonly ledger: LeaseLedger
  readonly settings: {
    readonly tick: Duration.Duration
    readonly blockFactor: number
    readonly shortWait: Duration.Duration
  }
  /** The SQL store: for reservations once the instance is stopping. */
  readonly inner: CreditStoreService
  /** The revocation rule's read (`AuthorityReads`). */
  readonly authorityOk: (reservation: NewReservation) => Effect.Effect<Authority, SqlError>
  /** Writes this instance's batch (after the one in progress, if any). */
  readonly flush: Effect.Effect<void>
}

type Held = Extract<ReserveOutcome, { _tag: "Held" }>

/**
 * Reserves from a lease of one source, taking or topping one up as needed; waits (until
 * `giveUpAt`) while other instances hold earmarks that may come back. `Short` when it cannot pay.
 */
const fromSource = (
  deps: ReservationDeps,
  request: NewReservation,
  account: CreditAccountRef,
  chosen: { readonly id: string; readonly ledgerId: string },
  giveUpAt: number,
  writeOwn: () => boolean
): Effect.Effect<Held | Short, SqlError> =>
  Effect.gen(function*() {
    const { context, flush, ledger, settings } = deps
    const key = potKey(account, request.userId)
    const { id, ledgerId } = chosen
    const held = () => reserveLocally(ledger, request, account, ledgerId, id)
    // Under the gate, so that what this instance earmarks is known when deciding to take more.
    const fromLease = ledger.gate.withPermits(1)(Effect.suspend(() => {
      if (held()) return Effect.succeed(undefined)
      const need = request.amount - (ledger.pots.get(key)?.free ?? 0)
      return Effect.map(
        take(context, ledger, account, request.userId, need, Math.max(need, request.amount * settings.blockFactor)),
        ({ short, taken }) => taken > 0 && held() ? undefined : short
      )
    }))
    for (;;) {
      if (held()) return { _tag: "Held", id, account } as const
      const short = yield* fromLease
      if (short === undefined) return { _tag: "Held", id, account } as const
      // This instance's own refunds may be waiting for its batch: write it, then look again.
      if (writeOwn()) {
        yield* flush
        continue
      }
      // Short on this instance's view: others' earmarks come back within a tick; wait for them
      // rather than fall to the next source (or refuse) while this one could pay.
      if (!short.elsewhere || Date.now() >= giveUpAt) return short
      yield* Effect.sleep(settings.tick)
    }
  })

/**
 * The revocation rule (decision 0015) with leases (decision 0041): a reservation counts only once
 * a read of the credential and the memberships that *started after it was made in memory* found
 * them standing. A revoke whose answer came before that read began committed before it, so the
 * read sees it and the reservation is given back, charging nothing. A read made only before the
 * reservation is not enough: a request may wait there for a lease (up to `shortWait`) while the
 * revoke is answered.
 */
const confirmed = ({ authorityOk, context, ledger }: ReservationDeps, request: NewReservation, held: Held) =>
  Effect.flatMap(authorityOk(request), (authority): Effect.Effect<ReserveOutcome> => {
    if (authority.credentialOk && authority.memberOk) return Effect.succeed(held)
    const refused = { _tag: "Refused", reason: authority.credentialOk ? "membership" : "credential" } as const
    const reservation = ledger.local.get(held.id)
    if (reservation === undefined) return Effect.succeed(refused)
    // Not yet part of a batch: withdrawn, as if never made (the ledger shows nothing of it).
    if (!reservation.attempted && reservation.status === "held") {
      const pot = ledger.pots.get(reservation.pot)
      if (pot !== undefined) pot.free += reservation.amount
      ledger.local.delete(reservation.id)
      ledger.dirty.delete(reservation.id)
      return Effect.succeed(refused)
    }
    return Effect.as(close(context.ids, ledger, reservation, 0, "released"), refused)
  })

export const reserve = (deps: ReservationDeps, request: NewReservation): Effect.Effect<ReserveOutcome, SqlError> =>
  Effect.gen(function*() {
    const { authorityOk, context: { ids }, inner, ledger, settings } = deps
    const [first] = request.accounts
    if (ledger.stopped || first === undefined) return yield* inner.reserve(request)
    const chosen = { id: yield* ids.next("res"), ledgerId: yield* ids.next("led") }
    // This instance's earmark on the first source covers it: reserved at once, then confirmed by
    // one read (the common case under load: one read per request, as before).
    if (reserveLocally(ledger, request, first, chosen.ledgerId, chosen.id)) {
      return yield* confirmed(deps, request, { _tag: "Held", id: chosen.id, account: first })
    }
    // Otherwise a first read refuses early and says whether the personal account is settled and
    // short (then no lease of it is taken); a second read confirms the reservation once made.
    const authority = yield* authorityOk(request)
    if (!authority.credentialOk) return { _tag: "Refused", reason: "credential" } as const
    if (!authority.memberOk) return { _tag: "Refused", reason: "membership" } as const
    const giveUpAt = Date.now() + Duration.toMillis(settings.shortWait)
    let ownWritten = false
    const writeOwn = () => {
      if (ownWritten || (ledger.dirty.size === 0 && ledger.pots.size === 0)) return false
      ownWritten = true
      return true
    }
    let cap: Short["cap"] = null
    for (const account of request.accounts) {
      // Settled and short (nothing earmarked or held anywhere): a lease would take nothing.
      const settledShort = account === first && authority.settledBalance !== undefined &&
        authority.settledBalance < request.amount && !ledger.pots.has(potKey(account, request.userId))
      if (settledShort) continue
      const outcome = yield* fromSource(deps, request, account, chosen, giveUpAt, writeOwn)
      if (outcome._tag === "Held") return yield* confirmed(deps, request, outcome)
      // The member's cap on the org pool, as the SQL store reports it when no source could pay.
      if (outcome.cap !== null) cap = outcome.cap
    }
    return { _tag: "Insufficient", cap } as const
  })
