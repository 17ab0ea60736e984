/**
 * The run of one metered call (`MeteredCall.run`): its reservation held in the caller's scope,
 * the router's answer as the call's events, and the settling of the reservation, exactly once,
 * to what the call consumed (see `MeteredCall`'s comment).
 */
import { Chunk, Effect, Option, Scope, Stream } from "effect"
import { UpstreamUnavailable } from "../shared/Errors.js"
import { type CallOptions, type CatalogModel, type ChatMessage, promptTokensOf } from "./Model.js"
import { chargeOf, type Reservation, type Service as Credits } from "../credits/Credits.js"
import type { Service as Router } from "./Router.js"
import type { Opened, Pull } from "../shared/Streams.js"
import * as Instruments from "../observability/Instruments.js"
import type * as Metrics from "../observability/Metrics.js"
import type { Quote } from "./Quote.js"
import type { CallEvent, Lowered, Settled } from "./CallEvent.js"
import { type Budget, carve, type Payer, reserveQuote, type RunError } from "./CallReservation.js"
import { eventsOf, type Progress, pricedOf, progressOf } from "./CallProgress.js"

export interface Call {
  readonly payer: Payer
  /**
   * The closing `Settled` prices the call without settling it: the caller then runs `settle`
   * (or `release`); closing the scope settles as usual when it did neither.
   */
  readonly settleAfter?: boolean | undefined
  /** Recorded with the reservation (the ledger's reason). */
  readonly purpose: string
  readonly candidates: ReadonlyArray<CatalogModel>
  readonly quote: Quote
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  readonly options?: CallOptions | undefined
  /** The run this call belongs to: its worst case is carved from the run's reservation, not reserved anew. */
  readonly budget?: Budget | undefined
}

export interface Metered {
  /** The model tried first. */
  readonly model: CatalogModel
  /** The quote the call runs under: the one given, or that one lowered (`loweredFrom` set). */
  readonly quote: Quote
  readonly events: Stream.Stream<CallEvent, UpstreamUnavailable>
  /** The same events as a pull, opened in the caller's scope: for a consumer that runs it itself (`forEachPull`). */
  readonly open: Opened<CallEvent, UpstreamUnavailable>
  /**
   * Settles now for what was consumed, if that has not happened yet (the stream's end does it on
   * success, unless `settleAfter`; closing the scope on failure or interruption); the same
   * `Settled` every time.
   */
  readonly settle: Effect.Effect<Settled>
  /**
   * Releases the reservation, charging nothing, if it is not settled yet: for an answer that
   * could not be delivered after all (see `settleAfter`). The same `Settled` as `settle` after it.
   */
  readonly release: Effect.Effect<Settled>
  /**
   * What settling now would charge, without settling (the call's `Settled` once it is settled or
   * released): how a caller that settles later (`settleAfter`) counts a call that did not end
   * with its priced `Settled` (failed, cut off).
   */
  readonly price: Effect.Effect<Settled>
}

/** What a metered call runs on: `MeteredCall`'s own services, the `Credits` it takes among them. */
export interface RunServices {
  readonly router: Router
  readonly credits: Credits
  readonly metrics: Metrics.Service
}

/** What a settled call paid for, by model, tier and the source that paid. */
export const record = (metrics: Metrics.Service, reservation: Reservation, settled: Settled) => {
  const { id: model, tier } = settled.model
  metrics.add(Instruments.tokens, { model, tier, direction: "input" }, promptTokensOf(settled.usage))
  metrics.add(Instruments.tokens, { model, tier, direction: "output" }, settled.usage.output_tokens)
  metrics.add(Instruments.creditsCharged, { model, tier, source: reservation.source }, settled.charged)
}

/**
 * Once: settled at the end of the stream, by the caller, or (failure, interruption) as the scope
 * closes; or released by the caller instead (`charge` false: nothing is charged).
 */
const closeWith = (
  services: RunServices,
  progress: Progress,
  estimatedInput: number,
  reservation: Reservation,
  charge: boolean
): Effect.Effect<Settled> =>
  Effect.uninterruptible(Effect.suspend(() => {
    if (progress.settled !== undefined) return Effect.succeed(progress.settled)
    const { cost, settled } = pricedOf(progress, estimatedInput)
    progress.settled = settled
    return charge && settled.consumed
      ? Effect.map(
        services.credits.settle(reservation, cost, { inputTokens: promptTokensOf(settled.usage), outputTokens: settled.usage.output_tokens }),
        (charged) => {
          progress.settled = { ...settled, charged }
          record(services.metrics, reservation, progress.settled)
          return progress.settled
        }
      )
      : Effect.as(services.credits.release(reservation), settled)
  }))

/** Reserves the quote's worst case (or carves it from the call's budget) and starts the call. */
export const runOf = (services: RunServices, call: Call): Effect.Effect<Metered, RunError, Scope.Scope> =>
  Effect.gen(function*() {
    const primary = call.candidates[0]!
    const progress = progressOf(primary)
    const estimatedInput = call.quote.estimatedInput

    // Held and its settling added to the scope as one step. On the scope itself rather than
    // with `Effect.acquireRelease`, which restores the fiber's references around the release
    // (two diffs of a request's whole context): a stream that ends settles in its last pull,
    // and the scope's settling then finds it done.
    const scope = yield* Effect.scope
    const { quote, reservation } = yield* Effect.uninterruptible(Effect.tap(
      call.budget === undefined
        ? reserveQuote(services.credits, call)
        : Effect.map(carve(services.credits, call.budget, call.quote.worstCase), (reservation) => ({ reservation, quote: call.quote })),
      ({ reservation }) => Scope.addFinalizer(scope, closeWith(services, progress, estimatedInput, reservation, true))
    ))
    const lowered: Lowered | undefined = quote.loweredFrom === undefined
      ? undefined
      : { _tag: "Lowered", from: quote.loweredFrom, to: quote.maxOutputTokens }
    progress.lowered = lowered
    const settle = closeWith(services, progress, estimatedInput, reservation, true)
    /** What settling will charge, nothing charged yet (the closing event of `settleAfter`). */
    const price = Effect.sync((): Settled => {
      if (progress.settled !== undefined) return progress.settled
      const { cost, settled } = pricedOf(progress, estimatedInput)
      return settled.consumed ? { ...settled, charged: chargeOf(reservation, cost) } : settled
    })
    const end = call.settleAfter === true ? price : settle

    // One pull over the router's: `Lowered` first when it happened, the answer, then `Settled`.
    const open = Effect.map(
      services.router.open(call.candidates, {
        messages: call.messages,
        temperature: call.temperature,
        maxOutputTokens: quote.maxOutputTokens,
        options: call.options
      }),
      (answer): Pull<CallEvent, UpstreamUnavailable> => {
        let head: CallEvent | undefined = lowered
        let ended = false
        return Effect.suspend(() => {
          if (head !== undefined) {
            const first = head
            head = undefined
            return Effect.succeed(Chunk.of(first))
          }
          if (ended) return Effect.fail(Option.none())
          return Effect.matchEffect(answer, {
            onSuccess: (chunks) => Effect.succeed(eventsOf(progress, chunks)),
            onFailure: (failure) => {
              if (Option.isSome(failure)) {
                // Settled as it fails rather than as the scope closes (the same settling, once),
                // so that the failure says what the output produced before it cost. A caller
                // that settles later (`settleAfter`) decides that itself.
                if (call.settleAfter === true) return Effect.fail(failure)
                return Effect.flatMap(settle, (settled) =>
                  Effect.fail(Option.some(new UpstreamUnavailable({ message: failure.value.message, charged: settled.charged }))))
              }
              ended = true
              return Effect.map(end, (settled) => {
                const finish = progress.finish
                progress.finish = undefined
                return finish === undefined ? Chunk.of<CallEvent>(settled) : Chunk.make<[CallEvent, CallEvent]>(finish, settled)
              })
            }
          })
        })
      }
    )
    const release = closeWith(services, progress, estimatedInput, reservation, false)
    return { model: primary, quote, events: Stream.fromPull(open), open, settle, release, price } satisfies Metered
  })
