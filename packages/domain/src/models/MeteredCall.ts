/**
 * The one metered model call: every model call that costs credits goes through here, whoever
 * asks for it (chat completions, the huddle's pipeline, the council's rounds, grounding's deep
 * inspection). No other module reserves or settles credits for a model call.
 *
 * ```ts
 * const metered = yield* MeteredCall
 * const candidates = yield* metered.candidates({ _tag: "Tier", tier: "economy" }, settings)
 * const quote = yield* metered.quote(candidates, messages, { maxOutputTokens })
 * const call = yield* metered.run({ payer, purpose, candidates, quote, messages })   // in a Scope
 * yield* Stream.runForEach(call.events, (event) => …)                               // ends with `Settled`
 * ```
 *
 * Money: `run` reserves `quote.worstCase` before any model is called, in the caller's scope.
 * The events end with `Settled` once the reservation is settled to the provider's reported usage.
 * When the stream fails or is interrupted instead, `settle` (or, at the latest, closing the scope)
 * charges what was consumed — the provider's counts, else an estimate from the output — or
 * releases the reservation when nothing was. A reservation is settled exactly once.
 *
 * A caller that records the answer somewhere that can fail (the huddle's pipeline, which writes
 * the completed intent) asks for `settleAfter`: its closing `Settled` then says what will be
 * charged, nothing is charged yet, and the caller settles once the answer is recorded, or
 * `release`s when it could not be (the client is told the service is unavailable, and is not
 * charged for an answer it never got).
 *
 * A call whose payer cannot cover `quote.worstCase` but can cover a useful answer (at least
 * `quote.floorOutputTokens`) is not refused: its output cap is lowered to the most the payer's
 * spendable credits pay for (`lowerQuote`), `Metered.quote` is the lowered quote, its events
 * start with `Lowered` and its `Settled` says so. Below the floor: `InsufficientCredits`, as before.
 *
 * This module is the service and its entry point; its parts are files of their own, re-exported
 * here: `Target` (which models), `Quote` (the worst case), `CallReservation` (the credits held),
 * `CallProgress` (what a running call consumed), `CallEvent` (what it tells), `MeteredRun`
 * (the run of one call) and `WholeCall` (a call answered whole, not streamed: an embedding). Only this module takes the `Credits` service, and hands it to its parts.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import type { InvalidRequest, NotFound, PolicyViolation } from "../shared/Errors.js"
import type { ModelTier } from "../settings/Preferences.js"
import type { CallOptions, CatalogModel, ChatMessage } from "./Model.js"
import { Catalog } from "./Catalog.js"
import { Credits } from "../credits/Credits.js"
import { ModelProviders } from "./ModelProviders.js"
import { Router } from "./Router.js"
import * as Metrics from "../observability/Metrics.js"
import { traced } from "../observability/Traced.js"
import { candidatesOf, fittingOf, type Target } from "./Target.js"
import { type Quote, quoteOf } from "./Quote.js"
import { type Budget, budgetOf, type Payer, type RunError } from "./CallReservation.js"
import { type Call, type Metered, runOf } from "./MeteredRun.js"
import { type Answered, type Whole, wholeOf } from "./WholeCall.js"

// The metered call's parts, each in its file, are this module's too: callers import them from here.
export { isTier, modelNotFound, type Target, targetOf, tiers } from "./Target.js"
export { estimateInput, floorOf, inputMargin, lowerQuote, minimumAnswerTokens, type Quote, worstCaseOf } from "./Quote.js"
export { type Answering, type CallEvent, isOutput, type Lowered, offlineFallbackOf, type Settled } from "./CallEvent.js"
export { type Budget, type Payer, type RunError } from "./CallReservation.js"
export { consumedOf } from "./CallProgress.js"
export { type Call, type Metered } from "./MeteredRun.js"
export { type Answered, inputUsage, type Whole } from "./WholeCall.js"

export interface Service {
  /**
   * The models to try, in order, for `target` under `ceiling`, an enforced policy's tier ceiling
   * if there is one: a tier above it is served at its level, a named model or a stored plan
   * above it is refused. An unknown model is `NotFound`, whoever names it.
   */
  readonly candidates: (
    target: Target,
    ceiling: ModelTier | undefined
  ) => Effect.Effect<ReadonlyArray<CatalogModel>, NotFound | PolicyViolation>
  /**
   * The candidates whose provider can honour `options` (`ProviderSupport`), in order: a model
   * that would drop or misread a parameter is not tried. Refused, naming the parameter the first
   * candidate cannot take, when none can; before any reservation, so nothing is charged.
   */
  readonly fitting: (
    candidates: ReadonlyArray<CatalogModel>,
    options: CallOptions | undefined
  ) => Effect.Effect<ReadonlyArray<CatalogModel>, InvalidRequest>
  /** The worst case of sending `messages` to `candidates`; refused when they cannot fit a context window. */
  readonly quote: (
    candidates: ReadonlyArray<CatalogModel>,
    messages: ReadonlyArray<ChatMessage>,
    limits?: { readonly maxOutputTokens?: number | undefined; readonly options?: CallOptions | undefined }
  ) => Effect.Effect<Quote, InvalidRequest>
  /** Reserves the quote's worst case for the payer and starts the call (see the module's comment). */
  readonly run: (call: Call) => Effect.Effect<Metered, RunError, Scope.Scope>
  /**
   * Reserves `worstCase` for a run of several calls, in the caller's scope (402 before any call
   * when it cannot be covered); what is left when the scope closes is released.
   */
  readonly budget: (payer: Payer, purpose: string, worstCase: number) => Effect.Effect<Budget, RunError, Scope.Scope>
  /**
   * A call answered whole (an embedding): its worst case at the estimated input reserved (402
   * before the call), then settled once to the usage it reports, or released when it fails.
   */
  readonly whole: <A, E>(whole: Whole<A, E>) => Effect.Effect<Answered<A>, E | RunError>
}

export class MeteredCall extends Context.Tag("@huddle/domain/MeteredCall")<MeteredCall, Service>() {}

export const make = Effect.gen(function*() {
  const catalog = yield* Catalog
  const router = yield* Router
  const credits = yield* Credits
  const providers = yield* ModelProviders
  const metrics = yield* Metrics.Metrics

  const candidates: Service["candidates"] = (target, ceiling) => candidatesOf(catalog, target, ceiling)
  const fitting: Service["fitting"] = (models, options) => fittingOf(providers, models, options)
  const run: Service["run"] = (call) => runOf({ router, credits, metrics }, call)
  const budget: Service["budget"] = (payer, purpose, worstCase) => budgetOf(credits, payer, purpose, worstCase)
  const whole: Service["whole"] = (call) => wholeOf({ credits, metrics })(call).pipe(Effect.withSpan("MeteredCall.whole"))

  // The computations (candidates, fitting, quote) are not worth a span each; the calls are.
  return MeteredCall.of({ candidates, fitting, quote: quoteOf, whole, ...traced("MeteredCall", { run, budget }) })
})

export const layer = Layer.effect(MeteredCall, make)
