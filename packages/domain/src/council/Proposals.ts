/**
 * Round 1, proposals: every seat answers independently and in parallel. In auto mode the round
 * opens with one proposal and a second opinion, which conclude the run as a single answer when
 * they agree (see `Council`'s comment).
 */
import { Effect } from "effect"
import type { UpstreamUnavailable } from "../shared/Errors.js"
import * as AutoMode from "./AutoMode.js"
import type { CouncilResult } from "./Council.js"
import * as Protocol from "./Protocol.js"
import { roundOf } from "./Round.js"
import { alive, drop, enough, type Outcome, type RunContext, type Seat, spentOf } from "./RunContext.js"
import { ask } from "./SeatCall.js"

const proposal = (run: RunContext, seat: Seat) =>
  ask(run, seat, "proposals", Protocol.proposalPrompt(run.input.messages, seat.seat, run.seats.length), Protocol.parseStated)

const proposed = (run: RunContext, seat: Seat, outcome: Outcome<Protocol.Stated>) => {
  if (outcome._tag === "Answered") {
    seat.proposal = outcome.value
    seat.proposalText = outcome.text
    return "answered" as const
  }
  drop(run, seat, "proposals", outcome._tag === "Failed" ? outcome.reason : "gave no readable proposal, even when asked again")
  return "dropped" as const
}

const propose = (run: RunContext, members: ReadonlyArray<Seat>) =>
  roundOf(run, "proposals", members, (seat) => proposal(run, seat), (seat, outcome) => proposed(run, seat, outcome))

/**
 * Auto mode's opening, within the proposals round: seat 1's full proposal, which is the answer
 * if it stands, and seat 2's second opinion, its position alone (a call capped at a line); each
 * independent. A failed call says nothing about the question, so a seat that could not give its
 * part is replaced by the next one. The single answer when they agree; otherwise `Escalated`.
 */
const opening = (run: RunContext): Effect.Effect<CouncilResult | undefined> =>
  Effect.gen(function*() {
    const { seats } = run
    let first: Seat | undefined
    let second: Seat | undefined
    let next = 0
    while ((first === undefined || second === undefined) && next < seats.length) {
      const full = first === undefined ? seats[next++] : undefined
      const opinion = second === undefined && next < seats.length ? seats[next++] : undefined
      yield* roundOf(
        run,
        "proposals",
        [full, opinion].filter((seat): seat is Seat => seat !== undefined),
        (seat) =>
          seat === opinion
            ? ask(run, seat, "position", Protocol.positionPrompt(run.input.messages, seat.seat, seats.length), Protocol.parseStated)
            : proposal(run, seat),
        (seat, outcome) => {
          if (seat !== opinion) return proposed(run, seat, outcome)
          if (outcome._tag === "Answered") {
            seat.opinion = outcome.value.position
            return "answered"
          }
          drop(run, seat, "proposals", outcome._tag === "Failed" ? outcome.reason : "gave no readable position, even when asked again")
          return "dropped"
        }
      )
      if (full?.proposal !== undefined) first = full
      if (opinion?.opinion !== undefined) second = opinion
    }
    if (first?.proposal !== undefined && second?.opinion !== undefined && Protocol.samePosition(first.proposal.position, second.opinion)) {
      return {
        _tag: "Single",
        text: first.proposal.text,
        reason: next > 2 ? AutoMode.reasons.agreedAfterFailure : AutoMode.reasons.agreed,
        ...spentOf(seats)
      }
    }
    yield* run.emit({
      _tag: "Escalated",
      reason: first === undefined || second === undefined ? AutoMode.reasons.failed : AutoMode.reasons.disagreed
    })
    return undefined
  })

/**
 * The proposals round, and in auto mode its opening first: the run's single answer when the
 * opening concludes it. Fails when fewer than two seats are left to go on.
 */
export const proposals = (run: RunContext): Effect.Effect<CouncilResult | undefined, UpstreamUnavailable> =>
  Effect.gen(function*() {
    if (run.input.mode === "auto") {
      const single = yield* opening(run)
      if (single !== undefined) return single
      yield* enough(run, "proposals")
      // Every proposal the council weighs is a full and independent one: the second opinion's
      // seat is asked for its own, beside the seats not asked yet.
      const rest = alive(run).filter((seat) => seat.proposal === undefined)
      if (rest.length > 0) yield* propose(run, rest)
    } else {
      yield* propose(run, run.seats)
    }
    yield* enough(run, "proposals")
    return undefined
  })
