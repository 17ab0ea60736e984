/**
 * A metered call answered whole rather than streamed (an embedding): the same reservation as a
 * streamed call's (`reserveQuote`, the worst case at the estimated input with its margin, no
 * output), held while the call runs, then settled once to the usage it reports, or released,
 * charging nothing, when it fails or is interrupted (`MeteredCall.whole`).
 */
import { Effect, Exit } from "effect"
import { type CatalogModel, costOf, Usage } from "./Model.js"
import type { Service as Credits } from "../credits/Credits.js"
import type * as Metrics from "../observability/Metrics.js"
import type { Settled } from "./CallEvent.js"
import { type Payer, reserveQuote, type RunError } from "./CallReservation.js"
import { worstCaseOf } from "./Quote.js"
import { record } from "./MeteredRun.js"

export interface Whole<A, E> {
  readonly payer: Payer
  /** The ledger's reason. */
  readonly purpose: string
  readonly model: CatalogModel
  /** The estimated input tokens: the reservation covers them with the usual margin (`inputMargin`). */
  readonly estimatedInput: number
  /** The call itself, with the usage it is settled to. */
  readonly call: Effect.Effect<{ readonly value: A; readonly usage: Usage }, E>
}

export interface Answered<A> {
  readonly value: A
  readonly settled: Settled
}

/** Reserves the call's worst case, runs it, and settles it exactly once (see the module's comment). */
export const wholeOf = (services: { readonly credits: Credits; readonly metrics: Metrics.Service }) =>
<A, E>(whole: Whole<A, E>): Effect.Effect<Answered<A>, E | RunError> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const { model } = whole
      const worstCase = worstCaseOf([model], whole.estimatedInput, 0)
      const { reservation } = yield* reserveQuote(services.credits, {
        payer: whole.payer,
        purpose: whole.purpose,
        candidates: [model],
        // No output to lower: the whole worst case is held, or the call is refused (402).
        quote: { estimatedInput: whole.estimatedInput, maxOutputTokens: 0, worstCase }
      })
      const exit = yield* Effect.exit(restore(whole.call))
      if (Exit.isFailure(exit)) {
        yield* services.credits.release(reservation)
        return yield* Effect.failCause(exit.cause)
      }
      const { usage, value } = exit.value
      const cost = costOf(model, usage)
      const charged = yield* services.credits.settle(reservation, cost, { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens })
      const settled: Settled = { _tag: "Settled", model, usage, reported: true, consumed: true, charged }
      record(services.metrics, reservation, settled)
      return { value, settled }
    })
  )

/** An embedding's usage: its input tokens, no output. */
export const inputUsage = (inputTokens: number): Usage => new Usage({ input_tokens: inputTokens, output_tokens: 0 })
