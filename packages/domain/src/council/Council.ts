/**
 * The multi-model council (DESIGN §4 "Multi mode"): 2–4 participants answer independently,
 * critique each other anonymously, a chair writes the consensus, and each participant ratifies
 * it alone — endorses it or dissents in its own words. Every model call is one `MeteredCall`
 * carved from the run's budget, which the caller reserved for the whole run's worst case before
 * any call (`plan` says how much); each call is settled as it ends, or, with `held`, left held
 * for the caller to settle once it has recorded the run's answer.
 *
 * ```ts
 * const council = yield* Council
 * const plan = yield* council.plan({ models, messages })                 // seats and worst case
 * const budget = yield* metered.budget(payer, purpose, plan.worstCase)    // in a Scope; 402 here
 * yield* Stream.runForEach(council.run({ plan, payer, purpose, budget, messages }), (event) => …) // ends with `Concluded`
 * ```
 *
 * No hidden failure: a participant whose call fails or times out is dropped with the reason; a
 * failing chair is replaced by the next participant; a malformed structured answer is asked
 * once more, then recorded as an abstention. Fewer than two participants left fails the run
 * (`UpstreamUnavailable`), after every call made was settled. A deadline bounds the whole run:
 * each round must end by its share of it, and who has not answered by then is dropped.
 *
 * In `auto` mode the run opens with one proposal and a second opinion (another seat's position
 * alone, a small call): when they agree, it concludes with the proposal as a single answer
 * (`Concluded` with a `Single` result); otherwise the council goes on, the second opinion's seat
 * asked for its full proposal with the others.
 */
import { Clock, Context, Duration, Effect, Exit, Layer, Mailbox, Option, Scope, Stream } from "effect"
import { type InsufficientCredits, InvalidRequest, type NotFound, type Unauthorized, UpstreamUnavailable } from "../shared/Errors.js"
import { type CatalogModel, type ChatMessage, costOf, Usage } from "../models/Model.js"
import type { HeldCalls } from "../models/HeldCalls.js"
import { type Budget, inputMargin, MeteredCall, type Payer, estimateInput } from "../models/MeteredCall.js"
import { ModelProviders } from "../models/ModelProviders.js"
import {
  agreementRatio,
  Chair,
  ConsensusReport,
  CouncilParticipant,
  type CouncilRound,
  Dissent,
  Dropped,
  type Vote
} from "./ConsensusReport.js"
import * as AutoMode from "./AutoMode.js"
import * as Protocol from "./Protocol.js"
import { maxSeats, minSeats, seatsFrom } from "./Panel.js"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"
import * as Traced from "../observability/Traced.js"

/** How councils run in this deployment. */
export interface Settings {
  /** Seats per council, 2–4. */
  readonly participants: number
  /** The whole run's time budget. */
  readonly deadline: Duration.Duration
  /**
   * The most output tokens asked of each round's calls (each model's own cap applies too);
   * `position`, of auto mode's second opinion, which is one line.
   */
  readonly outputTokens: Readonly<Record<Protocol.PromptRound, number>>
}

export class CouncilSettings extends Context.Reference<CouncilSettings>()("@huddle/domain/CouncilSettings", {
  defaultValue: (): Settings => ({
    participants: 3,
    deadline: Duration.seconds(120),
    outputTokens: { proposals: 1024, position: 48, critique: 768, synthesis: 1536, ratification: 256 }
  })
}) {}

/**
 * When each round must be over, as shares of the deadline from the run's start: a round that
 * ends early leaves its time to the next.
 */
const checkpoints: Readonly<Record<CouncilRound, number>> = { proposals: 0.35, critique: 0.65, synthesis: 0.85, ratification: 1 }

/** The most tokens of a position quoted in a ratification prompt (the worst case counts two and the consensus's). */
const positionTokens = 60

/** Tokens of council instruction added to a round's prompt, on top of the conversation. */
const instructionTokens = 400

export interface CouncilPlan {
  /** The participants' models by seat (seat `i + 1`); a model may sit twice when the tier has few. */
  readonly seats: ReadonlyArray<CatalogModel>
  /** The estimated tokens of the conversation every prompt carries. */
  readonly estimatedInput: number
  /**
   * The most the whole run can cost: every round, every retry, every chair, and auto mode's
   * second opinions (counted in every plan: a plan does not know the mode it will run in).
   */
  readonly worstCase: number
  /** The cap on each round's output, per seat (the round's cap within the model's own). */
  readonly outputTokens: ReadonlyArray<Readonly<Record<Protocol.PromptRound, number>>>
}

export type CouncilEvent =
  | { readonly _tag: "RoundStarted"; readonly round: CouncilRound; readonly seats: ReadonlyArray<number> }
  | {
    readonly _tag: "SeatFinished"
    readonly round: CouncilRound
    readonly seat: number
    readonly model: string
    readonly outcome: "answered" | "abstained" | "dropped"
    readonly reason?: string | undefined
  }
  | { readonly _tag: "RoundEnded"; readonly round: CouncilRound; readonly cut: boolean }
  /** Auto mode: the opening proposal and second opinion disagreed (or one could not be had), so the council goes on. */
  | { readonly _tag: "Escalated"; readonly reason: string }
  /** Always the last event of a run that did not fail. */
  | { readonly _tag: "Concluded"; readonly result: CouncilResult }

export interface Spent {
  readonly usage: Usage
  readonly charged: number
  /** The models that answered, in seat order, each once. */
  readonly models: ReadonlyArray<string>
}

export type CouncilResult =
  | ({ readonly _tag: "Council"; readonly report: ConsensusReport } & Spent)
  /** Auto mode's answer when a proposal and an independent second opinion agreed: the proposal. */
  | ({ readonly _tag: "Single"; readonly text: string; readonly reason: string } & Spent)

export type CouncilError = UpstreamUnavailable | InsufficientCredits | Unauthorized | NotFound | InvalidRequest

export interface RunInput {
  readonly plan: CouncilPlan
  readonly payer: Payer
  readonly purpose: string
  /** The run's reservation (`MeteredCall.budget` for `plan.worstCase`), held in the caller's scope. */
  readonly budget: Budget
  /** The conversation every participant answers: system instructions, history, the question last. */
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  /** `auto`: open with a proposal and a second opinion, and go on only if they disagree. */
  readonly mode?: "multi" | "auto" | undefined
  /**
   * Told what the run spent once every call is settled (or priced, with `held`), however it ended
   * (concluded, failed, interrupted): what a caller records of a run that has no `Concluded`.
   */
  readonly tally?: ((spent: Spent) => Effect.Effect<void>) | undefined
  /**
   * Where the run's calls are left unsettled (`MeteredCall`'s `settleAfter`), for the caller to
   * settle once it has recorded the answer, or release when it could not (decision 0027). The run
   * counts each call at what settling it will charge.
   */
  readonly held?: HeldCalls | undefined
}

export interface Service {
  /** The seats for `models` (a tier's, under its ceiling) and the worst case of a run over `messages`. */
  readonly plan: (input: {
    readonly models: ReadonlyArray<CatalogModel>
    readonly messages: ReadonlyArray<ChatMessage>
    readonly participants?: number | undefined
    /** The most tokens the consensus may have (a client's `max_tokens`): the chair's synthesis. */
    readonly maxOutputTokens?: number | undefined
  }) => Effect.Effect<CouncilPlan, InvalidRequest>
  /** The worst case of a run of these seats (a stored plan's) over `messages`. */
  readonly priced: (
    seats: ReadonlyArray<CatalogModel>,
    messages: ReadonlyArray<ChatMessage>,
    maxOutputTokens?: number | undefined
  ) => Effect.Effect<CouncilPlan, InvalidRequest>
  /** The run as it happens (see the module's comment); interrupting it cancels every call in flight. */
  readonly run: (input: RunInput) => Stream.Stream<CouncilEvent, CouncilError>
}

export class Council extends Context.Tag("@huddle/domain/Council")<Council, Service>() {}

/** The answer a run ended with (every run that does not fail ends with `Concluded`). */
export const resultOf = (event: CouncilEvent): CouncilResult | undefined => event._tag === "Concluded" ? event.result : undefined

// ---------------------------------------------------------------------------------------------

interface Seat {
  readonly seat: number
  readonly model: CatalogModel
  alive: boolean
  proposal: Protocol.Stated | undefined
  /** Auto mode: the position it gave as the second opinion (before any proposal of its own). */
  opinion: string | undefined
  /** The proposal as the model wrote it (what it sees as its own earlier turn). */
  proposalText: string
  critique: Protocol.Critique | undefined
  changed: boolean
  vote: Vote
  ballot: Protocol.Ballot | undefined
  input: number
  output: number
  credits: number
}

type Outcome<A> =
  | { readonly _tag: "Answered"; readonly value: A; readonly text: string }
  | { readonly _tag: "Abstained" }
  | { readonly _tag: "Failed"; readonly reason: string }

const worstCall = (model: CatalogModel, input: number, output: number) =>
  costOf(model, { input_tokens: Math.ceil(input * inputMargin), output_tokens: output })

export const make = Effect.gen(function*() {
  const metered = yield* MeteredCall
  const providers = yield* ModelProviders
  // Read once, as the service is built: a deployment sets it in its composition root.
  const settings = yield* CouncilSettings
  const metrics = yield* Metrics.Metrics

  const plan: Service["plan"] = (input) =>
    Effect.gen(function*() {
      const usable = input.models.filter((model) => Option.isSome(providers.get(model.provider)))
      return yield* priced(seatsFrom(usable, input.participants ?? settings.participants), input.messages, input.maxOutputTokens)
    })

  const priced: Service["priced"] = (seats, messages, maxOutputTokens) =>
    Effect.gen(function*() {
      if (seats.length < minSeats) {
        return yield* new InvalidRequest({ message: "No model of this tier can take part in a council", field: "mode" })
      }
      const base = estimateInput(messages, undefined) + instructionTokens
      const caps = seats.map((model) => ({
        proposals: Math.min(settings.outputTokens.proposals, model.max_output_tokens),
        position: Math.min(settings.outputTokens.position, model.max_output_tokens),
        critique: Math.min(settings.outputTokens.critique, model.max_output_tokens),
        synthesis: Math.min(settings.outputTokens.synthesis, model.max_output_tokens, maxOutputTokens ?? Infinity),
        ratification: Math.min(settings.outputTokens.ratification, model.max_output_tokens)
      }))
      const sum = (f: (cap: (typeof caps)[number]) => number) => caps.reduce((total, cap) => total + f(cap), 0)
      // What each round's prompt can hold at most: the conversation, the instruction, and the
      // earlier rounds' outputs as far as their caps let them grow (a retry adds its own answer).
      const proposalIn = base
      const positionIn = base + Math.max(...caps.map((cap) => cap.position))
      const critiqueIn = base + sum((cap) => cap.proposals) + Math.max(...caps.map((cap) => cap.critique))
      const synthesisIn = base + sum((cap) => cap.proposals + cap.critique) + Math.max(...caps.map((cap) => cap.synthesis))
      const ratificationIn = base + Math.max(...caps.map((cap) => cap.synthesis)) + 3 * positionTokens +
        Math.max(...caps.map((cap) => cap.ratification))
      const contextWindow = Math.min(...seats.map((model) => model.context_window))
      if (synthesisIn + Math.max(...caps.map((cap) => cap.synthesis)) >= contextWindow) {
        return yield* new InvalidRequest({
          message: `The conversation is too long for a council of these models (context window ${contextWindow} tokens)`,
          field: "messages"
        })
      }
      // Every seat may propose, critique and ratify twice (one retry each) and chair once; in
      // auto mode every seat but the first may also give a second opinion twice (a seat's that
      // failed is asked of the next).
      const worstCase = seats.reduce((total, model, i) => {
        const cap = caps[i]!
        return total +
          (i === 0 ? 0 : 2 * worstCall(model, positionIn, cap.position)) +
          2 * worstCall(model, proposalIn, cap.proposals) +
          2 * worstCall(model, critiqueIn, cap.critique) +
          2 * worstCall(model, synthesisIn, cap.synthesis) +
          2 * worstCall(model, ratificationIn, cap.ratification)
      }, 0)
      return { seats, estimatedInput: base, worstCase: Math.max(1, worstCase), outputTokens: caps }
    })

  const run: Service["run"] = (input) =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<CouncilEvent, CouncilError>()
      const spent = { current: undefined as (() => Spent) | undefined }
      yield* protocol(input, (event) => mailbox.offer(event), spent).pipe(
        (effect) => Traced.span(effect, "Council.run", { attributes: { "huddle.seats": input.plan.seats.length } }),
        Effect.ensuring(Effect.suspend(() =>
          input.tally === undefined || spent.current === undefined ? Effect.void : input.tally(spent.current())
        )),
        Effect.exit,
        Effect.tap((exit) => {
          if (Exit.isFailure(exit)) metrics.add(Instruments.councilRuns, { outcome: "failed" })
        }),
        Effect.flatMap((exit) => mailbox.done(exit)),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    }))

  const protocol = (
    input: RunInput,
    emit: (event: CouncilEvent) => Effect.Effect<unknown>,
    tally: { current: (() => Spent) | undefined }
  ): Effect.Effect<void, CouncilError> =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const deadlineMs = Duration.toMillis(settings.deadline)
      const { plan } = input
      const seats: Array<Seat> = plan.seats.map((model, i) => ({
        seat: i + 1,
        model,
        alive: true,
        proposal: undefined,
        opinion: undefined,
        proposalText: "",
        critique: undefined,
        changed: false,
        vote: "abstain",
        ballot: undefined,
        input: 0,
        output: 0,
        credits: 0
      }))
      const dropped: Array<Dropped> = []
      const degraded: Array<string> = []
      const cut = new Set<CouncilRound>()
      const replaced: Array<{ seat: number; model: string; reason: string }> = []
      const names = plan.seats.flatMap((model) => [model.id, model.upstream_model ?? model.id, model.provider])
      const alive = () => seats.filter((seat) => seat.alive)

      const drop = (seat: Seat, round: CouncilRound, reason: string) => {
        metrics.add(Instruments.councilDropped, { round })
        seat.alive = false
        seat.vote = "dropped"
        dropped.push(new Dropped({ seat: seat.seat, model: seat.model.id, round, reason }))
      }

      /**
       * One metered call of a seat: its text, settled (or priced and left held, with `held`) and
       * counted against the seat however it ends.
       */
      const call = (seat: Seat, round: Protocol.PromptRound, messages: ReadonlyArray<ChatMessage>) =>
        Effect.scoped(Effect.gen(function*() {
          const maxOutputTokens = plan.outputTokens[seat.seat - 1]![round]
          const quote = yield* metered.quote([seat.model], messages, { maxOutputTokens })
          const { held } = input
          const started = metered.run({
            payer: input.payer,
            purpose: input.purpose,
            candidates: [seat.model],
            quote,
            messages,
            temperature: input.temperature,
            budget: input.budget,
            settleAfter: held !== undefined
          })
          // Held: its reservation in the caller's scope, past this call's, and the call in the
          // caller's list in the same step.
          const running = held === undefined
            ? yield* started
            : yield* Effect.uninterruptible(Effect.tap(Scope.extend(started, held.scope), (running) => Effect.sync(() => held.add(running))))
          let text = ""
          yield* Stream.runForEach(running.events, (event) => Effect.sync(() => {
            if (event._tag === "Delta") text += event.text
          })).pipe(
            Effect.ensuring(Effect.map(held === undefined ? running.settle : running.price, (settled) => {
              seat.input += settled.usage.input_tokens
              seat.output += settled.usage.output_tokens
              seat.credits += settled.charged
            }))
          )
          return text
        }))

      /**
       * A seat's answer to a round, read by `parse`: asked once more when unreadable, then an
       * abstention; a failed call or the round's deadline is a failure.
       */
      const ask = <A>(
        seat: Seat,
        round: Protocol.PromptRound,
        messages: ReadonlyArray<ChatMessage>,
        parse: (text: string) => A | undefined
      ): Effect.Effect<Outcome<A>> =>
        Effect.gen(function*() {
          const first = yield* call(seat, round, messages)
          const read = parse(first)
          if (read !== undefined) return { _tag: "Answered", value: read, text: first } as const
          const again = yield* call(seat, round, [...messages, { role: "assistant", content: first }, Protocol.retryNote(round)])
          const reread = parse(again)
          return reread !== undefined ? { _tag: "Answered", value: reread, text: again } as const : { _tag: "Abstained" } as const
        }).pipe(
          Effect.catchAll((error) => Effect.succeed({ _tag: "Failed", reason: error.message } as const))
        )

      /** The time left until `round` must be over. */
      const timeLeft = (round: CouncilRound) =>
        Effect.map(Clock.currentTimeMillis, (now) => Duration.millis(Math.max(0, started + checkpoints[round] * deadlineMs - now)))

      /**
       * `work` for each of `members` in parallel, within the round's share of the deadline; each
       * seat's outcome is reported as it comes. A seat still working at the deadline is cut off
       * (its call settled for what it consumed) and its outcome is a failure.
       */
      const roundOf = <A>(
        round: CouncilRound,
        members: ReadonlyArray<Seat>,
        work: (seat: Seat) => Effect.Effect<Outcome<A>>,
        onOutcome: (seat: Seat, outcome: Outcome<A>) => "answered" | "abstained" | "dropped"
      ) =>
        Effect.gen(function*() {
          yield* emit({ _tag: "RoundStarted", round, seats: members.map((seat) => seat.seat) })
          const left = yield* timeLeft(round)
          let late = false
          yield* Effect.forEach(members, (seat) =>
            work(seat).pipe(
              (effect) => Traced.span(effect, "Council.participant", { attributes: { "huddle.round": round, "huddle.seat": seat.seat, "huddle.model": seat.model.id } }),
              Effect.timeoutFail({ duration: left, onTimeout: () => left }),
              Effect.catchAll(() => {
                late = true
                return Effect.succeed<Outcome<A>>({ _tag: "Failed", reason: `did not finish the ${round} round before the run's deadline` })
              }),
              Effect.flatMap((outcome) => {
                const said = onOutcome(seat, outcome)
                return emit({
                  _tag: "SeatFinished",
                  round,
                  seat: seat.seat,
                  model: seat.model.id,
                  outcome: said,
                  reason: outcome._tag === "Failed" ? outcome.reason : undefined
                })
              })
            ), { concurrency: "unbounded", discard: true })
          if (late) {
            cut.add(round)
            degraded.push(`the deadline cut the ${round} round`)
          }
          yield* emit({ _tag: "RoundEnded", round, cut: late })
        }).pipe((effect) => Traced.span(effect, "Council.round", { attributes: { "huddle.round": round } }))

      const enough = (round: CouncilRound) =>
        alive().length >= minSeats
          ? Effect.void
          : Effect.fail(
            new UpstreamUnavailable({
              message: `The council could not go on after the ${round} round: ${alive().length} of ${seats.length} participants left (` +
                dropped.map((d) => `seat ${d.seat} ${d.model}: ${d.reason}`).join("; ") + ")"
            })
          )

      const spent = (): Spent => ({
        usage: new Usage({
          input_tokens: seats.reduce((sum, seat) => sum + seat.input, 0),
          output_tokens: seats.reduce((sum, seat) => sum + seat.output, 0)
        }),
        charged: seats.reduce((sum, seat) => sum + seat.credits, 0),
        models: [...new Set(seats.filter((seat) => seat.output > 0 || seat.input > 0).map((seat) => seat.model.id))]
      })
      tally.current = spent

      // Round 1: proposals, independent and in parallel.
      const proposal = (seat: Seat) =>
        ask(seat, "proposals", Protocol.proposalPrompt(input.messages, seat.seat, seats.length), Protocol.parseStated)
      const proposed = (seat: Seat, outcome: Outcome<Protocol.Stated>) => {
        if (outcome._tag === "Answered") {
          seat.proposal = outcome.value
          seat.proposalText = outcome.text
          return "answered" as const
        }
        drop(seat, "proposals", outcome._tag === "Failed" ? outcome.reason : "gave no readable proposal, even when asked again")
        return "dropped" as const
      }
      const propose = (members: ReadonlyArray<Seat>) => roundOf("proposals", members, proposal, proposed)

      if (input.mode === "auto") {
        // The opening, within the proposals round: seat 1's full proposal, which is the answer
        // if it stands, and seat 2's second opinion, its position alone (a call capped at a line);
        // each independent. A failed call says nothing about the question, so a seat that could
        // not give its part is replaced by the next one.
        let first: Seat | undefined
        let second: Seat | undefined
        let next = 0
        while ((first === undefined || second === undefined) && next < seats.length) {
          const full = first === undefined ? seats[next++] : undefined
          const opinion = second === undefined && next < seats.length ? seats[next++] : undefined
          yield* roundOf(
            "proposals",
            [full, opinion].filter((seat): seat is Seat => seat !== undefined),
            (seat) =>
              seat === opinion
                ? ask(seat, "position", Protocol.positionPrompt(input.messages, seat.seat, seats.length), Protocol.parseStated)
                : proposal(seat),
            (seat, outcome) => {
              if (seat !== opinion) return proposed(seat, outcome)
              if (outcome._tag === "Answered") {
                seat.opinion = outcome.value.position
                return "answered"
              }
              drop(seat, "proposals", outcome._tag === "Failed" ? outcome.reason : "gave no readable position, even when asked again")
              return "dropped"
            }
          )
          if (full?.proposal !== undefined) first = full
          if (opinion?.opinion !== undefined) second = opinion
        }
        if (first?.proposal !== undefined && second?.opinion !== undefined && Protocol.samePosition(first.proposal.position, second.opinion)) {
          return yield* emit({
            _tag: "Concluded",
            result: {
              _tag: "Single",
              text: first.proposal.text,
              reason: next > 2 ? AutoMode.reasons.agreedAfterFailure : AutoMode.reasons.agreed,
              ...spent()
            }
          })
        }
        yield* emit({
          _tag: "Escalated",
          reason: first === undefined || second === undefined ? AutoMode.reasons.failed : AutoMode.reasons.disagreed
        })
        yield* enough("proposals")
        // Every proposal the council weighs is a full and independent one: the second opinion's
        // seat is asked for its own, beside the seats not asked yet.
        const rest = alive().filter((seat) => seat.proposal === undefined)
        if (rest.length > 0) yield* propose(rest)
      } else {
        yield* propose(seats)
      }
      yield* enough("proposals")

      // Round 2: anonymised cross-critique; each seat sees its own proposal as its own.
      const critics = alive()
      yield* roundOf("critique", critics, (seat) => {
        const labels = Protocol.peerLabels(seat.seat, critics.map((other) => other.seat))
        const peers = critics.filter((other) => other !== seat).map((other) => ({
          label: labels.get(other.seat)!,
          text: Protocol.clip(Protocol.anonymise(other.proposalText, names), plan.outputTokens[other.seat - 1]!.proposals)
        }))
        // Its own proposal is anonymised too: no critique prompt names a model, its own turn included.
        const own = Protocol.clip(Protocol.anonymise(seat.proposalText, names), plan.outputTokens[seat.seat - 1]!.proposals)
        return ask(seat, "critique", Protocol.critiquePrompt(input.messages, seat.seat, own, peers), Protocol.parseCritique)
      }, (seat, outcome) => {
        if (outcome._tag === "Failed") {
          drop(seat, "critique", outcome.reason)
          return "dropped"
        }
        if (outcome._tag === "Abstained") return "abstained"
        seat.critique = outcome.value
        seat.changed = outcome.value.changed ?? !Protocol.samePosition(seat.proposal!.position, outcome.value.position)
        return "answered"
      })
      yield* enough("critique")

      // Round 3: synthesis by a chair; a failing chair is replaced by the next participant.
      const synthesis = Effect.gen(function*() {
        yield* emit({ _tag: "RoundStarted", round: "synthesis", seats: alive().map((seat) => seat.seat) })
        let consensus: { readonly seat: Seat; readonly stated: Protocol.Stated } | undefined
        for (const candidate of alive()) {
          // Every answer given is weighed, also that of a member dropped since (a later call failed,
          // a chair before this one): the proposal was independent and already paid for.
          const members = seats.filter((seat) => seat.proposal !== undefined)
          const labels = Protocol.peerLabels(candidate.seat, members.map((seat) => seat.seat))
          const work: ReadonlyArray<Protocol.Revised> = members.map((seat) => ({
            label: seat === candidate ? "Your own" : `Participant ${labels.get(seat.seat)!}`,
            first: Protocol.anonymise(seat.proposal!.position, names),
            position: Protocol.anonymise(seat.critique?.position ?? seat.proposal!.position, names),
            answer: Protocol.clip(Protocol.anonymise(seat.proposal!.text, names), plan.outputTokens[seat.seat - 1]!.proposals),
            critique: Protocol.clip(Protocol.anonymise(seat.critique?.critique ?? "(none)", names), plan.outputTokens[seat.seat - 1]!.critique)
          }))
          const left = yield* timeLeft("synthesis")
          const outcome = yield* ask(candidate, "synthesis", Protocol.synthesisPrompt(input.messages, work), Protocol.parseStated).pipe(
            (effect) =>
              Traced.span(effect, "Council.participant", {
                attributes: { "huddle.round": "synthesis", "huddle.seat": candidate.seat, "huddle.model": candidate.model.id }
              }),
            Effect.timeoutFail({ duration: left, onTimeout: () => left }),
            Effect.catchAll(() => {
              cut.add("synthesis")
              return Effect.succeed<Outcome<Protocol.Stated>>({ _tag: "Failed", reason: "did not finish the synthesis before the run's deadline" })
            })
          )
          if (outcome._tag === "Answered") {
            consensus = { seat: candidate, stated: outcome.value }
            yield* emit({ _tag: "SeatFinished", round: "synthesis", seat: candidate.seat, model: candidate.model.id, outcome: "answered" })
            break
          }
          const reason = outcome._tag === "Failed" ? outcome.reason : "wrote no readable consensus, even when asked again"
          replaced.push({ seat: candidate.seat, model: candidate.model.id, reason })
          if (outcome._tag === "Failed") drop(candidate, "synthesis", reason)
          yield* emit({
            _tag: "SeatFinished",
            round: "synthesis",
            seat: candidate.seat,
            model: candidate.model.id,
            outcome: outcome._tag === "Failed" ? "dropped" : "abstained",
            reason
          })
          if (cut.has("synthesis")) break
        }
        if (cut.has("synthesis")) degraded.push("the deadline cut the synthesis round")
        yield* emit({ _tag: "RoundEnded", round: "synthesis", cut: cut.has("synthesis") })
        return consensus
      }).pipe((effect) => Traced.span(effect, "Council.round", { attributes: { "huddle.round": "synthesis" } }))
      const consensus = yield* synthesis
      if (consensus === undefined) {
        return yield* new UpstreamUnavailable({
          message: `No council participant could write the consensus (${replaced.map((r) => `seat ${r.seat} ${r.model}: ${r.reason}`).join("; ")})`
        })
      }
      if (replaced.length > 0) degraded.push(`the chair was replaced ${replaced.length === 1 ? "once" : `${replaced.length} times`}`)
      yield* enough("synthesis")
      const agreed = consensus.stated
      const positionIn = (position: string | null) =>
        position === null ? null : Protocol.clip(Protocol.anonymise(position, names), positionTokens)

      // Round 4: independent ratification; nobody sees another's vote.
      yield* roundOf("ratification", alive(), (seat) =>
        ask(
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
          drop(seat, "ratification", outcome.reason)
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

      const votes = seats.map((seat) => seat.vote)
      if (!votes.some((vote) => vote === "endorse" || vote === "dissent")) degraded.push("no participant ratified the consensus")
      if (dropped.length > 0) degraded.unshift(`${seats.length - dropped.length} of ${seats.length} participants took part to the end`)
      const report = new ConsensusReport({
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
        chair: new Chair({ seat: consensus.seat.seat, model: consensus.seat.model.id, replaced }),
        degraded: degraded.length > 0,
        degraded_reasons: degraded,
        planned_participants: seats.length
      })
      metrics.add(Instruments.councilRuns, { outcome: report.degraded ? "degraded" : "consensus" })
      yield* emit({ _tag: "Concluded", result: { _tag: "Council", report, ...spent() } })
    })

  return Council.of(Traced.traced("Council", { plan, priced, run }))
})

export const layer = Layer.effect(Council, make)

/** The council with these settings (the rest default). */
export const layerWith = (settings: Partial<Settings>) =>
  layer.pipe(Layer.provide(Layer.succeed(CouncilSettings, { ...CouncilSettings.defaultValue(), ...settings })))

/** Seat counts a deployment may configure. */
export const seatRange = { min: minSeats, max: maxSeats } as const
