/**
 * A council run's state, handed to each of its steps: the run's input and services, its seats
 * with what each answered and spent, and what befell the run (who was dropped and why, which
 * rounds the deadline cut, which chairs were replaced); and the bookkeeping over the seats.
 */
import { Clock, Duration, Effect } from "effect"
import { UpstreamUnavailable } from "../shared/Errors.js"
import { type CatalogModel, Usage } from "../models/Model.js"
import type * as MeteredCall from "../models/MeteredCall.js"
import { type CouncilRound, Dropped, type Vote } from "./ConsensusReport.js"
import type * as Protocol from "./Protocol.js"
import { minSeats } from "./Panel.js"
import type { CouncilEvent, CouncilPlan, RunInput, Settings, Spent } from "./Council.js"
import * as Instruments from "../observability/Instruments.js"
import type * as Metrics from "../observability/Metrics.js"

export interface Seat {
  readonly seat: number
  readonly model: CatalogModel
  alive: boolean
  proposal: Protocol.Stated | undefined
  /** Auto mode: the position it gave as the second opinion (before any proposal of its own). */
  opinion: string | undefined
  /** The proposal as the model wrote it (what it sees as its own earlier turn). */
  proposalText: string
  critique: Protocol.Critique | undefined
  changed: boolean
  vote: Vote
  ballot: Protocol.Ballot | undefined
  input: number
  output: number
  credits: number
}

/** What a seat gave a round: a readable answer, none (even when asked again), or a failure. */
export type Outcome<A> =
  | { readonly _tag: "Answered"; readonly value: A; readonly text: string }
  | { readonly _tag: "Abstained" }
  | { readonly _tag: "Failed"; readonly reason: string }

/** What a run calls on: the council's services and settings. */
export interface RunServices {
  readonly metered: MeteredCall.Service
  readonly metrics: Metrics.Service
  readonly settings: Settings
}

export interface RunContext extends RunServices {
  readonly input: RunInput
  readonly plan: CouncilPlan
  readonly emit: (event: CouncilEvent) => Effect.Effect<unknown>
  /** When the run started, and its deadline from then (`Settings.deadline`). */
  readonly started: number
  readonly deadlineMs: number
  readonly seats: ReadonlyArray<Seat>
  readonly dropped: Array<Dropped>
  /** Why the report is degraded, in the order it happened. */
  readonly degraded: Array<string>
  /** The rounds the deadline cut. */
  readonly cut: Set<CouncilRound>
  /** The chairs that failed, with the reason. */
  readonly replaced: Array<{ seat: number; model: string; reason: string }>
  /** What no prompt of the run may name: the seats' models and providers. */
  readonly names: ReadonlyArray<string>
}

/** A run of `input` starting now, every seat in it and nothing spent. */
export const startRun = (
  services: RunServices,
  input: RunInput,
  emit: (event: CouncilEvent) => Effect.Effect<unknown>
): Effect.Effect<RunContext> =>
  Effect.map(Clock.currentTimeMillis, (started) => {
    const { plan } = input
    return {
      ...services,
      input,
      plan,
      emit,
      started,
      deadlineMs: Duration.toMillis(services.settings.deadline),
      seats: plan.seats.map((model, i): Seat => ({
        seat: i + 1,
        model,
        alive: true,
        proposal: undefined,
        opinion: undefined,
        proposalText: "",
        critique: undefined,
        changed: false,
        vote: "abstain",
        ballot: undefined,
        input: 0,
        output: 0,
        credits: 0
      })),
      dropped: [],
      degraded: [],
      cut: new Set(),
      replaced: [],
      names: plan.seats.flatMap((model) => [model.id, model.upstream_model ?? model.id, model.provider])
    }
  })

export const alive = (run: RunContext): Array<Seat> => run.seats.filter((seat) => seat.alive)

/** Takes `seat` out of the run for the rest of it, with the reason. */
export const drop = (run: RunContext, seat: Seat, round: CouncilRound, reason: string): void => {
  run.metrics.add(Instruments.councilDropped, { round })
  seat.alive = false
  seat.vote = "dropped"
  run.dropped.push(new Dropped({ seat: seat.seat, model: seat.model.id, round, reason }))
}

/** Fails the run when fewer than two seats are left after `round`, naming why each was dropped. */
export const enough = (run: RunContext, round: CouncilRound): Effect.Effect<void, UpstreamUnavailable> =>
  alive(run).length >= minSeats
    ? Effect.void
    : Effect.fail(
      new UpstreamUnavailable({
        message: `The council could not go on after the ${round} round: ${alive(run).length} of ${run.seats.length} participants left (` +
          run.dropped.map((d) => `seat ${d.seat} ${d.model}: ${d.reason}`).join("; ") + ")"
      })
    )

/** What the run's seats spent so far. */
export const spentOf = (seats: ReadonlyArray<Seat>): Spent => ({
  usage: new Usage({
    input_tokens: seats.reduce((sum, seat) => sum + seat.input, 0),
    output_tokens: seats.reduce((sum, seat) => sum + seat.output, 0)
  }),
  charged: seats.reduce((sum, seat) => sum + seat.credits, 0),
  models: [...new Set(seats.filter((seat) => seat.output > 0 || seat.input > 0).map((seat) => seat.model.id))]
})
