/**
 * Simulated council participants: a `ModelProviders` layer whose models answer the evaluation's
 * questions (`Questions`) with a set accuracy, in the council's formats, so that the real council
 * (prompts, parsers, rounds, credits) runs over them without a network.
 *
 * Each call reads its round from the prompt (`Protocol.roundOf`) and its question from the
 * conversation (`Question #17`), and answers as one participant of a regime:
 *
 * - proposals: its belief, correct with the participant's chance on the question (`Difficulty`:
 *   its `accuracy` on average, less on hard questions, more on easy ones); a wrong belief is the
 *   question's popular wrong answer with probability `correlation`, else any wrong answer;
 * - position (auto mode's second opinion, asked at the proposals' time): the same belief, its
 *   `POSITION:` line alone;
 * - critique: it reads the peers' `POSITION:` lines; when most of the council (itself counted)
 *   holds another answer, it switches to it with probability `conformity`;
 * - synthesis (the chair): with its chance of `discernment` on the question, it adopts the correct
 *   answer when some member holds it or first held it (it reads first positions and positions
 *   now), else the majority of the positions now (a tie: its own);
 * - ratification (blind): it endorses iff its belief equals the consensus, else dissents claiming
 *   its belief. A participant that switched in the critique round holds its first belief again
 *   with probability 1 − conformity / 2 (alone, nobody to conform to).
 *
 * Failures, all before any output (docs/evals.md says why these):
 *
 * - outage: with probability `outage`, a seat's model goes down for the rest of the run from a
 *   round drawn at random (the proposals … the ratification); its calls from then on fail for good;
 * - transient: each attempt fails with probability `transient`, retryably (a 429, a 503), and the
 *   router retries it as it would a provider's;
 * - independent (the stress model): any call fails for good with probability `failure`.
 *
 * Every draw is keyed by question, model and round (`Prng.keyed`), so a participant answers a
 * question the same way in a multi run and an auto run, and goes down at the same point: the two
 * modes are compared on the same answers. Usage is reported as a provider would: the prompt's and
 * the answer's tokens.
 */
import { Catalog } from "@huddle/domain/models/Catalog"
import { CatalogModel, type ChatMessage, estimateTokens, type ModelChunk, ModelCatalog, type ModelRequest, Usage } from "@huddle/domain/models/Model"
import { estimateInput } from "@huddle/domain/models/MeteredCall"
import { ModelProviders, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import { rounds } from "@huddle/domain/council/ConsensusReport"
import * as Protocol from "@huddle/domain/council/Protocol"
import { Layer, Option, Stream } from "effect"
import * as Difficulty from "./Difficulty.js"
import { keyed, type Rng } from "./Prng.js"
import { idOf, type Letter, letterOf, letters, type Question, statement, wrongOf } from "./Questions.js"

export const providerName = "simulated"

export interface Participant {
  /** Its catalog model id; one a seat (a model sitting twice would answer twice the same). */
  readonly model: string
  /** How often its own answer is correct. */
  readonly accuracy: number
  /** As chair: how often it recognises the correct answer among the members' positions. */
  readonly discernment: number
}

export interface Regime {
  readonly name: string
  readonly title: string
  /** A panel of models of different skill (what the council ≥ majority-vote target is about). */
  readonly heterogeneous: boolean
  readonly participants: ReadonlyArray<Participant>
  /** How often a wrong answer is the question's popular wrong answer rather than any wrong one. */
  readonly correlation: number
  /** How often a participant in the minority switches to the majority after reading the others. */
  readonly conformity: number
  /**
   * How often a seat's model goes down for the rest of a run (an outage of its provider, or a model
   * that stops answering), from a round drawn at random; its calls from then on fail for good.
   */
  readonly outage: number
  /** How often one attempt of a call fails transiently (a 429, a 503): the router retries it. */
  readonly transient: number
  /** How often any call fails for good, each independently of the others (a stress model). */
  readonly failure: number
  /**
   * The spread (standard deviation, logit scale) of the questions' difficulty (`Difficulty`):
   * 0, every question alike; larger, errors gather on the same hard questions.
   */
  readonly difficulty: number
  /**
   * How often a model asked the same question again repeats one of its earlier answers to it
   * (else it answers afresh): the majority-vote baseline's resamples.
   */
  readonly selfConsistency: number
  /**
   * A stress regime: a setting outside what a team would choose for a council (a weak panel, a
   * very conformist one), shown for information; the targets are judged on the others.
   */
  readonly stress: boolean
}

/** A participant whose chair's discernment is its accuracy plus 0.1 (docs/evals.md says why). */
export const participant = (model: string, accuracy: number): Participant => ({
  model,
  accuracy,
  discernment: Math.min(1, Math.round((accuracy + 0.1) * 100) / 100)
})

/** Prices of a mid-range model (credits per million tokens, as the default catalog's Anthropic standard tier). */
export const pricing = { input: 3000, output: 15_000 } as const

export const catalogModel = (p: Participant): CatalogModel =>
  new CatalogModel({ id: p.model, tier: "standard", provider: providerName, pricing, context_window: 200_000, max_output_tokens: 4096 })

const draw = (seed: number, ...names: ReadonlyArray<string | number>): number => keyed(seed, ...names).next()

/** The chance of a participant of average `rate` (its accuracy, or its discernment) on `question`. */
export const chanceOn = (seed: number, regime: Regime, question: Question, rate: number): number =>
  Difficulty.chance(rate, regime.difficulty, Difficulty.zOf(seed, question.id))

/**
 * A fresh answer of `p` to `question`, drawn under `names`: the council's proposals use
 * `["initial"]`, the majority-vote baseline's fresh resamples `["sample", k]`. Fresh draws are
 * independent given the question, with the same chance and correlation.
 */
export const answerOf = (seed: number, regime: Regime, question: Question, p: Participant, ...names: ReadonlyArray<string | number>): Letter => {
  const rng = keyed(seed, ...names, question.id, p.model)
  if (rng.next() < chanceOn(seed, regime, question, p.accuracy)) return question.correct
  if (rng.next() < regime.correlation) return question.popularWrong
  return rng.pick(wrongOf(question))
}

/**
 * What `p` answers the `k`-th time it is asked `question`: 0 is its proposal (the council's); each
 * later one repeats one of its earlier answers, chosen at random, with probability
 * `selfConsistency`, else it is a fresh answer. With `selfConsistency` 0, every resample is fresh.
 */
export const resampleOf = (
  seed: number,
  regime: Regime,
  question: Question,
  p: Participant,
  k: number,
  selfConsistency: number
): Letter => {
  const answers: Array<Letter> = [answerOf(seed, regime, question, p, "initial")]
  for (let i = 1; i <= k; i++) {
    const rng = keyed(seed, "resample", question.id, p.model, i)
    answers.push(rng.next() < selfConsistency ? answers[rng.int(i)]! : answerOf(seed, regime, question, p, "sample", i))
  }
  return answers[k]!
}

/** Whether a call under these names fails for good, independently of every other call (the stress model). */
export const fails = (seed: number, regime: Regime, ...names: ReadonlyArray<string | number>): boolean =>
  regime.failure > 0 && draw(seed, "fail", ...names) < regime.failure

/**
 * The round (its index in `rounds`: 0 the proposals … 3 the ratification) from which `model` is down
 * for the rest of `question`'s run, if it goes down at all.
 */
export const outageFrom = (seed: number, regime: Regime, question: Question, model: string): number | undefined => {
  if (regime.outage <= 0) return undefined
  const rng = keyed(seed, "outage", question.id, model)
  return rng.next() < regime.outage ? rng.int(rounds.length) : undefined
}

/** The index of the last round, the ratification. */
export const lastRound = rounds.length - 1

/** Whether one attempt of a call under these names fails transiently. */
export const blips = (seed: number, regime: Regime, ...names: ReadonlyArray<string | number>): boolean =>
  regime.transient > 0 && draw(seed, "transient", ...names) < regime.transient

// ---------------------------------------------------------------------------------------------
// What the participants write: the labelled lines the protocol asks for, and prose of a plausible
// length around them (prompts of later rounds carry it, so it is what a council costs).

const reasoning = [
  "I multiplied the two factors first, checking the partial products digit by digit.",
  "Then I subtracted the third number, borrowing where the digits required it.",
  "The options differ by small amounts, which suggests common slips: a sign, a carry, a dropped digit.",
  "Estimating the result by rounding both factors gives a figure close to the option I chose.",
  "I checked the last digit separately: the product's last digit minus the subtrahend's must match.",
  "Adding instead of subtracting the third number gives one of the distractors, so I ruled it out.",
  "An off-by-ten error in the partial products explains two of the other options.",
  "I verified the result a second way, subtracting first from one partial product.",
  "The magnitude is right: the product is in the thousands and the subtraction removes a few hundred.",
  "None of the options needs rounding, so the exact value decides between them.",
  "I would double-check the carry in the tens column, where slips usually happen.",
  "Working the multiplication as (x + y) times z gives the same figure, which is reassuring."
]

const prose = (rng: Rng, sentences: number): string => rng.shuffle(reasoning).slice(0, sentences).join(" ")

const lastUser = (messages: ReadonlyArray<ChatMessage>): string =>
  [...messages].reverse().find((message) => message.role === "user")?.content ?? ""

const instructionOf = (messages: ReadonlyArray<ChatMessage>): string =>
  messages.find((message) => message.content.startsWith(Protocol.marker))?.content ?? ""

/** Blocks of the form `--- label ---\n…`, by label. */
const blocks = (text: string): ReadonlyArray<{ readonly label: string; readonly body: string }> => {
  const parts = text.split(/^--- (.+?) ---$/m)
  const out: Array<{ label: string; body: string }> = []
  for (let i = 1; i + 1 < parts.length; i += 2) out.push({ label: parts[i]!, body: parts[i + 1]! })
  return out
}

const positionIn = (text: string, question: Question): Letter | undefined => letterOf(Protocol.labelled(text, "POSITION"), question)

/** The most held of `held`, when one is held more than any other. */
const plurality = (held: ReadonlyArray<Letter>): { readonly top: ReadonlyArray<Letter>; readonly count: number } => {
  const counts = new Map<Letter, number>()
  for (const letter of held) counts.set(letter, (counts.get(letter) ?? 0) + 1)
  const count = Math.max(0, ...counts.values())
  return { top: letters.filter((letter) => counts.get(letter) === count), count }
}

interface Context {
  readonly seed: number
  readonly regime: Regime
  readonly question: Question
  readonly self: Participant
}

/** The position alone: the belief it would propose. */
const opine = (ctx: Context): string => `POSITION: ${statement(answerOf(ctx.seed, ctx.regime, ctx.question, ctx.self, "initial"))}`

const propose = (ctx: Context): string => {
  const belief = answerOf(ctx.seed, ctx.regime, ctx.question, ctx.self, "initial")
  return `POSITION: ${statement(belief)}\n${prose(keyed(ctx.seed, "text", ctx.question.id, ctx.self.model, "proposals"), 8)}`
}

const critique = (ctx: Context, messages: ReadonlyArray<ChatMessage>): string => {
  const ownText = messages.find((message) => message.role === "assistant")?.content ?? ""
  const own = positionIn(ownText, ctx.question) ?? answerOf(ctx.seed, ctx.regime, ctx.question, ctx.self, "initial")
  const peers = blocks(lastUser(messages)).map((block) => ({ label: block.label, position: positionIn(block.body, ctx.question) }))
  const held = [own, ...peers.flatMap((peer) => peer.position === undefined ? [] : [peer.position])]
  const { count, top } = plurality(held)
  const majority = top.length === 1 && top[0] !== own && count > held.filter((letter) => letter === own).length ? top[0] : undefined
  const switches = majority !== undefined && draw(ctx.seed, "conform", ctx.question.id, ctx.self.model) < ctx.regime.conformity
  const now = switches ? majority! : own
  const views = peers.map((peer) => `${peer.label} holds ${peer.position ?? "no clear answer"}`).join("; ")
  return [
    `CRITIQUE: ${views}. ${prose(keyed(ctx.seed, "text", ctx.question.id, ctx.self.model, "critique"), 3)}`,
    `POSITION: ${statement(now)}`,
    `CHANGED: ${switches ? "yes" : "no"}`,
    `REASON: ${switches ? `Most of the council holds ${now}; I defer to them.` : "I rechecked my working and keep my answer."}`
  ].join("\n")
}

const synthesise = (ctx: Context, messages: ReadonlyArray<ChatMessage>): string => {
  const members = blocks(lastUser(messages)).map((block) => ({
    label: block.label,
    first: letterOf(Protocol.labelled(block.body, "First position"), ctx.question),
    position: letterOf(Protocol.labelled(block.body, "Position now"), ctx.question)
  }))
  const pool = members.flatMap((member) => member.position === undefined ? [] : [member.position])
  // What the chair can recognise: every answer in front of it, the ones given up included.
  const seen = [...pool, ...members.flatMap((member) => member.first === undefined ? [] : [member.first])]
  const own = members.find((member) => member.label === "Your own")?.position
  const discerns = draw(ctx.seed, "discern", ctx.question.id, ctx.self.model) < chanceOn(ctx.seed, ctx.regime, ctx.question, ctx.self.discernment)
  const { top } = plurality(pool)
  const chosen: Letter = discerns && seen.includes(ctx.question.correct)
    ? ctx.question.correct
    : top.length === 1
    ? top[0]!
    : own !== undefined && top.includes(own)
    ? own
    : keyed(ctx.seed, "tie", ctx.question.id).pick(top.length > 0 ? top : letters)
  const others = [...new Set(seen.filter((letter) => letter !== chosen))]
  return [
    `POSITION: ${statement(chosen)}`,
    `The council's answer is ${chosen}. ${prose(keyed(ctx.seed, "text", ctx.question.id, ctx.self.model, "synthesis"), 5)}`,
    others.length === 0 ? "Every member came to this answer." : `Some members held ${others.join(" or ")}; the council does not adopt it.`
  ].join("\n")
}

const ratify = (ctx: Context, messages: ReadonlyArray<ChatMessage>): string => {
  const instruction = instructionOf(messages)
  const first = letterOf(/^Your first position: (.*)$/m.exec(instruction)?.[1], ctx.question)
  const after = letterOf(/^Your position after the critique: (.*)$/m.exec(instruction)?.[1], ctx.question)
  const consensus = positionIn(lastUser(messages), ctx.question)
  const initial = first ?? answerOf(ctx.seed, ctx.regime, ctx.question, ctx.self, "initial")
  const switched = after !== undefined && after !== initial
  const reverts = switched && draw(ctx.seed, "revert", ctx.question.id, ctx.self.model) < 1 - ctx.regime.conformity * 0.5
  const belief = switched && !reverts ? after : initial
  return belief === consensus
    ? JSON.stringify({ vote: "endorse", rationale: `The consensus matches my own answer, ${belief}.` })
    : JSON.stringify({
      vote: "dissent",
      claim: statement(belief),
      rationale: `My working gives ${belief}, not ${consensus ?? "what the consensus states"}.`
    })
}

/** How one attempt of a call ends: an answer, or a failure before any output. */
export type Reply =
  | { readonly _tag: "Answer"; readonly text: string }
  | { readonly _tag: "Down" }
  | { readonly _tag: "Transient" }

/**
 * The answer to one attempt of a call; `attempt` counts the router's attempts at the same call
 * (0 the first), so that a retry has a draw of its own.
 */
export const reply = (
  seed: number,
  regime: Regime,
  questions: ReadonlyMap<number, Question>,
  request: ModelRequest,
  attempt = 0
): Reply => {
  const self = regime.participants.find((p) => p.model === request.model.id)
  const id = idOf(request.messages)
  const question = id === undefined ? undefined : questions.get(id)
  if (self === undefined || question === undefined) return { _tag: "Answer", text: "I cannot tell which question this is." }
  const round = Protocol.roundOf(request.messages) ?? "proposals"
  // A retry after an unreadable answer is a call of its own, with a draw of its own.
  const asked = request.messages.filter((message) => message.content === Protocol.retryNote(round).content).length
  const down = outageFrom(seed, regime, question, self.model)
  // The second opinion is asked at the proposals' time: a model down from then fails it too.
  if (down !== undefined && rounds.indexOf(round === "position" ? "proposals" : round) >= down) return { _tag: "Down" }
  if (fails(seed, regime, question.id, self.model, round, asked)) return { _tag: "Down" }
  if (blips(seed, regime, question.id, self.model, round, asked, attempt)) return { _tag: "Transient" }
  const ctx: Context = { seed, regime, question, self }
  switch (round) {
    case "proposals":
      return { _tag: "Answer", text: propose(ctx) }
    case "position":
      return { _tag: "Answer", text: opine(ctx) }
    case "critique":
      return { _tag: "Answer", text: critique(ctx, request.messages) }
    case "synthesis":
      return { _tag: "Answer", text: synthesise(ctx, request.messages) }
    case "ratification":
      return { _tag: "Answer", text: ratify(ctx, request.messages) }
  }
}

const streamOf = (request: ModelRequest, answer: Reply): Stream.Stream<ModelChunk, ProviderFailure> => {
  if (answer._tag === "Down") {
    return Stream.fail(
      new ProviderFailure({
        provider: providerName,
        model: request.model.id,
        reason: "server_error",
        retryable: false,
        status: 500,
        message: "simulated failure"
      })
    )
  }
  if (answer._tag === "Transient") {
    return Stream.fail(
      new ProviderFailure({
        provider: providerName,
        model: request.model.id,
        reason: "rate_limited",
        retryable: true,
        status: 429,
        message: "simulated transient failure"
      })
    )
  }
  const text = answer.text
  const deltas = text.match(/[\s\S]{1,400}/g) ?? []
  const usage = new Usage({ input_tokens: estimateInput(request.messages, undefined), output_tokens: estimateTokens(text) })
  return Stream.fromIterable<ModelChunk>([
    ...deltas.map((delta) => ({ _tag: "Delta", text: delta }) as const),
    { _tag: "Usage", usage },
    { _tag: "Finish", reason: "stop" }
  ])
}

/** The simulated panel as the deployment's only provider. */
export const providers = (seed: number, regime: Regime, questions: ReadonlyArray<Question>): Layer.Layer<ModelProviders> => {
  const byId = new Map(questions.map((question) => [question.id, question]))
  // The router retries a call with the same conversation: how many times it was tried so far.
  const tried = new WeakMap<ReadonlyArray<ChatMessage>, number>()
  const stream = (request: ModelRequest) =>
    Stream.suspend(() => {
      const attempt = tried.get(request.messages) ?? 0
      tried.set(request.messages, attempt + 1)
      return streamOf(request, reply(seed, regime, byId, request, attempt))
    })
  return Layer.succeed(
    ModelProviders,
    ModelProviders.of({
      get: (name) => name === providerName ? Option.some({ name, kind: "openai-compatible" as const, stream }) : Option.none()
    })
  )
}

/** A catalog of the panel's models, all in the `standard` tier, in seat order. */
export const catalog = (regime: Regime): Layer.Layer<Catalog> => {
  const models = regime.participants.map(catalogModel)
  return Layer.succeed(Catalog, Catalog.fromCatalog(new ModelCatalog({ models: [models[0]!, ...models.slice(1)] })))
}
