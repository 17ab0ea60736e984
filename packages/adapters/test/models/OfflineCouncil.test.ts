/**
 * The offline model as a council chair reads the synthesis prompt the council really writes: it
 * adopts the position most members hold now, and names the others. Asked for its position alone
 * (auto mode's second opinion), a seat states in one line the position it would propose.
 */
import { describe, expect, it } from "@effect/vitest"
import * as OfflineCouncil from "@huddle/adapters/models/OfflineCouncil"
import * as Protocol from "@huddle/domain/council/Protocol"

const question = [{ role: "user" as const, content: "Should we use PostgreSQL or MySQL for our analytics workload?" }]
const member = (label: string, first: string, now: string): Protocol.Revised => ({
  label,
  first,
  position: now,
  answer: "Reasons.",
  critique: "Fine."
})

describe("the offline chair", () => {
  it("adopts the position most members hold after the critique, not their first positions", () => {
    const prompt = Protocol.synthesisPrompt(question, [
      member("Your own", "PostgreSQL is the better choice.", "PostgreSQL is the better choice."),
      member("Participant A", "PostgreSQL is the better choice.", "MySQL is the better choice."),
      member("Participant B", "MySQL is the better choice.", "MySQL is the better choice.")
    ])
    const text = OfflineCouncil.answerFor(prompt, "offline-1", () => "plain")!

    expect(Protocol.parseStated(text)?.position).toBe("MySQL is the better choice.")
    expect(text).toContain("(2 of 3)")
    expect(text).toContain("\"PostgreSQL is the better choice.\" (1 of 3)")
  })
})

describe("the offline second opinion", () => {
  const open = [{ role: "user" as const, content: "Explain how a B-tree index speeds up a range query over a large table of orders." }]

  it("is one line: the position the seat would propose, within the second opinion's cap", () => {
    for (const asked of [question, open]) {
      for (const seat of [1, 2, 3]) {
        const opinion = OfflineCouncil.answerFor(Protocol.positionPrompt(asked, seat, 3), "offline-1", () => "plain")!
        const proposal = OfflineCouncil.answerFor(Protocol.proposalPrompt(asked, seat, 3), "offline-1", () => "plain")!

        expect(opinion.split("\n")).toHaveLength(1)
        expect(Protocol.parseStated(opinion)?.position).toBe(Protocol.parseStated(proposal)?.position)
        expect(opinion.length).toBeLessThanOrEqual(48 * 4)
      }
    }
    // Where the question names options, the first two seats differ, as their proposals do.
    const first = OfflineCouncil.answerFor(Protocol.positionPrompt(question, 1, 3), "offline-1", () => "plain")!
    const second = OfflineCouncil.answerFor(Protocol.positionPrompt(question, 2, 3), "offline-1", () => "plain")!
    expect([first, second]).toEqual(["POSITION: PostgreSQL is the better choice.", "POSITION: MySQL is the better choice."])
  })
})
