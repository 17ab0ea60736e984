/**
 * The offline model as a council chair reads the synthesis prompt the council really writes: it
 * adopts the position most members hold now, and names the others.
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
