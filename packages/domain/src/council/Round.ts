/**
 * A council round within its share of the run's deadline: its seats' work in parallel, each
 * seat's outcome reported as it comes, and who has not answered by the round's end cut off.
 */
import { Clock, Duration, Effect } from "effect"
import type { CouncilRound } from "./ConsensusReport.js"
import type { Outcome, RunContext, Seat } from "./RunContext.js"
import * as Traced from "../observability/Traced.js"

/**
 * When each round must be over, as shares of the deadline from the run's start: a round that
 * ends early leaves its time to the next.
 */
const checkpoints: Readonly<Record<CouncilRound, number>> = { proposals: 0.35, critique: 0.65, synthesis: 0.85, ratification: 1 }

/** The time left until `round` must be over. */
export const timeLeft = (run: RunContext, round: CouncilRound): Effect.Effect<Duration.Duration> =>
  Effect.map(Clock.currentTimeMillis, (now) => Duration.millis(Math.max(0, run.started + checkpoints[round] * run.deadlineMs - now)))

/** One seat's work in a round, traced as the participant's. */
export const participant = <A, E>(effect: Effect.Effect<A, E>, round: CouncilRound, seat: Seat): Effect.Effect<A, E> =>
  Traced.span(effect, "Council.participant", { attributes: { "huddle.round": round, "huddle.seat": seat.seat, "huddle.model": seat.model.id } })

/** A round, traced as such. */
export const roundSpan = <A, E>(effect: Effect.Effect<A, E>, round: CouncilRound): Effect.Effect<A, E> =>
  Traced.span(effect, "Council.round", { attributes: { "huddle.round": round } })

/**
 * `work` for each of `members` in parallel, within the round's share of the deadline; each
 * seat's outcome is reported as it comes. A seat still working at the deadline is cut off
 * (its call settled for what it consumed) and its outcome is a failure.
 */
export const roundOf = <A>(
  run: RunContext,
  round: CouncilRound,
  members: ReadonlyArray<Seat>,
  work: (seat: Seat) => Effect.Effect<Outcome<A>>,
  onOutcome: (seat: Seat, outcome: Outcome<A>) => "answered" | "abstained" | "dropped"
): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* run.emit({ _tag: "RoundStarted", round, seats: members.map((seat) => seat.seat) })
    const left = yield* timeLeft(run, round)
    let late = false
    yield* Effect.forEach(members, (seat) =>
      work(seat).pipe(
        (effect) => participant(effect, round, seat),
        Effect.timeoutFail({ duration: left, onTimeout: () => left }),
        Effect.catchAll(() => {
          late = true
          return Effect.succeed<Outcome<A>>({ _tag: "Failed", reason: `did not finish the ${round} round before the run's deadline` })
        }),
        Effect.flatMap((outcome) => {
          const said = onOutcome(seat, outcome)
          return run.emit({
            _tag: "SeatFinished",
            round,
            seat: seat.seat,
            model: seat.model.id,
            outcome: said,
            reason: outcome._tag === "Failed" ? outcome.reason : undefined
          })
        })
      ), { concurrency: "unbounded", discard: true })
    if (late) {
      run.cut.add(round)
      run.degraded.push(`the deadline cut the ${round} round`)
    }
    yield* run.emit({ _tag: "RoundEnded", round, cut: late })
  }).pipe((effect) => roundSpan(effect, round))
