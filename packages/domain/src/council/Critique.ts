/** Round 2, critique: anonymised and in parallel; each seat sees its own proposal as its own. */
import { Effect } from "effect"
import type { UpstreamUnavailable } from "../shared/Errors.js"
import * as Protocol from "./Protocol.js"
import { roundOf } from "./Round.js"
import { alive, drop, enough, type RunContext } from "./RunContext.js"
import { ask } from "./SeatCall.js"

/** The critique round over the seats still in the run. Fails when fewer than two are left after it. */
export const critique = (run: RunContext): Effect.Effect<void, UpstreamUnavailable> =>
  Effect.gen(function*() {
    const { input, names, plan } = run
    const critics = alive(run)
    yield* roundOf(run, "critique", critics, (seat) => {
      const labels = Protocol.peerLabels(seat.seat, critics.map((other) => other.seat))
      const peers = critics.filter((other) => other !== seat).map((other) => ({
        label: labels.get(other.seat)!,
        text: Protocol.clip(Protocol.anonymise(other.proposalText, names), plan.outputTokens[other.seat - 1]!.proposals)
      }))
      // Its own proposal is anonymised too: no critique prompt names a model, its own turn included.
      const own = Protocol.clip(Protocol.anonymise(seat.proposalText, names), plan.outputTokens[seat.seat - 1]!.proposals)
      return ask(run, seat, "critique", Protocol.critiquePrompt(input.messages, seat.seat, own, peers), Protocol.parseCritique)
    }, (seat, outcome) => {
      if (outcome._tag === "Failed") {
        drop(run, seat, "critique", outcome.reason)
        return "dropped"
      }
      if (outcome._tag === "Abstained") return "abstained"
      seat.critique = outcome.value
      seat.changed = outcome.value.changed ?? !Protocol.samePosition(seat.proposal!.position, outcome.value.position)
      return "answered"
    })
    yield* enough(run, "critique")
  })
