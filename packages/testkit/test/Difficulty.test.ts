/**
 * The simulated questions' difficulty: participants keep their stated accuracy on average, and
 * their chances on one question move together.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Difficulty from "@huddle/testkit/evals/Difficulty"
import { FastCheck as fc } from "effect"

const questions = Array.from({ length: 4000 }, (_, i) => Difficulty.zOf(3, i + 1))

describe("question difficulty", () => {
  it.prop(
    "keeps a participant's accuracy on average over the questions",
    [fc.double({ min: 0.05, max: 0.95, noNaN: true }), fc.double({ min: 0, max: 3, noNaN: true })],
    ([accuracy, spread]) => {
      const mean = questions.reduce((sum, z) => sum + Difficulty.chance(accuracy, spread, z), 0) / questions.length
      expect(Math.abs(mean - accuracy)).toBeLessThan(0.02)
    }
  )

  it("makes a question hard for every participant at once, and leaves chances alone at spread 0", () => {
    const hard = Math.max(...questions)
    const easy = Math.min(...questions)
    for (const accuracy of [0.55, 0.75, 0.85]) {
      expect(Difficulty.chance(accuracy, 1.5, hard)).toBeLessThan(0.25)
      expect(Difficulty.chance(accuracy, 1.5, easy)).toBeGreaterThan(0.95)
      expect(Difficulty.chance(accuracy, 0, hard)).toBe(accuracy)
    }
  })
})
