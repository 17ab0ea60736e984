/**
 * The credits a metered call holds before any model is called: its own reservation of its
 * quote's worst case (lowered to what the payer can cover, `lowerQuote`), or a part carved from
 * its run's reservation (`Budget`). The metered call is the one place that reserves credits for a
 * model call (decision 0016): `MeteredCall` passes these the `Credits` service it takes.
 */
import { Effect, Option, type Scope } from "effect"
import { InsufficientCredits, type NotFound, type Unauthorized } from "../shared/Errors.js"
import type { CatalogModel } from "./Model.js"
import type { Authority } from "../credits/CreditStore.js"
import type { Reservation, Service as Credits } from "../credits/Credits.js"
import { lowerQuote, type Quote } from "./Quote.js"

/** Who pays for a call, and who acts (checked again as the credits are taken). */
export interface Payer {
  readonly userId: string
  /** The org context; its pool pays only when `creditFallback` allows. */
  readonly orgId: string | null
  readonly creditFallback: boolean
  readonly authority: Authority
}

/**
 * A run's reservation: the worst case of several calls (a council's rounds), held whole before
 * the first of them; each call then takes its own worst case out of it and is settled on its own
 * as it ends. What no call used is given back when the run's scope closes.
 */
export interface Budget {
  readonly reservation: Reservation
}

export type RunError = InsufficientCredits | Unauthorized | NotFound

const reserveFor = (
  credits: Credits,
  payer: Payer,
  purpose: string,
  amount: number,
  lower?: (spendable: number) => number | undefined
) =>
  credits.reserve({
    userId: payer.userId,
    orgId: payer.orgId,
    amount,
    creditFallback: payer.creditFallback,
    purpose,
    authority: payer.authority,
    lower
  })

/**
 * A call's own reservation: its quote's worst case, or, when the payer cannot cover that, the
 * quote lowered to what they can (`lowerQuote`); with the quote it runs under.
 */
export const reserveQuote = (
  credits: Credits,
  call: { readonly payer: Payer; readonly purpose: string; readonly candidates: ReadonlyArray<CatalogModel>; readonly quote: Quote }
): Effect.Effect<{ readonly reservation: Reservation; readonly quote: Quote }, RunError> =>
  Effect.map(
    reserveFor(credits, call.payer, call.purpose, call.quote.worstCase, (spendable) => lowerQuote(call.candidates, call.quote, spendable)?.worstCase),
    (reservation) => ({
      reservation,
      // What the reservation pays for: at least the cap that was lowered to, never more than it covers.
      quote: reservation.amount < call.quote.worstCase ? lowerQuote(call.candidates, call.quote, reservation.amount)! : call.quote
    })
  )

/** A call's part of its run's reservation. A run's budget covers each of its calls by construction; one that does not is refused, not overdrawn. */
export const carve = (credits: Credits, budget: Budget, amount: number): Effect.Effect<Reservation, InsufficientCredits> =>
  Effect.flatMap(
    credits.carve(budget.reservation, amount),
    Option.match({
      onNone: () => Effect.fail(new InsufficientCredits({ message: `The run's reservation cannot cover this call (${amount} credits)` })),
      onSome: Effect.succeed
    })
  )

/** A run's reservation of `worstCase`, in the caller's scope (see `MeteredCall.budget`). */
export const budgetOf = (credits: Credits, payer: Payer, purpose: string, worstCase: number): Effect.Effect<Budget, RunError, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(reserveFor(credits, payer, purpose, worstCase), (reservation) => credits.release(reservation)),
    (reservation): Budget => ({ reservation })
  )
