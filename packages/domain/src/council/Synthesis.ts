/**
 * Round 3, synthesis: a chair writes the consensus from every proposal and critique; a chair
 * that fails is replaced by the next participant, within the round's share of the deadline.
 */
import { Effect } from "effect"
import { UpstreamUnavailable } from "../shared/Errors.js"
import * as Protocol from "./Protocol.js"
import { participant, roundSpan, timeLeft } from "./Round.js"
import { alive, drop, enough, type Outcome, type RunContext, type Seat } from "./RunContext.js"
import { ask } from "./SeatCall.js"

/** The consensus and the seat that wrote it. */
export interface Consensus {
  readonly seat: Seat
  readonly stated: Protocol.Stated
}

/** What a chair candidate is given: every answer given, its own labelled as its own. */
const workFor = (run: RunContext, candidate: Seat): ReadonlyArray<Protocol.Revised> => {
  const { names, plan } = run
  // Every answer given is weighed, also that of a member dropped since (a later call failed,
  // a chair before this one): the proposal was independent and already paid for.
  const members = run.seats.filter((seat) => seat.proposal !== undefined)
  const labels = Protocol.peerLabels(candidate.seat, members.map((seat) => seat.seat))
  return members.map((seat) => ({
    label: seat === candidate ? "Your own" : `Participant ${labels.get(seat.seat)!}`,
    first: Protocol.anonymise(seat.proposal!.position, names),
    position: Protocol.anonymise(seat.critique?.position ?? seat.proposal!.position, names),
    answer: Protocol.clip(Protocol.anonymise(seat.proposal!.text, names), plan.outputTokens[seat.seat - 1]!.proposals),
    critique: Protocol.clip(Protocol.anonymise(seat.critique?.critique ?? "(none)", names), plan.outputTokens[seat.seat - 1]!.critique)
  }))
}

/** The round itself: chairs tried in seat order until one writes a readable consensus or the deadline cuts it. */
const chairs = (run: RunContext): Effect.Effect<Consensus | undefined> =>
  Effect.gen(function*() {
    const { cut, emit } = run
    yield* emit({ _tag: "RoundStarted", round: "synthesis", seats: alive(run).map((seat) => seat.seat) })
    let consensus: Consensus | undefined
    for (const candidate of alive(run)) {
      const work = workFor(run, candidate)
      const left = yield* timeLeft(run, "synthesis")
      const outcome = yield* ask(run, candidate, "synthesis", Protocol.synthesisPrompt(run.input.messages, work), Protocol.parseStated).pipe(
        (effect) => participant(effect, "synthesis", candidate),
        Effect.timeoutFail({ duration: left, onTimeout: () => left }),
        Effect.catchAll(() => {
          cut.add("synthesis")
          return Effect.succeed<Outcome<Protocol.Stated>>({ _tag: "Failed", reason: "did not finish the synthesis before the run's deadline" })
        })
      )
      if (outcome._tag === "Answered") {
        consensus = { seat: candidate, stated: outcome.value }
        yield* emit({ _tag: "SeatFinished", round: "synthesis", seat: candidate.seat, model: candidate.model.id, outcome: "answered" })
        break
      }
      const reason = outcome._tag === "Failed" ? outcome.reason : "wrote no readable consensus, even when asked again"
      run.replaced.push({ seat: candidate.seat, model: candidate.model.id, reason })
      if (outcome._tag === "Failed") drop(run, candidate, "synthesis", reason)
      yield* emit({
        _tag: "SeatFinished",
        round: "synthesis",
        seat: candidate.seat,
        model: candidate.model.id,
        outcome: outcome._tag === "Failed" ? "dropped" : "abstained",
        reason
      })
      if (cut.has("synthesis")) break
    }
    if (cut.has("synthesis")) run.degraded.push("the deadline cut the synthesis round")
    yield* emit({ _tag: "RoundEnded", round: "synthesis", cut: cut.has("synthesis") })
    return consensus
  }).pipe((effect) => roundSpan(effect, "synthesis"))

/**
 * The synthesis round: the consensus, or the run fails when no chair could write one, or when
 * fewer than two seats are left after it.
 */
export const synthesis = (run: RunContext): Effect.Effect<Consensus, UpstreamUnavailable> =>
  Effect.gen(function*() {
    const consensus = yield* chairs(run)
    const { replaced } = run
    if (consensus === undefined) {
      return yield* new UpstreamUnavailable({
        message: `No council participant could write the consensus (${replaced.map((r) => `seat ${r.seat} ${r.model}: ${r.reason}`).join("; ")})`
      })
    }
    if (replaced.length > 0) run.degraded.push(`the chair was replaced ${replaced.length === 1 ? "once" : `${replaced.length} times`}`)
    yield* enough(run, "synthesis")
    return consensus
  })
