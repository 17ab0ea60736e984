/**
 * The council driven directly (not through HTTP) over in-memory ports and scripted participants:
 * each participant answers according to the round it is asked (`Protocol.roundOf`), and the test
 * keeps what each answer should cost, to hold the run's accounting against the ledger.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as AutoMode from "@huddle/domain/council/AutoMode"
import type { ConsensusReport, CouncilRound, Vote } from "@huddle/domain/council/ConsensusReport"
import * as CouncilModule from "@huddle/domain/council/Council"
import * as HeldCalls from "@huddle/domain/models/HeldCalls"
import { type CouncilError, type CouncilEvent, CouncilSettings, type Settings, type Spent } from "@huddle/domain/council/Council"
import * as Protocol from "@huddle/domain/council/Protocol"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { type ChatMessage, costOf, type ModelRequest } from "@huddle/domain/models/Model"
import { estimateInput, MeteredCall, type Payer } from "@huddle/domain/models/MeteredCall"
import { CreditStoreState } from "@huddle/testkit/ports/InMemoryCreditStore"
import * as InMemoryDomain from "@huddle/testkit/ports/InMemoryDomain"
import { answer, type Answer, delayed, failBefore, hang, panel, providerName, ScriptedModels } from "@huddle/testkit/ports/ScriptedModels"
import { agreed, type Behaviour, said, say, standard, usage } from "@huddle/testkit/ports/ScriptedCouncil"
import { Duration, Effect, Either, FastCheck as fc, Fiber, Stream, TestClock } from "effect"

const ann = "usr_ann"
const personal = { ownerType: "user", ownerId: ann, pool: "personal" } as const
const payer: Payer = { userId: ann, orgId: null, creditFallback: false, authority: { via: "api_key", credentialId: "key_ann", actorId: ann } }
const question: ReadonlyArray<ChatMessage> = [{ role: "user", content: "Which database should a small team start with?" }]
const granted = 1_000_000

const balance = Effect.flatMap(CreditStore, (store) => store.balance(personal))
const held = Effect.flatMap(CreditStoreState, (state) => state.held)

// ---------------------------------------------------------------------------------------------
// Participants

/** `standard`, except what `overrides` says for some seats and rounds. */
const except = (overrides: ReadonlyArray<readonly [number, Protocol.PromptRound, Behaviour]>): Behaviour => (seat, round, request) =>
  (overrides.find(([s, r]) => s === seat && r === round)?.[2] ?? standard)(seat, round, request)

const isRetry = (request: ModelRequest, round: Protocol.PromptRound) => request.messages.at(-1)?.content === Protocol.retryNote(round).content

/** What a call answered with `reply` is charged: the reported usage, else an estimate once there was output. */
const chargeOf = (request: ModelRequest, reply: Answer): number => {
  switch (reply._tag) {
    case "FailBefore":
      return 0
    case "Delayed":
      return chargeOf(request, reply.answer)
    case "Answer":
    case "FailAfter":
    case "Hang": {
      const chars = reply.deltas.join("").length
      const reported = reply._tag === "Hang" ? undefined : reply.usage
      if (reported !== undefined) return costOf(request.model, reported)
      return chars === 0 ? 0 : costOf(request.model, { input_tokens: estimateInput(request.messages, undefined), output_tokens: Math.ceil(chars / 4) })
    }
  }
}

/**
 * Seats the first `seats` models of the panel, each answering by `behaviour`; returns what the
 * answers given so far should have cost, one entry per call.
 */
const seat = (seats: number, behaviour: Behaviour) =>
  Effect.gen(function*() {
    const script = yield* ScriptedModels
    const charges: Array<number> = []
    for (const [i, model] of panel.slice(0, seats).entries()) {
      yield* script.respond(model.id, (request) => {
        const round = Protocol.roundOf(request.messages)
        if (round === undefined) throw new Error(`${model.id} was asked something that is not a council round`)
        const reply = behaviour(i + 1, round, request)
        charges.push(chargeOf(request, reply))
        return reply
      })
    }
    return charges
  })

/** The requests seat `seat` received in `round`, in order. */
const asked = (seat: number, round: Protocol.PromptRound) =>
  Effect.map(
    Effect.flatMap(ScriptedModels, (script) => script.calls),
    (calls) => calls.filter((call) => call.model.id === panel[seat - 1]!.id && Protocol.roundOf(call.messages) === round)
  )

const sorted = <A>(values: ReadonlyArray<A>): Array<A> => [...values].sort()

const sum = (values: ReadonlyArray<number>) => values.reduce((total, value) => total + value, 0)

// ---------------------------------------------------------------------------------------------
// Runs

interface Outcome {
  readonly events: ReadonlyArray<CouncilEvent>
  readonly error: CouncilError | undefined
  /** What the run told its `tally` once every call was settled. */
  readonly spent: Spent | undefined
  /** The balance before the run less the balance after it. */
  readonly taken: number
  /** What is still held once the run's scope has closed. */
  readonly held: number
}

const defaults: Settings = CouncilSettings.defaultValue()

/**
 * A council of the first `seats` panel models over `question`, its budget reserved in a scope of
 * its own; `events` (when given) sees each event as the consumer does, `shape` may cut the stream.
 */
const runCouncil = (
  seats: number,
  options: {
    readonly mode?: "multi" | "auto"
    readonly settings?: Partial<Settings>
    readonly events?: Array<CouncilEvent>
    readonly shape?: (
      events: Stream.Stream<CouncilEvent, CouncilError>
    ) => Stream.Stream<CouncilEvent, CouncilError, ScriptedModels>
    /** The calls left held for the caller (`held`), who then settles them, or releases them. */
    readonly held?: "settle" | "release" | undefined
  } = {}
) =>
  Effect.gen(function*() {
    const before = yield* balance
    const events = options.events ?? []
    let spent: Spent | undefined
    const ran = yield* Effect.scoped(Effect.gen(function*() {
      // A council built with this run's settings, as a deployment's composition root builds one.
      const council = yield* CouncilModule.make
      const plan = yield* council.plan({ models: panel.slice(0, seats), messages: question, participants: seats })
      expect(plan.seats.map((model) => model.id)).toEqual(panel.slice(0, seats).map((model) => model.id))
      const budget = yield* (yield* MeteredCall).budget(payer, "council", plan.worstCase)
      const calls = options.held === undefined ? undefined : yield* HeldCalls.make
      const stream = council.run({
        plan,
        payer,
        purpose: "council",
        budget,
        messages: question,
        mode: options.mode,
        tally: (total) => Effect.sync(() => void (spent = total)),
        held: calls
      }).pipe(Stream.tap((event) => Effect.sync(() => void events.push(event))))
      yield* Stream.runDrain(options.shape === undefined ? stream : options.shape(stream)).pipe(
        Effect.ensuring(Effect.suspend(() => {
          if (calls === undefined) return Effect.void
          // Held, nothing charged yet: the whole budget is still held, in the run's reservation and its calls'.
          return Effect.gen(function*() {
            expect(yield* held).toBe(plan.worstCase)
            expect(before - (yield* balance)).toBe(plan.worstCase)
            yield* options.held === "settle" ? calls.settle : calls.release
          })
        }))
      )
    })).pipe(
      Effect.provideService(CouncilSettings, { ...defaults, participants: seats, ...options.settings }),
      Effect.either
    )
    // A run fails only as UpstreamUnavailable here: anything else is the test's own mistake.
    if (Either.isLeft(ran) && ran.left._tag !== "UpstreamUnavailable") return yield* Effect.die(ran.left)
    return {
      events,
      error: Either.isLeft(ran) ? ran.left : undefined,
      spent,
      taken: before - (yield* balance),
      held: yield* held
    } satisfies Outcome
  })

const grant = Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount: granted, reason: "test", actorId: null }))

const reportOf = (outcome: Outcome): ConsensusReport => {
  const last = outcome.events.at(-1)
  assert(last?._tag === "Concluded" && last.result._tag === "Council", `the run did not conclude with a council: ${outcome.error?.message}`)
  return last.result.report
}

const votes = (report: ConsensusReport) => report.participants.map((participant) => participant.vote)

/** The outcome's money: nothing held, and the ledger, the run's tally and the scripted answers agree. */
const expectSettled = (outcome: Outcome, charges: ReadonlyArray<number>) => {
  expect(outcome.held).toBe(0)
  expect(outcome.taken).toBe(sum(charges))
  expect(outcome.spent?.charged).toBe(outcome.taken)
}

/** Polls `check` (letting the run's fibers progress) until it holds. */
const eventually = (check: Effect.Effect<boolean, never, ScriptedModels>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 10_000; i++) {
      if (yield* check) return
      yield* Effect.yieldNow()
    }
    return yield* Effect.dieMessage("the awaited state never came")
  })

const finished = (events: ReadonlyArray<CouncilEvent>, round: CouncilRound) =>
  events.flatMap((event) => event._tag === "SeatFinished" && event.round === round ? [event.seat] : [])

const domain = () => InMemoryDomain.layer()

// ---------------------------------------------------------------------------------------------

describe("the council", () => {
  it.effect("keeps a dissent in the dissenter's own words and counts agreement over those who ratified", () =>
    Effect.gen(function*() {
      yield* grant
      const charges = yield* seat(3, except([[3, "ratification", (s) => say(said.dissent(s))]]))
      const outcome = yield* runCouncil(3)
      const report = reportOf(outcome)

      expect(votes(report)).toEqual(["endorse", "endorse", "dissent"])
      expect(report.agreement_ratio).toBeCloseTo(2 / 3, 10)
      expect(report.dissents.map((dissent) => ({ ...dissent }))).toEqual([
        { seat: 3, model: panel[2]!.id, claim: "Claim 3: start with SQLite.", rationale: "Rationale 3: one file, no server." }
      ])
      expect(report.participants.map((participant) => participant.endorsed)).toEqual([true, true, false])
      expect(report.position).toBe(agreed)
      expect(report.text).toBe("Consensus 1: PostgreSQL, with backups from day one.")
      expect(report.chair).toMatchObject({ seat: 1, replaced: [] })
      expect(report.degraded).toBe(false)
      expect(report.dropped).toEqual([])
      expectSettled(outcome, charges)
      expect(sum(report.participants.map((participant) => participant.credits))).toBe(outcome.taken)
    }).pipe(Effect.provide(domain())))

  it.effect("drops a participant whose proposal call fails, with the round and the reason, and goes on with the others", () =>
    Effect.gen(function*() {
      yield* grant
      const charges = yield* seat(3, except([[2, "proposals", () => failBefore()]]))
      const outcome = yield* runCouncil(3)
      const report = reportOf(outcome)

      expect(report.dropped).toHaveLength(1)
      expect(report.dropped[0]).toMatchObject({ seat: 2, model: panel[1]!.id, round: "proposals" })
      expect(report.dropped[0]!.reason).toContain("rejected")
      expect(votes(report)).toEqual(["endorse", "dropped", "endorse"])
      expect(report.agreement_ratio).toBe(1)
      expect(report.degraded).toBe(true)
      expect(report.degraded_reasons).toContain("2 of 3 participants took part to the end")
      // The dropped participant is asked nothing more; the other two go through every round.
      expect(yield* asked(2, "critique")).toEqual([])
      expect(yield* asked(2, "ratification")).toEqual([])
      expect((yield* asked(1, "ratification")).length + (yield* asked(3, "ratification")).length).toBe(2)
      expect(report.participants[1]).toMatchObject({ initial_position: null, credits: 0 })
      expectSettled(outcome, charges)
    }).pipe(Effect.provide(domain())))

  it.effect("replaces a chair whose synthesis fails with the next participant", () =>
    Effect.gen(function*() {
      yield* grant
      const charges = yield* seat(3, except([[1, "synthesis", () => failBefore()]]))
      const outcome = yield* runCouncil(3)
      const report = reportOf(outcome)

      expect(report.chair.seat).toBe(2)
      expect(report.chair.model).toBe(panel[1]!.id)
      expect(report.chair.replaced).toHaveLength(1)
      expect(report.chair.replaced[0]).toMatchObject({ seat: 1, model: panel[0]!.id })
      expect(report.chair.replaced[0]!.reason).toContain("rejected")
      expect(report.text).toBe("Consensus 2: PostgreSQL, with backups from day one.")
      expect(report.dropped.map((dropped) => [dropped.seat, dropped.round])).toEqual([[1, "synthesis"]])
      expect(report.degraded).toBe(true)
      expect(report.degraded_reasons).toContain("the chair was replaced once")
      expect(votes(report)).toEqual(["dropped", "endorse", "endorse"])
      expect(yield* asked(3, "synthesis")).toEqual([])
      expectSettled(outcome, charges)
    }).pipe(Effect.provide(domain())))

  it.effect("fails with UpstreamUnavailable when one participant is left, with every call settled and nothing held", () =>
    Effect.gen(function*() {
      yield* grant
      const charges = yield* seat(3, except([[2, "proposals", () => failBefore()], [3, "proposals", () => failBefore()]]))
      const outcome = yield* runCouncil(3)

      expect(outcome.error?._tag).toBe("UpstreamUnavailable")
      expect(outcome.error?.message).toContain("after the proposals round: 1 of 3 participants left")
      expect(outcome.events.some((event) => event._tag === "Concluded")).toBe(false)
      expect(yield* asked(1, "critique")).toEqual([])
      // One proposal was answered and charged; the two failures cost nothing.
      expect(charges.filter((charge) => charge > 0)).toHaveLength(1)
      expect(outcome.taken).toBeGreaterThan(0)
      expectSettled(outcome, charges)
      const reservations = yield* Effect.flatMap(CreditStoreState, (state) => state.reservations)
      expect(reservations.filter((reservation) => reservation.status === "held")).toEqual([])
      expect(sum(reservations.map((reservation) => reservation.actual))).toBe(outcome.taken)
    }).pipe(Effect.provide(domain())))

  it.effect("reports its rounds in protocol order, each seat's end within its round, and concludes last", () =>
    Effect.gen(function*() {
      yield* grant
      yield* seat(3, standard)
      const outcome = yield* runCouncil(3)

      const steps = outcome.events.map((event) =>
        event._tag === "RoundStarted" || event._tag === "RoundEnded" || event._tag === "SeatFinished" ? `${event._tag} ${event.round}` : event._tag
      )
      const round = (name: CouncilRound, seats: number) => [
        `RoundStarted ${name}`,
        ...Array.from({ length: seats }, () => `SeatFinished ${name}`),
        `RoundEnded ${name}`
      ]
      expect(steps).toEqual([
        ...round("proposals", 3),
        ...round("critique", 3),
        ...round("synthesis", 1),
        ...round("ratification", 3),
        "Concluded"
      ])
      for (const name of ["proposals", "critique", "ratification"] as const) {
        expect(sorted(finished(outcome.events, name))).toEqual([1, 2, 3])
        expect(outcome.events.find((event) => event._tag === "RoundStarted" && event.round === name)).toMatchObject({ seats: [1, 2, 3] })
      }
      expect(finished(outcome.events, "synthesis")).toEqual([1])
      expect(outcome.events.every((event) => event._tag !== "RoundEnded" || !event.cut)).toBe(true)
    }).pipe(Effect.provide(domain())))

  it.effect("names no model in a critique or synthesis prompt, even when a participant names itself, and shows peers anonymously", () =>
    Effect.gen(function*() {
      yield* grant
      const names = [...panel.slice(0, 3).flatMap((model) => [model.id, model.upstream_model!]), providerName]
      yield* seat(
        3,
        except([
          [1, "proposals", (s) =>
            say(
              `POSITION: As ${panel[0]!.id} I say: ${agreed}\nProposal ${s}: I am ${panel[0]!.upstream_model}, served by ${providerName}; ` +
                `${panel[0]!.id.toUpperCase()} trusts relational stores.`
            )],
          [2, "critique", (s) =>
            say(
              `CRITIQUE: Critique ${s}: as ${panel[1]!.upstream_model} I find them sound.\nPOSITION: ${panel[1]!.id} holds: ${agreed}\nCHANGED: no\nREASON: Reason ${s}.`
            )]
        ])
      )
      const outcome = yield* runCouncil(3)
      reportOf(outcome)

      for (const round of ["critique", "synthesis"] as const) {
        for (const s of [1, 2, 3]) {
          for (const request of yield* asked(s, round)) {
            for (const message of request.messages) {
              for (const name of names) expect(message.content.toLowerCase(), `${round} prompt of seat ${s}`).not.toContain(name.toLowerCase())
            }
          }
        }
      }
      expect(yield* asked(1, "synthesis")).toHaveLength(1)
      // What seat 1 wrote still reaches its peers, without the names.
      const [toSeat2] = yield* asked(2, "critique")
      expect(toSeat2!.messages.at(-1)!.content).toContain("trusts relational stores")

      for (const s of [1, 2, 3]) {
        const [critique] = yield* asked(s, "critique")
        const peers = critique!.messages.at(-1)!
        const own = critique!.messages.at(-2)!
        expect(peers.role).toBe("user")
        expect(peers.content).toContain("--- Participant A ---")
        expect(peers.content).toContain("--- Participant B ---")
        expect(peers.content).not.toContain("--- Participant C ---")
        expect(peers.content).not.toContain(`Proposal ${s}:`)
        for (const other of [1, 2, 3].filter((o) => o !== s)) expect(peers.content).toContain(`Proposal ${other}:`)
        expect(own.role).toBe("assistant")
        expect(own.content).toContain(`Proposal ${s}:`)
      }
    }).pipe(Effect.provide(domain())))

  it.effect("shows no participant another's vote or ballot, not even in a retry asked after the others voted", () =>
    Effect.gen(function*() {
      yield* grant
      // Seat 1's first ballot is unreadable and comes late: its retry is written after seats 2 and 3 voted.
      let seat1Ballots = 0
      yield* seat(
        3,
        except([
          [1, "ratification", (s) => ++seat1Ballots > 1 ? say(said.endorse(s)) : delayed("1 second", say("I would rather not say."))],
          [2, "ratification", (s) => say(said.dissent(s))]
        ])
      )
      const events: Array<CouncilEvent> = []
      const running = yield* Effect.fork(runCouncil(3, { events }))
      yield* eventually(Effect.sync(() => finished(events, "ratification").length === 2))
      yield* TestClock.adjust("1 second")
      const report = reportOf(yield* Fiber.join(running))

      expect(votes(report)).toEqual(["endorse", "dissent", "endorse"])
      const ballots = new Map([1, 2, 3].map((s) => [s, [said.endorse(s), said.dissent(s), `Endorsement ${s}`, `Claim ${s}`, `Rationale ${s}`]]))
      const prompts = [...(yield* asked(1, "ratification")), ...(yield* asked(2, "ratification")), ...(yield* asked(3, "ratification"))]
      expect(prompts).toHaveLength(4)
      for (const request of prompts) {
        const viewer = panel.findIndex((model) => model.id === request.model.id) + 1
        const text = request.messages.map((message) => message.content).join("\n")
        for (const [s, marks] of ballots) {
          if (s !== viewer) for (const mark of marks) expect(text, `seat ${viewer} sees seat ${s}'s ballot`).not.toContain(mark)
        }
      }
      expect(isRetry(prompts[1]!, "ratification")).toBe(true)
    }).pipe(Effect.provide(domain())))

  it.effect("asks once more for an unreadable ballot, then records an abstention that agreement does not count", () =>
    Effect.gen(function*() {
      yield* grant
      const unreadable = "I think it's fine, mostly."
      const charges = yield* seat(3, except([[2, "ratification", (s) => say(said.dissent(s))], [3, "ratification", () => say(unreadable)]]))
      const outcome = yield* runCouncil(3)
      const report = reportOf(outcome)

      const [first, retry, ...more] = yield* asked(3, "ratification")
      expect(more).toEqual([])
      expect(isRetry(first!, "ratification")).toBe(false)
      expect(retry!.messages.slice(0, first!.messages.length)).toEqual(first!.messages)
      expect(retry!.messages.slice(first!.messages.length)).toEqual([
        { role: "assistant", content: unreadable },
        Protocol.retryNote("ratification")
      ])
      expect(report.participants[2]).toMatchObject({ vote: "abstain", endorsed: null })
      expect(votes(report)).toEqual(["endorse", "dissent", "abstain"])
      expect(report.agreement_ratio).toBe(1 / 2)
      expect(report.dissents.map((dissent) => dissent.seat)).toEqual([2])
      expect(report.dropped).toEqual([])
      expect(sorted(finished(outcome.events, "ratification"))).toEqual([1, 2, 3])
      expect(outcome.events.find((event) => event._tag === "SeatFinished" && event.round === "ratification" && event.seat === 3))
        .toMatchObject({ outcome: "abstained" })
      // Both of seat 3's ballots were paid for, with its proposal and critique.
      expect(report.participants[2]!.credits).toBe(4 * costOf(panel[2]!, usage))
      expectSettled(outcome, charges)
    }).pipe(Effect.provide(domain())))

  it.effect("cuts a participant still critiquing at its round's deadline, settles its call, and finishes without it", () =>
    Effect.gen(function*() {
      yield* grant
      const deadline = Duration.seconds(10)
      const charges = yield* seat(3, except([[3, "critique", () => hang(["CRITIQUE: Critique 3: the oth"])]]))
      const events: Array<CouncilEvent> = []
      const running = yield* Effect.fork(runCouncil(3, { events, settings: { deadline } }))
      const script = yield* ScriptedModels
      yield* eventually(Effect.gen(function*() {
        return finished(events, "critique").length === 2 && (yield* script.open) === 1
      }))
      // The critique round must be over at 65% of the deadline: 6.5 s.
      yield* TestClock.adjust("6499 millis")
      yield* Effect.yieldNow()
      expect(finished(events, "critique")).toHaveLength(2)
      yield* TestClock.adjust("1 millis")
      const outcome = yield* Fiber.join(running)
      const report = reportOf(outcome)

      expect(report.dropped).toHaveLength(1)
      expect(report.dropped[0]).toMatchObject({ seat: 3, round: "critique" })
      expect(report.dropped[0]!.reason).toContain("deadline")
      expect(report.degraded).toBe(true)
      expect(report.degraded_reasons).toContain("the deadline cut the critique round")
      expect(outcome.events.find((event) => event._tag === "RoundEnded" && event.round === "critique")).toMatchObject({ cut: true })
      expect(votes(report)).toEqual(["endorse", "endorse", "dropped"])
      // The hanging call was aborted and charged for what it produced.
      expect(yield* script.open).toBe(0)
      const cut = costOf(panel[2]!, {
        input_tokens: estimateInput((yield* asked(3, "critique"))[0]!.messages, undefined),
        output_tokens: Math.ceil("CRITIQUE: Critique 3: the oth".length / 4)
      })
      expect(report.participants[2]!.credits).toBe(costOf(panel[2]!, usage) + cut)
      expectSettled(outcome, charges)
    }).pipe(Effect.provide(domain())))

  describe("in auto mode", () => {
    const calls = Effect.flatMap(ScriptedModels, (script) => script.calls)
    const started = (outcome: Outcome) => outcome.events.flatMap((event) => event._tag === "RoundStarted" ? [[event.round, event.seats]] : [])
    const cap = (round: Protocol.PromptRound, seat: number) => Math.min(defaults.outputTokens[round], panel[seat - 1]!.max_output_tokens)

    it.effect("answers with the opening proposal when a second opinion agrees: two calls, the second its position alone, capped at a line", () =>
      Effect.gen(function*() {
        yield* grant
        const charges = yield* seat(3, standard)
        const outcome = yield* runCouncil(3, { mode: "auto" })

        const last = outcome.events.at(-1)
        assert(last?._tag === "Concluded" && last.result._tag === "Single")
        expect(last.result.text).toBe("Proposal 1: a relational store fits a small team.")
        expect(last.result.reason).toBe(AutoMode.reasons.agreed)
        expect(yield* calls).toHaveLength(2)
        const [proposal] = yield* asked(1, "proposals")
        expect(proposal!.maxOutputTokens).toBe(cap("proposals", 1))
        // The second opinion: seat 2's own perspective, only its position, a few dozen tokens at most,
        // and nothing of seat 1's answer in front of it.
        const [opinion] = yield* asked(2, "position")
        expect(opinion!.messages).toEqual(Protocol.positionPrompt(question, 2, 3))
        expect(opinion!.messages[0]!.content).toContain(`Your perspective: ${Protocol.perspectiveOf(2)}`)
        expect(opinion!.maxOutputTokens).toBe(48)
        expect(yield* asked(2, "proposals")).toEqual([])
        expect(started(outcome)).toEqual([["proposals", [1, 2]]])
        expect(outcome.events.some((event) => event._tag === "Escalated")).toBe(false)
        expect(last.result.charged).toBe(outcome.taken)
        expectSettled(outcome, charges)
      }).pipe(Effect.provide(domain())))

    it.effect("escalates when the second opinion disagrees, and asks its seat for a full proposal beside the third's, without the first's", () =>
      Effect.gen(function*() {
        yield* grant
        const sqlite = "Start with SQLite."
        const charges = yield* seat(3, except([
          [2, "position", () => say(said.position(sqlite))],
          [2, "proposals", (s) => say(said.proposal(s, sqlite))]
        ]))
        const outcome = yield* runCouncil(3, { mode: "auto" })
        const report = reportOf(outcome)

        expect(outcome.events.find((event) => event._tag === "Escalated")).toMatchObject({ reason: AutoMode.reasons.disagreed })
        expect(started(outcome)).toEqual([
          ["proposals", [1, 2]],
          ["proposals", [2, 3]],
          ["critique", [1, 2, 3]],
          ["synthesis", [1, 2, 3]],
          ["ratification", [1, 2, 3]]
        ])
        // Seat 2's full proposal is asked as every proposal is: independent, at a proposal's cap.
        const [full] = yield* asked(2, "proposals")
        expect(full!.messages).toEqual(Protocol.proposalPrompt(question, 2, 3))
        expect(full!.maxOutputTokens).toBe(cap("proposals", 2))
        expect(yield* asked(2, "position")).toHaveLength(1)
        expect(votes(report)).toEqual(["endorse", "endorse", "endorse"])
        expect(report.participants.map((participant) => participant.initial_position)).toEqual([agreed, sqlite, agreed])
        expect(yield* calls).toHaveLength(2 + 2 + 3 + 1 + 3)
        // The second opinion is paid by its seat: position, proposal, critique and ballot.
        expect(report.participants[1]!.credits).toBe(4 * costOf(panel[1]!, usage))
        expect(sum(report.participants.map((participant) => participant.credits))).toBe(outcome.taken)
        expectSettled(outcome, charges)
      }).pipe(Effect.provide(domain())))

    it.effect("asks the third participant for the second opinion when seat 2's fails, and answers once if it agrees", () =>
      Effect.gen(function*() {
        yield* grant
        const charges = yield* seat(3, except([[2, "position", () => failBefore()]]))
        const outcome = yield* runCouncil(3, { mode: "auto" })

        const last = outcome.events.at(-1)
        assert(last?._tag === "Concluded" && last.result._tag === "Single")
        expect(last.result.text).toBe("Proposal 1: a relational store fits a small team.")
        expect(last.result.reason).toBe(AutoMode.reasons.agreedAfterFailure)
        expect(outcome.events.some((event) => event._tag === "Escalated")).toBe(false)
        expect(started(outcome)).toEqual([["proposals", [1, 2]], ["proposals", [3]]])
        expect((yield* asked(3, "position")).map((request) => request.maxOutputTokens)).toEqual([48])
        expect(yield* calls).toHaveLength(3)
        expectSettled(outcome, charges)
      }).pipe(Effect.provide(domain())))

    it.effect("replaces a failed opening proposal with the next seat's full proposal, and answers with it if the second opinion agrees", () =>
      Effect.gen(function*() {
        yield* grant
        const charges = yield* seat(3, except([[1, "proposals", () => failBefore()]]))
        const outcome = yield* runCouncil(3, { mode: "auto" })

        const last = outcome.events.at(-1)
        assert(last?._tag === "Concluded" && last.result._tag === "Single")
        expect(last.result.text).toBe("Proposal 3: a relational store fits a small team.")
        expect(last.result.reason).toBe(AutoMode.reasons.agreedAfterFailure)
        expect(started(outcome)).toEqual([["proposals", [1, 2]], ["proposals", [3]]])
        expect(yield* asked(3, "position")).toEqual([])
        expect(yield* calls).toHaveLength(3)
        expectSettled(outcome, charges)
      }).pipe(Effect.provide(domain())))

    it.effect("escalates with the answers it has when the second opinion fails and the third seat's disagrees", () =>
      Effect.gen(function*() {
        yield* grant
        const charges = yield* seat(3, except([
          [2, "position", () => failBefore()],
          [3, "position", () => say(said.position("Start with SQLite."))],
          [3, "proposals", (s) => say(said.proposal(s, "Start with SQLite."))]
        ]))
        const outcome = yield* runCouncil(3, { mode: "auto" })
        const report = reportOf(outcome)

        expect(outcome.events.find((event) => event._tag === "Escalated")).toMatchObject({ reason: AutoMode.reasons.disagreed })
        expect(started(outcome)).toEqual([
          ["proposals", [1, 2]],
          ["proposals", [3]],
          ["proposals", [3]],
          ["critique", [1, 3]],
          ["synthesis", [1, 3]],
          ["ratification", [1, 3]]
        ])
        expect(report.dropped.map((dropped) => [dropped.seat, dropped.round])).toEqual([[2, "proposals"]])
        expect(votes(report)).toEqual(["endorse", "dropped", "endorse"])
        expectSettled(outcome, charges)
      }).pipe(Effect.provide(domain())))

    it.effect("with two seats, fails at once when the opening proposal fails, asking the other for nothing more", () =>
      Effect.gen(function*() {
        yield* grant
        const charges = yield* seat(2, except([[1, "proposals", () => failBefore()]]))
        const outcome = yield* runCouncil(2, { mode: "auto" })

        expect(outcome.events.find((event) => event._tag === "Escalated")).toMatchObject({ reason: AutoMode.reasons.failed })
        expect(outcome.error?._tag).toBe("UpstreamUnavailable")
        expect(yield* asked(2, "proposals")).toEqual([])
        expect(yield* calls).toHaveLength(2)
        expectSettled(outcome, charges)
      }).pipe(Effect.provide(domain())))

    it.effect("holds enough for its most expensive run: every call retried at its cap, the second opinion's too, and two chairs replaced", () =>
      Effect.gen(function*() {
        yield* grant
        // Every call is charged all that it carved out of the run's budget.
        const dear = { input_tokens: 10_000_000, output_tokens: 10_000_000 }
        const full = (head: string, tokens: number) => head + "\n" + "A relational store fits a small team. ".repeat(tokens).slice(0, tokens * 4 - head.length - 1)
        const behaviour: Behaviour = (s, round, request) => {
          const retry = isRetry(request, round)
          switch (round) {
            case "proposals":
              return answer(retry ? [full(`POSITION: ${agreed}`, cap(round, s))] : [], dear)
            case "position":
              return answer(retry ? [`POSITION: Start with SQLite, ${"one file and no server ".repeat(20)}`.slice(0, cap(round, s) * 4)] : [], dear)
            case "critique":
              return answer([full(retry ? `POSITION: ${agreed}\nCHANGED: no` : "CRITIQUE: unlabelled", cap(round, s))], dear)
            case "synthesis":
              return answer(retry && s === 3 ? [full(`POSITION: ${agreed}`, cap(round, s))] : [], dear)
            case "ratification":
              return answer([retry ? said.endorse(s) : full("No vote yet.", cap(round, s))], dear)
          }
        }
        yield* seat(3, behaviour)
        const council = yield* CouncilModule.make
        const plan = yield* council.plan({ models: panel.slice(0, 3), messages: question, participants: 3 })
        const outcome = yield* runCouncil(3, { mode: "auto" })
        const report = reportOf(outcome)

        // Nobody was dropped for want of credits: every carve fitted in the run's reservation.
        expect(report.dropped).toEqual([])
        expect(report.chair.seat).toBe(3)
        expect(yield* calls).toHaveLength(2 * (3 + 1 + 3 + 3 + 3))
        expect(outcome.taken).toBeLessThanOrEqual(plan.worstCase)
        expect(outcome.held).toBe(0)
      }).pipe(Effect.provide(domain())))
  })

  it.effect("with its calls held for the caller, reports what they will cost, and charges nothing when the caller releases them", () =>
    Effect.gen(function*() {
      yield* grant
      const charges = yield* seat(3, standard)
      const outcome = yield* runCouncil(3, { held: "release" })
      const report = reportOf(outcome)

      // The report and the tally say what the calls would have cost; the caller released them.
      expect(sum(charges)).toBeGreaterThan(0)
      expect(sum(report.participants.map((participant) => participant.credits))).toBe(sum(charges))
      expect(outcome.spent?.charged).toBe(sum(charges))
      expect(outcome.taken).toBe(0)
      expect(outcome.held).toBe(0)
    }).pipe(Effect.provide(domain())))

  /** A run its consumer stops once the three critique calls are streaming. */
  const stoppedMidRun = (held: "settle" | undefined) =>
    Effect.gen(function*() {
      yield* grant
      const partial = "CRITIQUE: half a thought"
      const charges = yield* seat(3, except([1, 2, 3].map((s) => [s, "critique", () => hang([partial])] as const)))
      const script = yield* ScriptedModels
      const critiqueStarts = (event: CouncilEvent) => event._tag === "RoundStarted" && event.round === "critique"
      const outcome = yield* runCouncil(3, {
        held,
        // Stop once the three critique calls are streaming.
        shape: (events) =>
          events.pipe(
            Stream.tap((event) => critiqueStarts(event) ? eventually(Effect.map(script.open, (open) => open === 3)) : Effect.void),
            Stream.takeUntil(critiqueStarts)
          )
      })

      expect(outcome.error).toBeUndefined()
      expect(outcome.events.at(-1)).toMatchObject({ _tag: "RoundStarted", round: "critique" })
      expect(yield* script.open).toBe(0)
      // Three proposals and three cut critiques, each charged for what it produced.
      expect(charges).toHaveLength(6)
      expect(sum(charges.slice(3))).toBeGreaterThan(0)
      expectSettled(outcome, charges)
      const reservations = yield* Effect.flatMap(CreditStoreState, (state) => state.reservations)
      expect(reservations.filter((reservation) => reservation.status === "held")).toEqual([])
    }).pipe(Effect.provide(domain()))

  it.effect("leaves nothing held and charges only what was consumed when the consumer stops mid-run", () => stoppedMidRun(undefined))

  it.effect("with its calls held for the caller, charges what was consumed once the caller settles a run stopped mid-way", () =>
    stoppedMidRun("settle"))

  // -------------------------------------------------------------------------------------------
  // Laws over random scripts

  const Act = ["answers", "fails", "malformed", "dissents", "endorses"] as const
  type Act = (typeof Act)[number]
  type Script = Readonly<Record<CouncilRound, Act>>

  const act: fc.Arbitrary<Act> = fc.oneof(
    { arbitrary: fc.constant("answers" as const), weight: 3 },
    { arbitrary: fc.constant("endorses" as const), weight: 2 },
    { arbitrary: fc.constant("dissents" as const), weight: 2 },
    { arbitrary: fc.constant("fails" as const), weight: 1 },
    { arbitrary: fc.constant("malformed" as const), weight: 1 }
  )
  const script: fc.Arbitrary<Script> = fc.record({ proposals: act, critique: act, synthesis: act, ratification: act })

  /** What seat `seat` answers when `scripts` says how it acts in each round. */
  const acting = (scripts: ReadonlyArray<Script>): Behaviour => (seat, round) => {
    if (round === "position") throw new Error("a council in multi mode asks for no second opinion")
    const does = scripts[seat - 1]![round]
    if (does === "fails") return failBefore()
    switch (round) {
      case "proposals":
        return does === "malformed" ? answer([], usage) : say(said.proposal(seat, does === "dissents" ? "Start with SQLite." : agreed))
      case "critique":
        return does === "malformed"
          ? say("Interesting proposals, all of them.")
          : say(said.critique(seat, does === "dissents" ? "Start with SQLite." : agreed, does === "dissents"))
      case "synthesis":
        return does === "malformed" ? answer(["  "], usage) : say(said.synthesis(seat))
      case "ratification":
        return does === "malformed" ? say("No comment.") : does === "dissents" ? say(said.dissent(seat)) : say(said.endorse(seat))
    }
  }

  interface Expected {
    readonly votes: ReadonlyArray<Vote>
    readonly dropped: ReadonlyArray<readonly [number, CouncilRound]>
    readonly changed: ReadonlyArray<boolean>
    /** The chair's seat, or undefined when the run fails. */
    readonly chair: number | undefined
  }

  /** The protocol as the module's comment states it, over one script. */
  const expectedOf = (scripts: ReadonlyArray<Script>): Expected => {
    const votes: Array<Vote> = scripts.map(() => "abstain")
    const changed = scripts.map(() => false)
    const dropped: Array<readonly [number, CouncilRound]> = []
    const alive = () => scripts.flatMap((_, i) => votes[i] === "dropped" ? [] : [i + 1])
    const drop = (seat: number, round: CouncilRound) => {
      votes[seat - 1] = "dropped"
      dropped.push([seat, round])
    }
    const failed = { votes, dropped, changed, chair: undefined }
    for (const seat of alive()) if (["fails", "malformed"].includes(scripts[seat - 1]!.proposals)) drop(seat, "proposals")
    if (alive().length < 2) return failed
    for (const seat of alive()) {
      const does = scripts[seat - 1]!.critique
      if (does === "fails") drop(seat, "critique")
      else if (does === "dissents") changed[seat - 1] = true
    }
    if (alive().length < 2) return failed
    let chair: number | undefined
    for (const seat of alive()) {
      const does = scripts[seat - 1]!.synthesis
      if (does === "fails") drop(seat, "synthesis")
      else if (does !== "malformed") {
        chair = seat
        break
      }
    }
    if (chair === undefined || alive().length < 2) return failed
    for (const seat of alive()) {
      const does = scripts[seat - 1]!.ratification
      if (does === "fails") drop(seat, "ratification")
      else votes[seat - 1] = does === "malformed" ? "abstain" : does === "dissents" ? "dissent" : "endorse"
    }
    return { votes, dropped, changed, chair }
  }

  it.effect.prop(
    "over random scripts: agreement, dissents, drops and money are accounted exactly, its calls settled as they end or held for the caller",
    [fc.integer({ min: 2, max: 4 }), fc.array(script, { minLength: 4, maxLength: 4 }), fc.constantFrom(undefined, "settle" as const, "release" as const)],
    ([seats, all, held]) =>
      Effect.gen(function*() {
        const scripts = all.slice(0, seats)
        yield* grant
        const charges = yield* seat(seats, acting(scripts))
        // Settled as each call ends, or held and settled together by the caller: the same money;
        // held and released by the caller (its answer could not be recorded): nothing charged.
        const outcome = yield* runCouncil(seats, { held })
        const expected = expectedOf(scripts)

        // (d), (e): whatever happened, the ledger, the tally and the answers agree, and nothing is held.
        if (held === "release") {
          expect(outcome).toMatchObject({ held: 0, taken: 0, spent: { charged: sum(charges) } })
        } else {
          expectSettled(outcome, charges)
        }
        expect(yield* Effect.flatMap(ScriptedModels, (script) => script.open)).toBe(0)
        if (expected.chair === undefined) {
          // (e)
          expect(outcome.error?._tag).toBe("UpstreamUnavailable")
          expect(outcome.events.some((event) => event._tag === "Concluded")).toBe(false)
          return
        }
        const report = reportOf(outcome)
        const last = outcome.events.at(-1)!
        assert(last._tag === "Concluded")
        expect(votes(report)).toEqual(expected.votes)
        expect(report.chair.seat).toBe(expected.chair)
        expect(report.participants.map((participant) => participant.changed)).toEqual(expected.changed)
        // (a)
        const endorsements = expected.votes.filter((vote) => vote === "endorse").length
        const dissents = expected.votes.filter((vote) => vote === "dissent").length
        expect(report.agreement_ratio).toBe(endorsements + dissents === 0 ? 0 : endorsements / (endorsements + dissents))
        // (b)
        const dissenters = report.participants.filter((participant) => participant.vote === "dissent").map((participant) => participant.seat)
        expect(report.dissents.map((dissent) => dissent.seat)).toEqual(dissenters)
        for (const dissent of report.dissents) {
          expect(dissent).toMatchObject({ claim: `Claim ${dissent.seat}: start with SQLite.`, rationale: `Rationale ${dissent.seat}: one file, no server.` })
        }
        // (c)
        expect(sorted(report.dropped.map((dropped) => [dropped.seat, dropped.round]))).toEqual(sorted(expected.dropped.map((d) => [...d])))
        expect(report.dropped.every((dropped) => dropped.reason.length > 0)).toBe(true)
        expect(report.degraded).toBe(report.degraded_reasons.length > 0)
        if (expected.dropped.length > 0) expect(report.degraded).toBe(true)
        // (d): what the answers cost (what the ledger took, unless the caller released them)
        expect(sum(report.participants.map((participant) => participant.credits))).toBe(sum(charges))
        assert(last.result._tag === "Council")
        expect(last.result.charged).toBe(sum(charges))
      }).pipe(Effect.provide(domain())),
    { fastCheck: { numRuns: 150 } }
  )
})
