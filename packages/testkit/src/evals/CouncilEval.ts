/**
 * One evaluation of the council over a set of questions: every question is put to the real
 * council (`Council.run`, each call a `MeteredCall` against in-memory credits) twice, in multi
 * mode and in auto mode, over a `Backend`'s models (simulated or real). The summary compares the
 * council with what the same calls could have bought otherwise: a majority vote of as many
 * independent answers, the best single participant, one call of the first one.
 */
import type { ModelTier } from "@huddle/domain/accounts/Preferences"
import { Catalog } from "@huddle/domain/models/Catalog"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import * as Credits from "@huddle/domain/credits/Credits"
import * as Council from "@huddle/domain/council/Council"
import * as Protocol from "@huddle/domain/council/Protocol"
import type { CatalogModel } from "@huddle/domain/models/Model"
import * as MeteredCall from "@huddle/domain/models/MeteredCall"
import type { ModelProviders } from "@huddle/domain/models/ModelProviders"
import * as Router from "@huddle/domain/models/Router"
import { Effect, Layer, Stream } from "effect"
import * as InMemoryCreditStore from "../ports/InMemoryCreditStore.js"
import * as InMemoryPorts from "../ports/InMemoryPorts.js"
import * as CallLog from "./CallLog.js"
import { keyed } from "./Prng.js"
import { type Letter, letterOf, letters, messagesOf, type Question } from "./Questions.js"

/** Where the answers come from. */
export interface Backend {
  readonly providers: Layer.Layer<ModelProviders, unknown>
  readonly catalog: Layer.Layer<Catalog, unknown>
  /** The tier whose models sit on the council. */
  readonly tier: ModelTier
  /**
   * The `k`-th extra answer of the participant in `seat` (of `size`), independent of the council's
   * calls: a vote for the majority-vote baseline; undefined when the call fails or says nothing.
   */
  readonly sample: (
    question: Question,
    seat: number,
    model: CatalogModel,
    size: number,
    k: number
  ) => Effect.Effect<Letter | undefined, never, ModelProviders>
}

const user = "usr_eval"
const payer: MeteredCall.Payer = {
  userId: user,
  orgId: null,
  creditFallback: false,
  authority: { via: "api_key", credentialId: "key_eval", actorId: user }
}

/** The domain's council over the backend, credits in memory, every call logged. */
const domain = (backend: Backend) =>
  Council.layer.pipe(
    Layer.provideMerge(MeteredCall.layer),
    Layer.provideMerge(Layer.mergeAll(Router.layer, Credits.layer)),
    Layer.provideMerge(Layer.mergeAll(InMemoryPorts.auditLog, InMemoryCreditStore.layer(), backend.catalog)),
    Layer.provideMerge(Layer.mergeAll(CallLog.layer.pipe(Layer.provide(backend.providers)), InMemoryPorts.ids))
  )

export interface Run {
  readonly result: Council.CouncilResult | undefined
  /** Why the run failed, when it did. */
  readonly error: string | undefined
  /** Credits charged, whether the run concluded or failed. */
  readonly charged: number
  readonly log: CallLog.Log
}

export interface Outcome {
  readonly question: Question
  readonly seats: ReadonlyArray<CatalogModel>
  readonly multi: Run
  readonly auto: Run
}

/** Puts `question` to a council of `models` in `mode`. */
const ask = (question: Question, models: ReadonlyArray<CatalogModel>, mode: "multi" | "auto") =>
  Effect.gen(function*() {
    const council = yield* Council.Council
    const metered = yield* MeteredCall.MeteredCall
    const log = yield* CallLog.CallLog
    const messages = messagesOf(question)
    const plan = yield* council.plan({ models, messages })
    yield* log.reset
    let spent: Council.Spent | undefined
    const ended = yield* Effect.scoped(Effect.gen(function*() {
      const budget = yield* metered.budget(payer, `eval ${question.id} ${mode}`, plan.worstCase)
      return yield* Stream.runCollect(council.run({
        plan,
        payer,
        purpose: `eval ${question.id} ${mode}`,
        budget,
        messages,
        mode,
        tally: (s) => Effect.sync(() => void (spent = s))
      }))
    })).pipe(Effect.either)
    const result = ended._tag === "Right" ? [...ended.right].map(Council.resultOf).find((r) => r !== undefined) : undefined
    return {
      seats: plan.seats,
      run: {
        result,
        error: ended._tag === "Left" ? ended.left.message : undefined,
        charged: result?.charged ?? spent?.charged ?? 0,
        log: yield* log.current
      } satisfies Run
    }
  })

/** Every question, in multi and in auto mode, one run at a time. */
export const collect = (backend: Backend, questions: ReadonlyArray<Question>, onProgress?: (done: number) => void) =>
  Effect.gen(function*() {
    yield* Effect.flatMap(CreditStore, (store) =>
      store.grant({ account: { ownerType: "user", ownerId: user, pool: "personal" }, amount: 1e12, reason: "evaluation", actorId: null }))
    const models = (yield* Catalog).forTier(backend.tier)
    let done = 0
    return yield* Effect.forEach(questions, (question) =>
      Effect.gen(function*() {
        const multi = yield* ask(question, models, "multi")
        const auto = yield* ask(question, models, "auto")
        onProgress?.(++done)
        return { question, seats: multi.seats, multi: multi.run, auto: auto.run } satisfies Outcome
      }))
  })

// ---------------------------------------------------------------------------------------------

/** The option a run answered: the consensus, or (auto mode's single answer) the first proposal. */
export const answerOf = (run: Run, question: Question): Letter | undefined => {
  if (run.result === undefined) return undefined
  if (run.result._tag === "Council") return letterOf(run.result.report.position, question)
  return proposalOf(run, 1, question)
}

/** The option a seat proposed in a run. */
export const proposalOf = (run: Run, seat: number, question: Question): Letter | undefined => {
  const text = run.log.proposals.get(seat)?.text
  return text === undefined ? undefined : letterOf(Protocol.parseStated(text)?.position, question)
}

export interface Summary {
  readonly questions: number
  readonly seats: ReadonlyArray<string>
  readonly council: {
    readonly correct: number
    readonly failed: number
    /** The reason the first failed run gave, to tell a provider's outage from the protocol's rule. */
    readonly firstError: string | undefined
    readonly calls: number
    readonly credits: number
  }
  readonly majority: { readonly correct: number; readonly calls: number }
  /**
   * The council's own proposals: how often a plurality of them is right (ties drawn at random),
   * and how often one of them is (the most any chair could do with them).
   */
  readonly proposals: { readonly vote: number; readonly pool: number }
  /** Each seat's proposals: correct answers out of `questions`. */
  readonly singles: ReadonlyArray<{ readonly seat: number; readonly model: string; readonly correct: number }>
  /** Seat 1's proposal as the answer, and what it cost. */
  readonly single: { readonly correct: number; readonly credits: number }
  /** Questions where the consensus was wrong and some participant first answered right; of them, those with that answer in a dissent. */
  readonly survival: { readonly eligible: number; readonly survived: number }
  readonly auto: { readonly correct: number; readonly failed: number; readonly escalated: number; readonly credits: number }
}

/** A majority of `votes`, ties broken by a seeded draw. */
export const majorityOf = (votes: ReadonlyArray<Letter>, tie: () => number): Letter | undefined => {
  const counts = letters.map((letter) => votes.filter((vote) => vote === letter).length)
  const top = Math.max(...counts)
  if (top === 0) return undefined
  const tied = letters.filter((_, i) => counts[i] === top)
  return tied[Math.floor(tie() * tied.length)]
}

const summarise = (seed: number, backend: Backend, outcomes: ReadonlyArray<Outcome>) =>
  Effect.gen(function*() {
    const n = outcomes.length
    const seats = outcomes[0]?.seats ?? []
    const calls = outcomes.reduce((sum, o) => sum + o.multi.log.calls, 0) / Math.max(1, n)
    // As many independent answers as the council made calls on average, the seats in turn.
    const k = Math.max(1, Math.round(calls))
    let majorityCorrect = 0
    for (const outcome of outcomes) {
      const votes: Array<Letter> = []
      for (let i = 0; i < k; i++) {
        const seat = (i % outcome.seats.length) + 1
        const vote = yield* backend.sample(outcome.question, seat, outcome.seats[seat - 1]!, outcome.seats.length, Math.floor(i / outcome.seats.length))
        if (vote !== undefined) votes.push(vote)
      }
      const tie = keyed(seed, "majority-tie", outcome.question.id)
      if (majorityOf(votes, tie.next) === outcome.question.correct) majorityCorrect++
    }

    let vote = 0
    let pool = 0
    for (const { multi, question, seats: panel } of outcomes) {
      const given = panel.flatMap((_, i) => {
        const letter = proposalOf(multi, i + 1, question)
        return letter === undefined ? [] : [letter]
      })
      if (majorityOf(given, keyed(seed, "proposals-tie", question.id).next) === question.correct) vote++
      if (given.includes(question.correct)) pool++
    }

    let councilCorrect = 0
    let survivalEligible = 0
    let survived = 0
    let autoCorrect = 0
    let escalated = 0
    for (const { auto, multi, question } of outcomes) {
      if (answerOf(multi, question) === question.correct) councilCorrect++
      if (answerOf(auto, question) === question.correct) autoCorrect++
      if (auto.result?._tag !== "Single") escalated++
      if (multi.result?._tag === "Council") {
        const report = multi.result.report
        const wrong = letterOf(report.position, question) !== question.correct
        const someoneRight = report.participants.some((p) => letterOf(p.initial_position, question) === question.correct)
        if (wrong && someoneRight) {
          survivalEligible++
          if (report.dissents.some((d) => letterOf(d.claim, question) === question.correct)) survived++
        }
      }
    }
    const sum = (f: (o: Outcome) => number) => outcomes.reduce((total, o) => total + f(o), 0)
    return {
      questions: n,
      seats: seats.map((model) => model.id),
      council: {
        correct: councilCorrect,
        failed: outcomes.filter((o) => o.multi.result === undefined).length,
        firstError: outcomes.find((o) => o.multi.error !== undefined)?.multi.error,
        calls,
        credits: sum((o) => o.multi.charged)
      },
      majority: { correct: majorityCorrect, calls: k },
      proposals: { vote, pool },
      singles: seats.map((model, i) => ({
        seat: i + 1,
        model: model.id,
        correct: outcomes.filter((o) => proposalOf(o.multi, i + 1, o.question) === o.question.correct).length
      })),
      single: {
        correct: outcomes.filter((o) => proposalOf(o.multi, 1, o.question) === o.question.correct).length,
        credits: sum((o) => o.multi.log.proposals.get(1)?.charged ?? 0)
      },
      survival: { eligible: survivalEligible, survived },
      auto: {
        correct: autoCorrect,
        failed: outcomes.filter((o) => o.auto.result === undefined).length,
        escalated,
        credits: sum((o) => o.auto.charged)
      }
    } satisfies Summary
  })

/** The domain layer `collect` runs in. */
export const layerFor = (backend: Backend) => domain(backend)

/** The evaluation of `questions` over `backend`: every run, then the summary. */
export const evaluate = (seed: number, backend: Backend, questions: ReadonlyArray<Question>, onProgress?: (done: number) => void) =>
  Effect.flatMap(collect(backend, questions, onProgress), (outcomes) => summarise(seed, backend, outcomes)).pipe(
    Effect.provide(domain(backend))
  )
