/** The end of a council that ran its four rounds: its consensus report, assembled from the seats and what befell the run. */
import { Effect } from "effect"
import { Usage } from "../models/Model.js"
import * as Instruments from "../observability/Instruments.js"
import { agreementRatio, Chair, ConsensusReport, CouncilParticipant, Dissent } from "./ConsensusReport.js"
import { type RunContext, spentOf } from "./RunContext.js"
import type { Consensus } from "./Synthesis.js"

/** The report of the run, once ratified; notes why it is degraded (no ratification, seats lost) as it goes. */
const reportOf = (run: RunContext, consensus: Consensus): ConsensusReport => {
  const { degraded, dropped, seats } = run
  const agreed = consensus.stated
  const votes = seats.map((seat) => seat.vote)
  if (!votes.some((vote) => vote === "endorse" || vote === "dissent")) degraded.push("no participant ratified the consensus")
  if (dropped.length > 0) degraded.unshift(`${seats.length - dropped.length} of ${seats.length} participants took part to the end`)
  return new ConsensusReport({
    text: agreed.text,
    position: agreed.position,
    agreement_ratio: agreementRatio(votes),
    participants: seats.map((seat) =>
      new CouncilParticipant({
        seat: seat.seat,
        model: seat.model.id,
        initial_position: seat.proposal?.position ?? null,
        position: seat.critique?.position ?? seat.proposal?.position ?? null,
        changed: seat.changed,
        change_reason: seat.changed ? seat.critique?.reason ?? null : null,
        vote: seat.vote,
        endorsed: seat.vote === "endorse" ? true : seat.vote === "dissent" ? false : null,
        usage: new Usage({ input_tokens: seat.input, output_tokens: seat.output }),
        credits: seat.credits
      })
    ),
    dissents: seats.flatMap((seat) =>
      seat.vote === "dissent" && seat.ballot !== undefined
        ? [
          new Dissent({
            seat: seat.seat,
            model: seat.model.id,
            claim: seat.ballot.claim ?? seat.critique?.position ?? seat.proposal?.position ?? "",
            rationale: seat.ballot.rationale
          })
        ]
        : []
    ),
    dropped,
    rounds: 4,
    chair: new Chair({ seat: consensus.seat.seat, model: consensus.seat.model.id, replaced: run.replaced }),
    degraded: degraded.length > 0,
    degraded_reasons: degraded,
    planned_participants: seats.length
  })
}

/** Concludes the run with its report (counted as a consensus, or a degraded one) and what it spent. */
export const conclude = (run: RunContext, consensus: Consensus): Effect.Effect<unknown> =>
  Effect.suspend(() => {
    const report = reportOf(run, consensus)
    run.metrics.add(Instruments.councilRuns, { outcome: report.degraded ? "degraded" : "consensus" })
    return run.emit({ _tag: "Concluded", result: { _tag: "Council", report, ...spentOf(run.seats) } })
  })
