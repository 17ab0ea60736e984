/**
 * A council's report: how much it agreed, the consensus, each dissent in the dissenter's own
 * words (set apart from the consensus), every participant's position before and after the
 * critique, who was dropped and why, and whether the run was degraded.
 */
import { credits } from "../../format.js"
import type { Report } from "./wire.js"

const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 0 })

const votes: Record<Report["participants"][number]["vote"], string> = {
  endorse: "Endorsed",
  dissent: "Dissented",
  abstain: "Abstained",
  dropped: "Dropped"
}

export const ConsensusReport = ({ report }: { readonly report: Report }) => {
  const ratified = report.participants.filter((p) => p.vote === "endorse" || p.vote === "dissent").length
  const endorsed = report.participants.filter((p) => p.vote === "endorse").length
  return (
    <section class="report" aria-label="Council report">
      <h4>Council report</h4>
      {report.degraded
        ? (
          <div class="degraded">
            <strong>Degraded run.</strong> {report.degraded_reasons.join("; ")}
          </div>
        )
        : null}
      <p class="agreement">
        <strong>{percent.format(report.agreement_ratio)} agreement</strong>: {endorsed} of {ratified} ratifying participants
        endorsed the consensus ({report.participants.length} of {report.planned_participants} planned took part, {report.rounds} rounds,
        chaired by {report.chair.model}).
      </p>
      <p class="consensus"><span class="label">Consensus:</span> {report.position}</p>
      {report.chair.replaced.length === 0 ? null : (
        <p class="hint">
          Chair replaced: {report.chair.replaced.map((chair) => `${chair.model} (${chair.reason})`).join("; ")}
        </p>
      )}
      {report.dissents.length === 0 ? <p class="hint">No dissent.</p> : (
        <ul class="dissents" aria-label="Dissents">
          {report.dissents.map((dissent) => (
            <li key={dissent.seat} class="dissent">
              <p><span class="label">Dissent from seat {dissent.seat} ({dissent.model}):</span> {dissent.claim}</p>
              <p class="rationale"><span class="label">Why:</span> {dissent.rationale}</p>
            </li>
          ))}
        </ul>
      )}
      {report.dropped.length === 0 ? null : (
        <ul class="dropped" aria-label="Dropped participants">
          {report.dropped.map((dropped) => (
            <li key={dropped.seat}>
              Seat {dropped.seat} ({dropped.model}) dropped in the {dropped.round} round: {dropped.reason}
            </li>
          ))}
        </ul>
      )}
      <details open>
        <summary>Each participant's positions</summary>
        <table class="participants">
          <thead>
            <tr>
              <th scope="col">Seat</th>
              <th scope="col">Initial position</th>
              <th scope="col">Final position</th>
              <th scope="col">Vote</th>
              <th scope="col">Credits</th>
            </tr>
          </thead>
          <tbody>
            {report.participants.map((p) => (
              <tr key={p.seat}>
                <th scope="row" data-label="Seat">{p.seat} · {p.model}</th>
                <td data-label="Initial position">{p.initial_position ?? "None given"}</td>
                <td data-label="Final position">
                  {p.position ?? "None given"}
                  {p.changed ? <span class="hint"> (changed{p.change_reason === null ? "" : `: ${p.change_reason}`})</span> : null}
                </td>
                <td data-label="Vote" class={`vote-${p.vote}`}>{votes[p.vote]}</td>
                <td data-label="Credits">{credits(p.credits)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  )
}
