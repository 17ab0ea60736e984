/**
 * Credits for a request: reserve its worst-case cost before any model is called, then settle to
 * what it really cost or release it. A reservation comes whole from the first source that can
 * cover it: the member's personal balance, then the org's subscription balance, then its add-on
 * balance; the org sources only in an org context and when `credit_fallback` allows.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { InsufficientCredits, NotFound, Unauthorized } from "../shared/Errors.js"
import type { Principal } from "../identity/Principal.js"
import { AuditLog } from "../audit/AuditLog.js"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"
import { traced } from "../observability/Traced.js"
import { type Authority, type CreditAccountRef, type CreditPool, CreditStore, type ReserveOutcome, type TokenUsage } from "./CreditStore.js"

export const CreditSource = Schema.Literal("personal", "subscription", "addon")

export class Reservation extends Schema.Class<Reservation>("Reservation")({
  id: Schema.String,
  source: CreditSource,
  amount: Schema.Int
}) {}

export interface ReserveInput {
  readonly userId: string
  /** The org context of the request, if any. */
  readonly orgId: string | null
  readonly amount: number
  readonly creditFallback: boolean
  readonly purpose: string
  /** Who acts: their credential and the memberships are checked again as the credits are taken. */
  readonly authority: Authority
  /**
   * When no source covers `amount`: the smaller amount that would still do, given what is
   * spendable (see `spendable`), or undefined when none would. That amount is then reserved
   * instead (refused as usual if it no longer fits); without `lower`, refused at once.
   */
  readonly lower?: ((spendable: number) => number | undefined) | undefined
}

/** The authority of a principal acting for themselves. */
export const authorityOf = (principal: Principal): Authority => ({
  via: principal.via,
  credentialId: principal.credential_id,
  actorId: principal.user.id
})

const revoked = new Unauthorized({ message: "The credential was revoked or has expired" })
const notMember = new NotFound({ message: "Organization not found" })

const capMessage = (amount: number, cap: Extract<ReserveOutcome, { _tag: "Insufficient" }>["cap"]) =>
  cap === null
    ? `The credit balance cannot cover this request (${amount} credits needed)`
    : `The credit balance cannot cover this request (${amount} credits needed): your spending cap on the organization's pool ` +
      `(${cap.amount} credits ${cap.period === "month" ? "a month" : "in total"}) leaves ${cap.remaining}`

/**
 * What settling `reservation` for a cost of `actual` charges: rounded up, never more than was
 * reserved. (The store may charge less, when it holds less after a `carve`, or nothing when the
 * reservation is no longer held.)
 */
export const chargeOf = (reservation: Reservation, actual: number): number => Math.min(Math.max(0, Math.ceil(actual)), reservation.amount)

/** The sources that may pay, in the order they are tried. */
export const sourcesFor = (
  input: Pick<ReserveInput, "userId" | "orgId" | "creditFallback">
): ReadonlyArray<CreditAccountRef> => {
  const personal: CreditAccountRef = { ownerType: "user", ownerId: input.userId, pool: "personal" }
  if (input.orgId === null || !input.creditFallback) return [personal]
  const org = (pool: CreditPool): CreditAccountRef => ({ ownerType: "org", ownerId: input.orgId!, pool })
  return [personal, org("subscription"), org("addon")]
}

export interface Service {
  /**
   * Fails with `InsufficientCredits` when no source can pay, `Unauthorized` when the credential
   * was revoked, `NotFound` when a membership of the org context is gone.
   */
  readonly reserve: (input: ReserveInput) => Effect.Effect<Reservation, InsufficientCredits | Unauthorized | NotFound>
  /**
   * The most one reservation could take for this payer now: the largest of the sources that may
   * pay (a reservation comes whole from one), an org source within the member's cap. A reading,
   * not a hold: only `reserve` takes credits.
   */
  readonly spendable: (payer: Pick<ReserveInput, "userId" | "orgId" | "creditFallback">) => Effect.Effect<number>
  /**
   * Charges the real cost (never more than was reserved); returns what was charged. `tokens`: what
   * the model call it paid for consumed, recorded with the charge (spend reports sum them).
   */
  readonly settle: (reservation: Reservation, actual: number, tokens?: TokenUsage | undefined) => Effect.Effect<number>
  readonly release: (reservation: Reservation) => Effect.Effect<void>
  /** A part of a held reservation as a reservation of its own (see `CreditStore.split`); none when it holds less. */
  readonly carve: (parent: Reservation, amount: number) => Effect.Effect<Option.Option<Reservation>>
}

export class Credits extends Context.Tag("@huddle/domain/Credits")<Credits, Service>() {}

export const make = Effect.gen(function*() {
  const store = yield* CreditStore
  const audit = yield* AuditLog
  const metrics = yield* Metrics.Metrics
  const count = (event: "held" | "settled" | "released", change: number) => {
    metrics.add(Instruments.reservations, { event })
    metrics.add(Instruments.reservationsHeld, {}, change)
  }

  // Read only when a reservation was refused: the path of every request that can pay is unchanged.
  const spendable: Service["spendable"] = (payer) =>
    Effect.gen(function*() {
      const sources = sourcesFor(payer)
      const [balances, spending] = yield* Effect.all([
        Effect.forEach(sources, (account) => store.balance(account), { concurrency: "unbounded" }),
        payer.orgId === null || sources.length === 1
          ? Effect.succeed(undefined)
          : Effect.map(store.spending(payer.orgId, [payer.userId]), (all) => all.get(payer.userId))
      ], { concurrency: "unbounded" })
      const cap = spending?.cap ?? null
      const capLeft = cap === null ? Infinity : Math.max(0, cap.amount - (cap.period === "total" ? spending!.total : spending!.month))
      return Math.max(0, ...sources.map((account, i) => account.ownerType === "org" ? Math.min(balances[i]!, capLeft) : balances[i]!))
    })

  const reserve: Service["reserve"] = (input) =>
    Effect.gen(function*() {
      const asked = Math.max(1, Math.ceil(input.amount))
      const attempt = (amount: number) =>
        store.reserve({
          accounts: sourcesFor(input),
          amount,
          userId: input.userId,
          orgId: input.orgId,
          purpose: input.purpose,
          authority: input.authority
        })
      let amount = asked
      let held = yield* attempt(amount)
      if (held._tag === "Insufficient" && input.lower !== undefined) {
        const smaller = input.lower(yield* spendable(input))
        if (smaller !== undefined && Math.ceil(smaller) < asked && smaller >= 1) {
          amount = Math.ceil(smaller)
          const retried = yield* attempt(amount)
          // Refused again (spent meanwhile): the denial names what was asked first.
          if (retried._tag === "Insufficient") amount = asked
          held = retried
        }
      }
      switch (held._tag) {
        case "Held":
          count("held", 1)
          return new Reservation({ id: held.id, source: held.account.pool, amount })
        case "Refused":
          return yield* (held.reason === "credential" ? revoked : notMember)
        case "Insufficient":
          yield* audit.record({
            orgId: input.orgId,
            eventType: "credits.denied",
            actorId: input.authority.actorId,
            target: input.userId,
            details: {
              amount,
              purpose: input.purpose,
              credit_fallback: input.creditFallback,
              ...(held.cap === null ? {} : { cap: held.cap.amount, cap_period: held.cap.period, cap_remaining: held.cap.remaining })
            }
          })
          metrics.add(Instruments.creditDenials, {})
          return yield* new InsufficientCredits({ message: capMessage(amount, held.cap) })
      }
    })

  // `reservation.amount` is what was held when it was made; after a carve the store holds less,
  // and its own bound (what the row still holds) is the one that counts.
  const settle: Service["settle"] = (reservation, actual, tokens) =>
    store.settle(reservation.id, chargeOf(reservation, actual), tokens).pipe(
      Effect.map(Option.match({
        onNone: () => 0,
        onSome: (_) => {
          count("settled", -1)
          return _.charged
        }
      }))
    )

  const release: Service["release"] = (reservation) =>
    Effect.map(store.release(reservation.id), (released) => {
      if (released) count("released", -1)
    })

  const carve: Service["carve"] = (parent, amount) => {
    const part = Math.max(1, Math.ceil(amount))
    return store.split(parent.id, part).pipe(
      Effect.map(Option.map(({ id }) => {
        count("held", 1)
        return new Reservation({ id, source: parent.source, amount: part })
      }))
    )
  }

  return Credits.of(traced("Credits", { reserve, spendable, settle, release, carve }, { leaves: ["reserve", "spendable", "settle", "release", "carve"] }))
})

export const layer = Layer.effect(Credits, make)
