/** Round 4, ratification: each seat still in the run endorses the consensus or dissents, alone; nobody sees another's vote. */
import type { Effect } from "effect"
import * as Protocol from "./Protocol.js"
import { positionTokens } from "./Pricing.js"
import { roundOf } from "./Round.js"
import { alive, drop, type RunContext } from "./RunContext.js"
import { ask } from "./SeatCall.js"
import type { Consensus } from "./Synthesis.js"

export const ratification = (run: RunContext, consensus: Consensus): Effect.Effect<void> => {
  const { input, names, plan } = run
  const agreed = consensus.stated
  const positionIn = (position: string | null) =>
    position === null ? null : Protocol.clip(Protocol.anonymise(position, names), positionTokens)
  return roundOf(run, "ratification", alive(run), (seat) =>
    ask(
      run,
      seat,
      "ratification",
      // Clipped to what the budget planned for, whatever the models wrote.
      Protocol.ratificationPrompt(
        input.messages,
        seat.seat,
        {
          initial: positionIn(seat.proposal?.position ?? null),
          final: positionIn(seat.critique?.position ?? seat.proposal?.position ?? null)
        },
        {
          position: positionIn(agreed.position)!,
          text: Protocol.clip(Protocol.anonymise(agreed.text, names), plan.outputTokens[consensus.seat.seat - 1]!.synthesis)
        }
      ),
      Protocol.parseBallot
    ), (seat, outcome) => {
    if (outcome._tag === "Failed") {
      drop(run, seat, "ratification", outcome.reason)
      return "dropped"
    }
    if (outcome._tag === "Abstained") {
      seat.vote = "abstain"
      return "abstained"
    }
    seat.ballot = outcome.value
    seat.vote = outcome.value.vote
    return "answered"
  })
}
