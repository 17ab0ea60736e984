/**
 * The council evaluation's harness: simulated participants whose answers the real council reads,
 * and the measures taken from its runs.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Backends from "@huddle/testkit/evals/Backends"
import { collect, evaluate, layerFor, proposalOf } from "@huddle/testkit/evals/CouncilEval"
import * as Questions from "@huddle/testkit/evals/Questions"
import { catalogModel, outageFrom, type Participant, type Regime } from "@huddle/testkit/evals/SimulatedPanel"
import { Effect } from "effect"

const seed = 7
const questions = Questions.generate(seed, 6)

const regime = (participants: ReadonlyArray<Participant>, rest: Partial<Regime> = {}): Regime => ({
  name: "test",
  title: "test",
  heterogeneous: true,
  participants,
  correlation: 0,
  conformity: 0,
  outage: 0,
  transient: 0,
  failure: 0,
  difficulty: 0,
  selfConsistency: 0,
  stress: false,
  ...rest
})

const run = (r: Regime) => evaluate(seed, Backends.simulated(seed, r, questions), questions)

describe("the council evaluation", () => {
  it.effect("keeps a right answer held alone as a dissent when the chair follows a wrong majority", () =>
    Effect.gen(function*() {
      // Seat 1 is always right but, as chair, never recognises it; the others share one wrong answer.
      const summary = yield* run(regime([
        { model: "sim-1", accuracy: 1, discernment: 0 },
        { model: "sim-2", accuracy: 0, discernment: 0 },
        { model: "sim-3", accuracy: 0, discernment: 0 }
      ], { correlation: 1 }))

      expect(summary.council.correct).toBe(0)
      expect(summary.proposals).toEqual({ vote: 0, pool: questions.length })
      expect(summary.singles.map((single) => single.correct)).toEqual([questions.length, 0, 0])
      expect(summary.survival).toEqual({ eligible: questions.length, survived: questions.length, dropped: 0 })
      // Ten votes, four of them seat 1's: the shared wrong answer wins every time.
      expect(summary.majority).toEqual({ correct: 0, calls: 10, fresh: 0 })
    }))

  it.effect("a chair that recognises the right answer makes the council right where the majority is wrong", () =>
    Effect.gen(function*() {
      const summary = yield* run(regime([
        { model: "sim-1", accuracy: 1, discernment: 1 },
        { model: "sim-2", accuracy: 0, discernment: 0 },
        { model: "sim-3", accuracy: 0, discernment: 0 }
      ], { correlation: 1 }))

      expect(summary.council.correct).toBe(questions.length)
      // The two wrong members endorse nothing they did not hold: they dissent, with their answer.
      expect(summary.survival).toEqual({ eligible: 0, survived: 0, dropped: 0 })
    }))

  it.effect("a chair that recognises the right answer still finds it when its only holder gave it up in the critique", () =>
    Effect.gen(function*() {
      // Seat 3 is always right and always yields to the wrong majority; the chair reads first positions.
      const summary = yield* run(regime([
        { model: "sim-1", accuracy: 0, discernment: 1 },
        { model: "sim-2", accuracy: 0, discernment: 0 },
        { model: "sim-3", accuracy: 1, discernment: 0 }
      ], { correlation: 1, conformity: 1 }))

      expect(summary.proposals).toEqual({ vote: 0, pool: questions.length })
      expect(summary.council.correct).toBe(questions.length)
    }))

  it.effect("a model that repeats its earlier answers gains nothing from being asked again; one that answers afresh does", () =>
    Effect.gen(function*() {
      const many = Questions.generate(seed, 40)
      const middling = [
        { model: "sim-1", accuracy: 0.5, discernment: 0.6 },
        { model: "sim-2", accuracy: 0.5, discernment: 0.6 },
        { model: "sim-3", accuracy: 0.5, discernment: 0.6 }
      ]
      const curve = (selfConsistency: number) =>
        Effect.map(
          evaluate(seed, Backends.simulated(seed, regime(middling, { selfConsistency }), many), many),
          (summary) => summary.selfConsistency!.map((point) => point.correct)
        )

      const repeating = yield* curve(1)
      expect(new Set(repeating).size).toBe(1)
      const fresh = yield* curve(0)
      expect(fresh[0]).toBe(repeating[0])
      expect(fresh[3]! - fresh[0]!).toBeGreaterThan(many.length / 4)
    }))

  it.effect("auto mode answers alone, for a fraction of a council's cost, when the first two agree", () =>
    Effect.gen(function*() {
      const summary = yield* run(regime([
        { model: "sim-1", accuracy: 1, discernment: 1 },
        { model: "sim-2", accuracy: 1, discernment: 1 },
        { model: "sim-3", accuracy: 0, discernment: 0 }
      ]))

      expect(summary.auto).toMatchObject({ correct: questions.length, escalated: 0, failed: 0 })
      expect(summary.auto.credits).toBeGreaterThan(summary.single.credits)
      expect(summary.auto.credits).toBeLessThan(summary.council.credits * 0.35)
    }))

  it.effect("counts a run whose every call fails as wrong, and charges nothing for it", () =>
    Effect.gen(function*() {
      const summary = yield* run(regime([
        { model: "sim-1", accuracy: 1, discernment: 1 },
        { model: "sim-2", accuracy: 1, discernment: 1 },
        { model: "sim-3", accuracy: 1, discernment: 1 }
      ], { failure: 1 }))

      expect(summary.council).toMatchObject({ correct: 0, failed: questions.length, credits: 0 })
      expect(summary.auto).toMatchObject({ correct: 0, failed: questions.length, credits: 0 })
      expect(summary.majority.correct).toBe(0)
    }))

  it.effect("retries transient failures through the router: the same answers, at the same charge, with more attempts", () =>
    Effect.gen(function*() {
      const panel = [
        { model: "sim-1", accuracy: 0.9, discernment: 1 },
        { model: "sim-2", accuracy: 0.7, discernment: 0.8 },
        { model: "sim-3", accuracy: 0.6, discernment: 0.7 }
      ]
      // Enough attempts that no call is lost to a run of transient failures.
      const patient = { ...Backends.simulatedPolicy, attempts: 20 }
      const steady = yield* evaluate(seed, Backends.simulated(seed, regime(panel), questions, patient), questions)
      const flaky = yield* evaluate(seed, Backends.simulated(seed, regime(panel, { transient: 0.3 }), questions, patient), questions)

      expect(flaky.council.attempts).toBeGreaterThan(flaky.council.calls)
      expect(flaky.council.calls).toBe(steady.council.calls)
      expect(flaky.council).toMatchObject({ correct: steady.council.correct, failed: 0, credits: steady.council.credits })
      expect(flaky.auto).toEqual(steady.auto)
      expect(flaky.majority).toEqual(steady.majority)
    }))

  it.effect("a seat whose model goes down answers nothing from that round on, in the council and in the vote", () => {
    const panel = [
      { model: "sim-1", accuracy: 1, discernment: 1 },
      { model: "sim-2", accuracy: 1, discernment: 1 },
      { model: "sim-3", accuracy: 1, discernment: 1 }
    ]
    const many = Questions.generate(seed, 24)
    const down = regime(panel, { outage: 1 })
    const backend = Backends.simulated(seed, down, many)
    return Effect.gen(function*() {
      const outcomes = yield* collect(backend, many)
      const starts = new Set<number>()
      for (const outcome of outcomes) {
        for (const [i, p] of panel.entries()) {
          const from = outageFrom(seed, down, outcome.question, p.model)!
          starts.add(from)
          // Its proposal is there only if it went down after the proposals.
          expect(proposalOf(outcome.multi, i + 1, outcome.question) !== undefined).toBe(from > 0)
          for (let k = 1; k <= 5; k++) {
            const vote = yield* backend.sample(outcome.question, i + 1, catalogModel(p), panel.length, k, false)
            expect(vote === undefined).toBe(Math.min(k, 3) >= from)
          }
        }
      }
      // Every round is a possible start of an outage.
      expect([...starts].sort()).toEqual([0, 1, 2, 3])
    }).pipe(Effect.provide(layerFor(backend)))
  })

  it.effect("gives the same measures for the same seed", () =>
    Effect.gen(function*() {
      const noisy = regime([
        { model: "sim-1", accuracy: 0.7, discernment: 0.8 },
        { model: "sim-2", accuracy: 0.6, discernment: 0.7 },
        { model: "sim-3", accuracy: 0.5, discernment: 0.6 }
      ], { correlation: 0.5, conformity: 0.5, outage: 0.1, transient: 0.1, failure: 0.1 })

      expect(yield* run(noisy)).toEqual(yield* run(noisy))
    }))

  it("reads the option a position chooses, by letter or by value", () => {
    const question = questions[0]!
    expect(Questions.letterOf("The answer is C.")).toBe("C")
    expect(Questions.letterOf("**Option B** is correct")).toBe("B")
    expect(Questions.letterOf("D) because the carry is right")).toBe("D")
    expect(Questions.letterOf(`It is ${question.values.E}.`, question)).toBe("E")
    expect(Questions.letterOf("The answer is a number")).toBeUndefined()
  })
})
