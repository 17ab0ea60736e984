/**
 * The multi-model council (DESIGN §4 "Multi mode"): 2–4 participants answer independently,
 * critique each other anonymously, a chair writes the consensus, and each participant ratifies
 * it alone — endorses it or dissents in its own words. Every model call is one `MeteredCall`
 * carved from the run's budget, which the caller reserved for the whole run's worst case before
 * any call (`plan` says how much); each call is settled as it ends, or, with `held`, left held
 * for the caller to settle once it has recorded the run's answer.
 *
 * ```ts
 * const council = yield* Council
 * const plan = yield* council.plan({ models, messages })                 // seats and worst case
 * const budget = yield* metered.budget(payer, purpose, plan.worstCase)    // in a Scope; 402 here
 * yield* Stream.runForEach(council.run({ plan, payer, purpose, budget, messages }), (event) => …) // ends with `Concluded`
 * ```
 *
 * No hidden failure: a participant whose call fails or times out is dropped with the reason; a
 * failing chair is replaced by the next participant; a malformed structured answer is asked
 * once more, then recorded as an abstention. Fewer than two participants left fails the run
 * (`UpstreamUnavailable`), after every call made was settled. A deadline bounds the whole run:
 * each round must end by its share of it, and who has not answered by then is dropped.
 *
 * In `auto` mode the run opens with one proposal and a second opinion (another seat's position
 * alone, a small call): when they agree, it concludes with the proposal as a single answer
 * (`Concluded` with a `Single` result); otherwise the council goes on, the second opinion's seat
 * asked for its full proposal with the others.
 *
 * This module is the service and its contract; the run's steps are files of their own, each over
 * the run's state (`RunContext`): a seat's call (`SeatCall`), a round within its share of the
 * deadline (`Round`), the rounds (`Proposals`, `Critique`, `Synthesis`, `Ratification`), the
 * report (`Conclusion`), in order in `Run`; the worst case in `Pricing`.
 */
import { Context, Duration, Effect, Layer, type Stream } from "effect"
import type { InsufficientCredits, InvalidRequest, NotFound, Unauthorized, UpstreamUnavailable } from "../shared/Errors.js"
import type { CatalogModel, ChatMessage, Usage } from "../models/Model.js"
import type { HeldCalls } from "../models/HeldCalls.js"
import { type Budget, MeteredCall, type Payer } from "../models/MeteredCall.js"
import { ModelProviders } from "../models/ModelProviders.js"
import type { ConsensusReport, CouncilRound } from "./ConsensusReport.js"
import type * as Protocol from "./Protocol.js"
import { maxSeats, minSeats } from "./Panel.js"
import * as Pricing from "./Pricing.js"
import * as Run from "./Run.js"
import * as Metrics from "../observability/Metrics.js"
import * as Traced from "../observability/Traced.js"

/** How councils run in this deployment. */
export interface Settings {
  /** Seats per council, 2–4. */
  readonly participants: number
  /** The whole run's time budget. */
  readonly deadline: Duration.Duration
  /**
   * The most output tokens asked of each round's calls (each model's own cap applies too);
   * `position`, of auto mode's second opinion, which is one line.
   */
  readonly outputTokens: Readonly<Record<Protocol.PromptRound, number>>
}

export class CouncilSettings extends Context.Reference<CouncilSettings>()("@huddle/domain/CouncilSettings", {
  defaultValue: (): Settings => ({
    participants: 3,
    deadline: Duration.seconds(120),
    outputTokens: { proposals: 1024, position: 48, critique: 768, synthesis: 1536, ratification: 256 }
  })
}) {}

export interface CouncilPlan {
  /** The participants' models by seat (seat `i + 1`); a model may sit twice when the tier has few. */
  readonly seats: ReadonlyArray<CatalogModel>
  /** The estimated tokens of the conversation every prompt carries. */
  readonly estimatedInput: number
  /**
   * The most the whole run can cost: every round, every retry, every chair, and auto mode's
   * second opinions (counted in every plan: a plan does not know the mode it will run in).
   */
  readonly worstCase: number
  /** The cap on each round's output, per seat (the round's cap within the model's own). */
  readonly outputTokens: ReadonlyArray<Readonly<Record<Protocol.PromptRound, number>>>
}

export type CouncilEvent =
  | { readonly _tag: "RoundStarted"; readonly round: CouncilRound; readonly seats: ReadonlyArray<number> }
  | {
    readonly _tag: "SeatFinished"
    readonly round: CouncilRound
    readonly seat: number
    readonly model: string
    readonly outcome: "answered" | "abstained" | "dropped"
    readonly reason?: string | undefined
  }
  | { readonly _tag: "RoundEnded"; readonly round: CouncilRound; readonly cut: boolean }
  /** Auto mode: the opening proposal and second opinion disagreed (or one could not be had), so the council goes on. */
  | { readonly _tag: "Escalated"; readonly reason: string }
  /** Always the last event of a run that did not fail. */
  | { readonly _tag: "Concluded"; readonly result: CouncilResult }

export interface Spent {
  readonly usage: Usage
  readonly charged: number
  /** The models that answered, in seat order, each once. */
  readonly models: ReadonlyArray<string>
}

export type CouncilResult =
  | ({ readonly _tag: "Council"; readonly report: ConsensusReport } & Spent)
  /** Auto mode's answer when a proposal and an independent second opinion agreed: the proposal. */
  | ({ readonly _tag: "Single"; readonly text: string; readonly reason: string } & Spent)

export type CouncilError = UpstreamUnavailable | InsufficientCredits | Unauthorized | NotFound | InvalidRequest

export interface RunInput {
  readonly plan: CouncilPlan
  readonly payer: Payer
  readonly purpose: string
  /** The run's reservation (`MeteredCall.budget` for `plan.worstCase`), held in the caller's scope. */
  readonly budget: Budget
  /** The conversation every participant answers: system instructions, history, the question last. */
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  /** `auto`: open with a proposal and a second opinion, and go on only if they disagree. */
  readonly mode?: "multi" | "auto" | undefined
  /**
   * Told what the run spent once every call is settled (or priced, with `held`), however it ended
   * (concluded, failed, interrupted): what a caller records of a run that has no `Concluded`.
   */
  readonly tally?: ((spent: Spent) => Effect.Effect<void>) | undefined
  /**
   * Where the run's calls are left unsettled (`MeteredCall`'s `settleAfter`), for the caller to
   * settle once it has recorded the answer, or release when it could not (decision 0027). The run
   * counts each call at what settling it will charge.
   */
  readonly held?: HeldCalls | undefined
}

export interface Service {
  /** The seats for `models` (a tier's, under its ceiling) and the worst case of a run over `messages`. */
  readonly plan: (input: {
    readonly models: ReadonlyArray<CatalogModel>
    readonly messages: ReadonlyArray<ChatMessage>
    readonly participants?: number | undefined
    /** The most tokens the consensus may have (a client's `max_tokens`): the chair's synthesis. */
    readonly maxOutputTokens?: number | undefined
  }) => Effect.Effect<CouncilPlan, InvalidRequest>
  /** The worst case of a run of these seats (a stored plan's) over `messages`. */
  readonly priced: (
    seats: ReadonlyArray<CatalogModel>,
    messages: ReadonlyArray<ChatMessage>,
    maxOutputTokens?: number | undefined
  ) => Effect.Effect<CouncilPlan, InvalidRequest>
  /** The run as it happens (see the module's comment); interrupting it cancels every call in flight. */
  readonly run: (input: RunInput) => Stream.Stream<CouncilEvent, CouncilError>
}

export class Council extends Context.Tag("@huddle/domain/Council")<Council, Service>() {}

/** The answer a run ended with (every run that does not fail ends with `Concluded`). */
export const resultOf = (event: CouncilEvent): CouncilResult | undefined => event._tag === "Concluded" ? event.result : undefined

export const make = Effect.gen(function*() {
  const metered = yield* MeteredCall
  const providers = yield* ModelProviders
  // Read once, as the service is built: a deployment sets it in its composition root.
  const settings = yield* CouncilSettings
  const metrics = yield* Metrics.Metrics

  const plan: Service["plan"] = (input) => Pricing.plan(settings, providers, input)
  const priced: Service["priced"] = (seats, messages, maxOutputTokens) => Pricing.priced(settings, seats, messages, maxOutputTokens)
  const run: Service["run"] = (input) => Run.run({ metered, metrics, settings }, input)

  return Council.of(Traced.traced("Council", { plan, priced, run }))
})

export const layer = Layer.effect(Council, make)

/** The council with these settings (the rest default). */
export const layerWith = (settings: Partial<Settings>) =>
  layer.pipe(Layer.provide(Layer.succeed(CouncilSettings, { ...CouncilSettings.defaultValue(), ...settings })))

/** Seat counts a deployment may configure. */
export const seatRange = { min: minSeats, max: maxSeats } as const
