import { assert, describe, expect, it } from "@effect/vitest"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import * as Pipeline from "@huddle/domain/huddle/IntentPipeline"
import { IntentPipeline } from "@huddle/domain/huddle/IntentPipeline"
import type { PipelineEvent } from "@huddle/domain/huddle/PipelineEvent"
import { IntentRepository } from "@huddle/domain/huddle/IntentRepository"
import { Memory } from "@huddle/domain/memories/Memory"
import { MemoryRepository } from "@huddle/domain/memories/MemoryRepository"
import { costOf } from "@huddle/domain/models/Model"
import { OrgSettingsRepository } from "@huddle/domain/orgs/OrgSettingsRepository"
import { OrgPolicies } from "@huddle/domain/settings/Policy"
import { type RequestScope, RequestScopes } from "@huddle/domain/request/RequestScope"
import { CreditStoreState } from "@huddle/testkit/ports/InMemoryCreditStore"
import * as InMemoryDomain from "@huddle/testkit/ports/InMemoryDomain"
import { answer, failAfter, models, ScriptedModels } from "@huddle/testkit/ports/ScriptedModels"
import { standard } from "@huddle/testkit/ports/ScriptedCouncil"
import * as Protocol from "@huddle/domain/council/Protocol"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { Chunk, DateTime, Deferred, Effect, Either, Exit, Fiber, FiberId, HashMap, Layer, Logger, LogLevel, Stream } from "effect"

const ann = "usr_ann"
const orgId = "org_acme"
const personal = { ownerType: "user", ownerId: ann, pool: "personal" } as const
const domain = InMemoryDomain.layer({ members: [{ orgId, userId: ann, role: "admin" }] })

/** Ann's credits, one org memory, and Ann's request scope in the org. */
const setup = Effect.gen(function*() {
  yield* (yield* CreditStore).grant({ account: personal, amount: 1000, reason: "test", actorId: null })
  const at = DateTime.unsafeMake(0)
  yield* (yield* MemoryRepository).create(
    new Memory({ id: "mem_1", scope: "org", content: "We deploy on Fridays", org_id: orgId, workspace_id: null, author_id: ann, created_at: at, updated_at: at })
  )
  return yield* (yield* RequestScopes).resolve(InMemoryDomain.principal(ann), { orgId })
})

const label = (event: PipelineEvent) =>
  event._tag === "Stage" ? `${event.stage}:${event.status}` : event._tag === "Token" ? `token:${event.text}` : "done"

const stageDetail = (events: ReadonlyArray<PipelineEvent>, stage: string, status: string) => {
  const found = events.find((event) => event._tag === "Stage" && event.stage === stage && event.status === status)
  assert(found?._tag === "Stage", `no ${stage}:${status}`)
  return found.detail
}

/**
 * The domain over an intent store whose writes of a completed intent are `write` (a fault
 * injected into the in-memory store; everything else as in `domain`). Fresh: the layer is
 * memoised, and `domain` builds the pipeline over the store as it is.
 */
const completedWrites = (write: Effect.Effect<boolean>) =>
  Layer.fresh(Pipeline.layer).pipe(
    Layer.provide(Layer.effect(
      IntentRepository,
      Effect.map(IntentRepository, (intents) =>
        IntentRepository.of({
          ...intents,
          update: (intent, reviewedBy, answer) => intent.status === "completed" ? write : intents.update(intent, reviewedBy, answer)
        }))
    )),
    Layer.provideMerge(domain)
  )

const balance = Effect.flatMap(CreditStore, (store) => store.balance(personal))
const held = Effect.flatMap(CreditStoreState, (state) => state.held)

/** 9 000 more credits (enough for a council's worst case), and the economy tier's two models seated, each answering every round readably. */
const seatEconomyCouncil = Effect.gen(function*() {
  yield* (yield* CreditStore).grant({ account: personal, amount: 9000, reason: "test", actorId: null })
  const script = yield* ScriptedModels
  for (const [i, model] of [models.economy, models.economyDear].entries()) {
    yield* script.respond(model.id, (request) => standard(i + 1, Protocol.roundOf(request.messages)!, request))
  }
  return script
})

describe("the intent pipeline", () => {
  it.effect("runs context, planning, review, execution and completion in order, Done last, charging the usage", () =>
    Effect.gen(function*() {
      const scope = yield* setup
      const usage = { input_tokens: 60, output_tokens: 2 }
      yield* (yield* ScriptedModels).queue(models.standard.id, answer(["Hel", "lo"], usage))

      const events = Chunk.toReadonlyArray(yield* Stream.runCollect((yield* IntentPipeline).submit({ scope, sessionId: null, input: "Say hello" })))

      expect(events.map(label)).toEqual([
        "context:started",
        "context:completed",
        "planning:started",
        "planning:completed",
        "review:skipped",
        "execution:started",
        "token:Hel",
        "token:lo",
        "execution:completed",
        "completion:completed",
        "done"
      ])
      expect(stageDetail(events, "context", "completed")).toEqual({ memories: 1, history_messages: 0, model_tier: "standard" })
      const charged = costOf(models.standard, usage)
      expect(stageDetail(events, "completion", "completed")).toEqual({ credits_charged: charged })
      const done = events.at(-1)!
      assert(done._tag === "Done")
      expect(done.outcome.intent).toMatchObject({ status: "completed", output: "Hello", models: [models.standard.id], credits_charged: charged, usage })
      expect(1000 - (yield* balance)).toBe(charged)
      expect(yield* held).toBe(0)
      const stored = yield* (yield* IntentRepository).find(done.outcome.intent.id)
      assert(stored._tag === "Some")
      expect(stored.value.intent).toMatchObject({ status: "completed", credits_charged: charged })
    }).pipe(Effect.provide(domain)))

  it.effect("stops after review started when the org's policy turns auto_execute off, charging nothing", () =>
    Effect.gen(function*() {
      yield* (yield* OrgSettingsRepository).putPolicies(orgId, new OrgPolicies({ auto_execute: false }), ann)
      const scope = yield* setup
      const script = yield* ScriptedModels

      const events = Chunk.toReadonlyArray(yield* Stream.runCollect((yield* IntentPipeline).submit({ scope, sessionId: null, input: "Say hello" })))

      expect(events.map(label)).toEqual([
        "context:started",
        "context:completed",
        "planning:started",
        "planning:completed",
        "review:started",
        "done"
      ])
      expect(stageDetail(events, "review", "started")).toMatchObject({ awaiting: "approval", decided_by: "org_policy" })
      const done = events.at(-1)!
      assert(done._tag === "Done")
      expect(done.outcome.intent).toMatchObject({ status: "awaiting_review", credits_charged: 0, output: null })
      expect(yield* script.calls).toEqual([])
      expect(yield* balance).toBe(1000)
      expect(yield* held).toBe(0)
      const ledger = yield* (yield* CreditStore).ledger(personal, { limit: 10 })
      expect(ledger.map((entry) => entry.kind)).toEqual(["grant"])
    }).pipe(Effect.provide(domain)))

  it.effect("records an answer that fails after output as failed, charged what the ledger shows, and fails the run", () =>
    Effect.gen(function*() {
      const scope = yield* setup
      yield* (yield* ScriptedModels).queue(models.standard.id, failAfter(["partial ", "answer"]))

      const seen: Array<PipelineEvent> = []
      const outcome = yield* (yield* IntentPipeline).submit({ scope, sessionId: null, input: "Say hello" }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.either
      )

      assert(Either.isLeft(outcome))
      expect(outcome.left._tag).toBe("UpstreamUnavailable")
      expect(seen.map(label)).toContain("token:answer")
      expect(seen.map(label)).not.toContain("done")
      const [intent, ...others] = yield* (yield* IntentRepository).listForUser(ann, { limit: 10 })
      expect(others).toEqual([])
      expect(intent).toMatchObject({ status: "failed", output: "partial answer", error: { error: "UPSTREAM_UNAVAILABLE" } })
      // What the reservation's ledger rows took, net: reserved minus given back.
      const ledger = yield* (yield* CreditStore).ledger(personal, { limit: 10 })
      const taken = -ledger.filter((entry) => entry.reservation_id !== null).reduce((sum, entry) => sum + entry.delta, 0)
      expect(ledger.map((entry) => entry.kind)).toEqual(["settle", "reserve", "grant"])
      expect(taken).toBeGreaterThan(0)
      expect(intent!.credits_charged).toBe(taken)
      expect(1000 - (yield* balance)).toBe(taken)
      expect(yield* held).toBe(0)
    }).pipe(Effect.provide(domain)))

  it.effect("charges nothing for a complete answer whose intent could not be recorded: the run fails and the credits are released", () =>
    Effect.gen(function*() {
      const scope = yield* setup
      yield* (yield* ScriptedModels).queue(models.standard.id, answer(["Hel", "lo"], { input_tokens: 60, output_tokens: 2 }))

      const seen: Array<PipelineEvent> = []
      const outcome = yield* (yield* IntentPipeline).submit({ scope, sessionId: null, input: "Say hello" }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.exit
      )

      assert(Exit.isFailure(outcome))
      expect(seen.map(label)).toContain("token:lo")
      expect(seen.map(label)).not.toContain("completion:completed")
      expect(seen.map(label)).not.toContain("done")
      expect(yield* balance).toBe(1000)
      expect(yield* held).toBe(0)
      const ledger = yield* (yield* CreditStore).ledger(personal, { limit: 10 })
      expect(ledger.map((entry) => entry.kind)).toEqual(["release", "reserve", "grant"])
      // Recorded as failed, charged nothing, as far as the store lets it be written.
      const [intent] = yield* (yield* IntentRepository).listForUser(ann, { limit: 10 })
      expect(intent).toMatchObject({ status: "failed", credits_charged: 0 })
    }).pipe(Effect.provide(completedWrites(Effect.die(new Error("the database went away"))))))

  it.effect("charges nothing for a council's answer whose intent could not be recorded: its calls are released", () =>
    Effect.gen(function*() {
      const scope = yield* setup
      const script = yield* seatEconomyCouncil

      const seen: Array<PipelineEvent> = []
      const outcome = yield* (yield* IntentPipeline).submit({
        scope,
        sessionId: null,
        input: "Which database should a small team start with?",
        request: new Preferences({ mode: "multi", model_tier: "economy" })
      }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.exit
      )

      assert(Exit.isFailure(outcome))
      expect((yield* script.calls).length).toBeGreaterThanOrEqual(8)
      expect(seen.map(label)).not.toContain("done")
      expect(yield* balance).toBe(10_000)
      expect(yield* held).toBe(0)
      const ledger = yield* (yield* CreditStore).ledger(personal, { limit: 100 })
      expect(ledger.filter((entry) => entry.kind === "settle")).toEqual([])
      const [intent] = yield* (yield* IntentRepository).listForUser(ann, { limit: 10 })
      expect(intent).toMatchObject({ status: "failed", credits_charged: 0 })
    }).pipe(Effect.provide(completedWrites(Effect.die(new Error("the database went away"))))))

  it.effect("still charges what was consumed when the client leaves while the completed intent is written", () => {
    const writing = Deferred.unsafeMake<void>(FiberId.none)
    return Effect.gen(function*() {
      const scope = yield* setup
      const usage = { input_tokens: 60, output_tokens: 2 }
      yield* (yield* ScriptedModels).queue(models.standard.id, answer(["Hel", "lo"], usage))

      const run = yield* Effect.fork(Stream.runDrain((yield* IntentPipeline).submit({ scope, sessionId: null, input: "Say hello" })))
      yield* Deferred.await(writing)
      yield* Fiber.interrupt(run)

      // The answer was complete and the client left: not the service's failure, so it is charged.
      const charged = costOf(models.standard, usage)
      expect(1000 - (yield* balance)).toBe(charged)
      expect(yield* held).toBe(0)
      const [intent] = yield* (yield* IntentRepository).listForUser(ann, { limit: 10 })
      expect(intent).toMatchObject({ status: "failed", error: { error: "CANCELLED" }, credits_charged: charged })
    }).pipe(Effect.provide(completedWrites(Effect.zipRight(Deferred.succeed(writing, undefined), Effect.never))))
  })
})

/** What was logged: its level, its message, its annotations. */
interface Logged {
  readonly level: LogLevel.LogLevel
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** A logger that keeps what it is given, added to (not in place of) the others. */
const capturing = (into: Array<Logged>) =>
  Logger.add(Logger.make(({ annotations, logLevel, message }) => {
    into.push({
      level: logLevel,
      message: Array.isArray(message) ? message.map(String).join(" ") : String(message),
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  }))

const chargeWarning = "an answer's intent records a charge the ledger did not take"
const chargeWarnings = (logs: ReadonlyArray<Logged>) => logs.filter((log) => log.message.includes(chargeWarning))

/**
 * The domain over an intent store where, as the completed intent is written, a sweep of expired
 * reservations runs first and reclaims the turn's (a request that looked dead to the sweep).
 */
const sweptWhileRecorded = (released: Array<number>) =>
  Layer.fresh(Pipeline.layer).pipe(
    Layer.provide(Layer.effect(
      IntentRepository,
      Effect.gen(function*() {
        const intents = yield* IntentRepository
        const store = yield* CreditStore
        return IntentRepository.of({
          ...intents,
          update: (intent, reviewedBy, answer) =>
            intent.status === "completed"
              ? Effect.flatMap(DateTime.now, (now) =>
                store.releaseExpired(DateTime.add(now, { seconds: 1 })).pipe(
                  Effect.tap((count) => Effect.sync(() => released.push(count))),
                  Effect.zipRight(intents.update(intent, reviewedBy, answer))
                ))
              : intents.update(intent, reviewedBy, answer)
        })
      })
    )),
    Layer.provideMerge(domain)
  )

/** A council's turn on the economy tier, its seats scripted to agree, paid from 10 000 credits. */
const councilTurn = (scope: RequestScope) =>
  Effect.gen(function*() {
    yield* seatEconomyCouncil
    return Chunk.toReadonlyArray(yield* Stream.runCollect((yield* IntentPipeline).submit({
      scope,
      sessionId: null,
      input: "Which database should a small team start with?",
      request: new Preferences({ mode: "multi", model_tier: "economy" })
    })))
  })

describe("the intent pipeline: a charge the ledger did not take", () => {
  it.effect("warns, naming the intent, what it records and what was charged, when the reservation was swept before it was settled", () => {
    const logs: Array<Logged> = []
    const released: Array<number> = []
    return Effect.gen(function*() {
      const scope = yield* setup
      const usage = { input_tokens: 60, output_tokens: 2 }
      yield* (yield* ScriptedModels).queue(models.standard.id, answer(["Hel", "lo"], usage))

      const events = Chunk.toReadonlyArray(yield* Stream.runCollect((yield* IntentPipeline).submit({ scope, sessionId: null, input: "Say hello" })))

      // The sweep reclaimed the turn's reservation while its intent was written.
      expect(released).toEqual([1])
      const done = events.at(-1)!
      assert(done._tag === "Done")
      const charged = costOf(models.standard, usage)
      // The intent says it was charged; the ledger took nothing (the sweep gave everything back).
      expect(done.outcome.intent).toMatchObject({ status: "completed", credits_charged: charged })
      expect(yield* balance).toBe(1000)
      expect(yield* held).toBe(0)
      // What an operator is told.
      const warnings = chargeWarnings(logs)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.level).toEqual(LogLevel.Warning)
      expect(warnings[0]!.annotations).toEqual({ intent: done.outcome.intent.id, recorded: charged, charged: 0 })
    }).pipe(Effect.provide(sweptWhileRecorded(released)), Effect.provide(capturing(logs)))
  })

  it.effect("warns for a council's answer whose calls' reservations were swept before they were settled", () => {
    const logs: Array<Logged> = []
    const released: Array<number> = []
    return Effect.gen(function*() {
      const scope = yield* setup
      const events = yield* councilTurn(scope)

      expect(released).toHaveLength(1)
      expect(released[0]).toBeGreaterThan(0)
      const done = events.at(-1)!
      assert(done._tag === "Done")
      const recorded = done.outcome.intent.credits_charged
      expect(done.outcome.intent).toMatchObject({ status: "completed", mode: "multi" })
      expect(recorded).toBeGreaterThan(0)
      expect(yield* balance).toBe(10_000)
      expect(yield* held).toBe(0)
      const warnings = chargeWarnings(logs)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.annotations).toEqual({ intent: done.outcome.intent.id, recorded, charged: 0 })
    }).pipe(Effect.provide(sweptWhileRecorded(released)), Effect.provide(capturing(logs)))
  })

  it.effect("does not warn when the ledger took what a single answer's intent records", () => {
    const logs: Array<Logged> = []
    return Effect.gen(function*() {
      const scope = yield* setup
      const usage = { input_tokens: 60, output_tokens: 2 }
      yield* (yield* ScriptedModels).queue(models.standard.id, answer(["Hel", "lo"], usage))

      const events = Chunk.toReadonlyArray(yield* Stream.runCollect((yield* IntentPipeline).submit({ scope, sessionId: null, input: "Say hello" })))

      const done = events.at(-1)!
      assert(done._tag === "Done")
      expect(done.outcome.intent.credits_charged).toBe(costOf(models.standard, usage))
      expect(1000 - (yield* balance)).toBe(done.outcome.intent.credits_charged)
      expect(chargeWarnings(logs)).toEqual([])
    }).pipe(Effect.provide(domain), Effect.provide(capturing(logs)))
  })

  it.effect("does not warn when the ledger took what a council's intent records", () => {
    const logs: Array<Logged> = []
    return Effect.gen(function*() {
      const scope = yield* setup
      const events = yield* councilTurn(scope)

      const done = events.at(-1)!
      assert(done._tag === "Done")
      expect(done.outcome.intent).toMatchObject({ status: "completed", mode: "multi" })
      expect(done.outcome.intent.credits_charged).toBeGreaterThan(0)
      expect(10_000 - (yield* balance)).toBe(done.outcome.intent.credits_charged)
      expect(chargeWarnings(logs)).toEqual([])
    }).pipe(Effect.provide(domain), Effect.provide(capturing(logs)))
  })
})

/** The stored state of Ann's latest intent. */
const latestIntent = Effect.flatMap(IntentRepository, (intents) => intents.listForUser(ann, { limit: 1 })).pipe(
  Effect.map((found) => found[0])
)

describe("the intent pipeline: a client that leaves as execution starts", () => {
  // The consumer stops on the `execution:started` stage, before the answer's stream is pulled:
  // the intent was recorded as executing and must still reach a final state.
  const untilExecution = <E, R>(events: Stream.Stream<PipelineEvent, E, R>) =>
    events.pipe(Stream.takeUntil((event) => event._tag === "Stage" && event.stage === "execution" && event.status === "started"))

  it.effect("a single answer's intent is failed as cancelled, charged nothing, its credits released", () =>
    Effect.gen(function*() {
      const scope = yield* setup
      yield* (yield* ScriptedModels).queue(models.standard.id, answer(["Hel", "lo"], { input_tokens: 60, output_tokens: 2 }))

      const seen = Chunk.toReadonlyArray(yield* Stream.runCollect(untilExecution((yield* IntentPipeline).submit({ scope, sessionId: null, input: "Say hello" }))))

      expect(seen.map(label).at(-1)).toBe("execution:started")
      expect(yield* latestIntent).toMatchObject({ status: "failed", error: { error: "CANCELLED" }, credits_charged: 0 })
      expect(yield* balance).toBe(1000)
      expect(yield* held).toBe(0)
    }).pipe(Effect.provide(domain)))

  it.effect("a council's intent is failed as cancelled, charged nothing, its credits released", () =>
    Effect.gen(function*() {
      const scope = yield* setup
      yield* seatEconomyCouncil

      const seen = Chunk.toReadonlyArray(yield* Stream.runCollect(untilExecution((yield* IntentPipeline).submit({
        scope,
        sessionId: null,
        input: "Which database should a small team start with?",
        request: new Preferences({ mode: "multi", model_tier: "economy" })
      }))))

      expect(seen.map(label).at(-1)).toBe("execution:started")
      expect(yield* latestIntent).toMatchObject({ status: "failed", error: { error: "CANCELLED" }, credits_charged: 0 })
      expect(yield* balance).toBe(10_000)
      expect(yield* held).toBe(0)
    }).pipe(Effect.provide(domain)))
})
