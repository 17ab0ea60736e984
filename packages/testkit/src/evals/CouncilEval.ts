/**
 * One evaluation of the council over a set of questions: every question is put to the real
 * council (`Council.run`, each call a `MeteredCall` against in-memory credits) twice, in multi
 * mode and in auto mode, over a `Backend`'s models (simulated or real). The summary compares the
 * council with what the same calls could have bought otherwise: a majority vote of as many
 * answers of the same models (each seat's proposal, then resamples of it), the best single
 * participant, one call of the first one.
 */
import type { ModelTier } from "@huddle/domain/settings/Preferences"
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
  /** How the router retries and falls back (the deployment's, or the same without its waits). */
  readonly routerPolicy: Router.Policy
  /**
   * Simulated answers, which cost nothing: the summary then also takes the baseline with fresh
   * resamples and seat 1's self-consistency curve (40 answers a question).
   */
  readonly simulated: boolean
  /**
   * The `k`-th answer (k ≥ 1) of the participant in `seat` (of `size`) asked the question again,
   * after its proposal (k = 0): a vote for the majority-vote baseline; undefined when the call
   * fails or says nothing. `fresh` (simulated only): drawn afresh, as if the model had no memory
   * of how it answered before.
   */
  readonly sample: (
    question: Question,
    seat: number,
    model: CatalogModel,
    size: number,
    k: number,
    fresh: boolean
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
    Layer.provideMerge(Layer.mergeAll(Router.layer.pipe(Layer.provide(Layer.succeed(Router.RouterPolicy, backend.routerPolicy))), Credits.layer)),
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

/** The option a run answered: the consensus, or (auto mode's single answer) the proposal it returned. */
export const answerOf = (run: Run, question: Question): Letter | undefined => {
  const result = run.result
  if (result === undefined) return undefined
  if (result._tag === "Council") return letterOf(result.report.position, question)
  const given = [...run.log.proposals.values()].find((p) => p.text !== undefined && Protocol.parseStated(p.text)?.text === result.text)
  return given?.text === undefined ? undefined : letterOf(Protocol.parseStated(given.text)?.position, question)
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
    /** Provider attempts per run: the calls and the router's retries of them. */
    readonly attempts: number
    readonly credits: number
  }
  /**
   * A plurality of `calls` answers, the seats in turn: each seat's proposal, then resamples of it
   * (`Backend.sample`). `fresh`: the same with every resample drawn afresh (simulated only).
   */
  readonly majority: { readonly correct: number; readonly calls: number; readonly fresh: number | undefined }
  /** Seat 1 alone: a plurality of its first `k` answers to each question (simulated only). */
  readonly selfConsistency: ReadonlyArray<{ readonly k: number; readonly correct: number }> | undefined
  /**
   * The council's own proposals: how often a plurality of them is right (ties drawn at random),
   * and how often one of them is (the most any chair could do with them).
   */
  readonly proposals: { readonly vote: number; readonly pool: number }
  /** Each seat's proposals: correct answers out of `questions`. */
  readonly singles: ReadonlyArray<{ readonly seat: number; readonly model: string; readonly correct: number }>
  /** Seat 1's proposal as the answer, and what it cost. */
  readonly single: { readonly correct: number; readonly credits: number }
  /**
   * Questions where the consensus was wrong and a participant that first answered right was still
   * in the council at the vote; of them, those with that answer in a dissent. `dropped`: the
   * questions where the consensus was wrong and every participant that first answered right had
   * been dropped (a dropped participant cannot dissent).
   */
  readonly survival: { readonly eligible: number; readonly survived: number; readonly dropped: number }
  readonly auto: { readonly correct: number; readonly failed: number; readonly escalated: number; readonly credits: number }
  /**
   * Credits of auto mode's opening, which it spends on every question: seat 1's proposal and the
   * second opinion (each seat's that was asked, a failed one's replacement included).
   */
  readonly opening: number
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
    // As many answers as the council made calls on average, the seats in turn: each seat's first
    // answer is its proposal in the council, the later ones resamples of the same model.
    const k = Math.max(1, Math.round(calls))
    /** The `j`-th answer of `seat`: its proposal, then resamples. */
    const answer = (outcome: Outcome, seat: number, j: number, fresh: boolean) =>
      j === 0
        ? Effect.succeed(proposalOf(outcome.multi, seat, outcome.question))
        : backend.sample(outcome.question, seat, outcome.seats[seat - 1]!, outcome.seats.length, j, fresh)
    const voteOf = (outcome: Outcome, fresh: boolean) =>
      Effect.gen(function*() {
        const votes: Array<Letter> = []
        for (let i = 0; i < k; i++) {
          const seat = (i % outcome.seats.length) + 1
          const vote = yield* answer(outcome, seat, Math.floor(i / outcome.seats.length), fresh)
          if (vote !== undefined) votes.push(vote)
        }
        const tie = keyed(seed, fresh ? "majority-fresh-tie" : "majority-tie", outcome.question.id)
        return majorityOf(votes, tie.next) === outcome.question.correct
      })
    let majorityCorrect = 0
    let freshCorrect = 0
    for (const outcome of outcomes) {
      if (yield* voteOf(outcome, false)) majorityCorrect++
      if (backend.simulated && (yield* voteOf(outcome, true))) freshCorrect++
    }

    // How much asking seat 1 again helps on its own: its self-consistency curve.
    const ks = [1, 3, 10, 40] as const
    const curve = ks.map((size) => ({ k: size, correct: 0 }))
    if (backend.simulated) {
      for (const outcome of outcomes) {
        const votes: Array<Letter> = []
        for (let j = 0; j < ks[ks.length - 1]!; j++) {
          const vote = yield* answer(outcome, 1, j, false)
          if (vote !== undefined) votes.push(vote)
          const at = ks.indexOf(j + 1 as (typeof ks)[number])
          if (at >= 0 && majorityOf(votes, keyed(seed, "curve-tie", outcome.question.id, j).next) === outcome.question.correct) {
            curve[at]!.correct++
          }
        }
      }
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
    let droppedRight = 0
    let autoCorrect = 0
    let escalated = 0
    for (const { auto, multi, question } of outcomes) {
      if (answerOf(multi, question) === question.correct) councilCorrect++
      if (answerOf(auto, question) === question.correct) autoCorrect++
      if (auto.result?._tag !== "Single") escalated++
      if (multi.result?._tag === "Council") {
        const report = multi.result.report
        const wrong = letterOf(report.position, question) !== question.correct
        const right = report.participants.filter((p) => letterOf(p.initial_position, question) === question.correct)
        if (wrong && right.some((p) => p.vote !== "dropped")) {
          survivalEligible++
          if (report.dissents.some((d) => letterOf(d.claim, question) === question.correct)) survived++
        } else if (wrong && right.length > 0) droppedRight++
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
        attempts: sum((o) => o.multi.log.attempts) / Math.max(1, n),
        credits: sum((o) => o.multi.charged)
      },
      majority: { correct: majorityCorrect, calls: k, fresh: backend.simulated ? freshCorrect : undefined },
      selfConsistency: backend.simulated ? curve : undefined,
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
      survival: { eligible: survivalEligible, survived, dropped: droppedRight },
      auto: {
        correct: autoCorrect,
        failed: outcomes.filter((o) => o.auto.result === undefined).length,
        escalated,
        credits: sum((o) => o.auto.charged)
      },
      opening: sum((o) =>
        (o.auto.log.proposals.get(1)?.charged ?? 0) + [...o.auto.log.positions.values()].reduce((total, p) => total + p.charged, 0)
      )
    } satisfies Summary
  })

/** The domain layer `collect` runs in. */
export const layerFor = (backend: Backend) => domain(backend)

/** The evaluation of `questions` over `backend`: every run, then the summary. */
export const evaluate = (seed: number, backend: Backend, questions: ReadonlyArray<Question>, onProgress?: (done: number) => void) =>
  Effect.flatMap(collect(backend, questions, onProgress), (outcomes) => summarise(seed, backend, outcomes)).pipe(
    Effect.provide(domain(backend))
  )
