import { assert, describe, expect, it } from "@effect/vitest"
import { AuditLog } from "@huddle/domain/audit/AuditLog"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { costOf, type ChatMessage } from "@huddle/domain/models/Model"
import { type CallEvent, MeteredCall, type Payer, type Target } from "@huddle/domain/models/MeteredCall"
import { CreditStoreState } from "@huddle/testkit/ports/InMemoryCreditStore"
import * as InMemoryDomain from "@huddle/testkit/ports/InMemoryDomain"
import { answer, failAfter, failBefore, hang, models, ScriptedModels } from "@huddle/testkit/ports/ScriptedModels"
import { Chunk, Deferred, Effect, Either, Exit, FastCheck as fc, Fiber, Stream } from "effect"

const ann = "usr_ann"
const personal = { ownerType: "user", ownerId: ann, pool: "personal" } as const
const payer: Payer = { userId: ann, orgId: null, creditFallback: false, authority: { via: "api_key", credentialId: "key_ann", actorId: ann } }
const messages: ReadonlyArray<ChatMessage> = [{ role: "user", content: "Say hello" }]

const grant = (amount: number) =>
  Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount, reason: "test", actorId: null }))

const balance = Effect.flatMap(CreditStore, (store) => store.balance(personal))
const held = Effect.flatMap(CreditStoreState, (state) => state.held)

const prepare = (target: Target) =>
  Effect.gen(function*() {
    const metered = yield* MeteredCall
    const candidates = yield* metered.candidates(target, undefined)
    const quote = yield* metered.quote(candidates, messages)
    return { candidates, quote }
  })

/**
 * Runs a call to `target` in a scope of its own, to its end or failure. `settle` is the call's,
 * for the test to evaluate after checking the balance: once the scope has closed it should only
 * report what was settled (evaluated first, it would settle a call the scope left open).
 */
const runCall = (target: Target, settleAfter = false) =>
  Effect.gen(function*() {
    const { candidates, quote } = yield* prepare(target)
    const { events, settle } = yield* Effect.scoped(Effect.gen(function*() {
      const call = yield* (yield* MeteredCall).run({ payer, purpose: "test", candidates, quote, messages, settleAfter })
      const events = yield* Stream.runCollect(call.events).pipe(Effect.map(Chunk.toReadonlyArray), Effect.either)
      return { events, settle: call.settle }
    }))
    return { quote, events, settle }
  })

const tags = (events: ReadonlyArray<CallEvent>) => events.map((event) => event._tag)

describe("the metered call", () => {
  it.effect("reserves the worst case before the model answers, then settles to the reported usage", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const usage = { input_tokens: 12, output_tokens: 300 }
      yield* (yield* ScriptedModels).queue(models.economy.id, answer(["Hel", "lo"], usage))
      const { quote, candidates } = yield* prepare({ _tag: "Model", id: models.economy.id })

      const heldWhileAnswering: Array<number> = []
      const events = yield* Effect.scoped(Effect.gen(function*() {
        const call = yield* (yield* MeteredCall).run({ payer, purpose: "test", candidates, quote, messages })
        return yield* call.events.pipe(
          Stream.tap((event): Effect.Effect<void, never, CreditStoreState> =>
            event._tag === "Delta" ? Effect.map(held, (amount) => void heldWhileAnswering.push(amount)) : Effect.void
          ),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray)
        )
      }))

      expect(heldWhileAnswering).toEqual([quote.worstCase, quote.worstCase])
      expect(tags(events)).toEqual(["Answering", "Delta", "Delta", "Finish", "Settled"])
      const settled = events.at(-1)!
      assert(settled._tag === "Settled")
      expect(settled.charged).toBe(costOf(models.economy, usage))
      expect(settled.charged).toBeLessThan(quote.worstCase)
      expect(settled).toMatchObject({ reported: true, consumed: true, usage, model: { id: models.economy.id } })
      expect(1000 - (yield* balance)).toBe(settled.charged)
      expect(yield* held).toBe(0)
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("lets the model's finish reach the caller only once the call is settled (a client takes the finish for the end of the answer)", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const usage = { input_tokens: 12, output_tokens: 30 }
      yield* (yield* ScriptedModels).queue(models.economy.id, answer(["Hel", "lo"], usage))
      const { quote, candidates } = yield* prepare({ _tag: "Model", id: models.economy.id })
      const heldAt: Array<string> = []
      yield* Effect.scoped(Effect.gen(function*() {
        const call = yield* (yield* MeteredCall).run({ payer, purpose: "test", candidates, quote, messages })
        yield* Stream.runForEach(call.events, (event) => Effect.map(held, (amount) => void heldAt.push(`${event._tag}:${amount}`)))
      }))
      expect(heldAt).toEqual([
        `Answering:${quote.worstCase}`,
        `Delta:${quote.worstCase}`,
        `Delta:${quote.worstCase}`,
        "Finish:0",
        "Settled:0"
      ])
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("with settleAfter, prices the call at its end without charging; the caller settles it, or releases it, or the scope settles it", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const usage = { input_tokens: 12, output_tokens: 300 }
      const cost = costOf(models.economy, usage)
      const { quote, candidates } = yield* prepare({ _tag: "Model", id: models.economy.id })
      /** One call to its end; `then` runs with the call, in its scope, before the scope closes. */
      const run = <A>(then: (call: { readonly settle: Effect.Effect<{ readonly charged: number }>; readonly release: Effect.Effect<{ readonly charged: number }> }) => Effect.Effect<A>) =>
        Effect.gen(function*() {
          yield* (yield* ScriptedModels).queue(models.economy.id, answer(["Hel", "lo"], usage))
          return yield* Effect.scoped(Effect.gen(function*() {
            const call = yield* (yield* MeteredCall).run({ payer, purpose: "test", candidates, quote, messages, settleAfter: true })
            const events = Chunk.toReadonlyArray(yield* Stream.runCollect(call.events))
            const last = events.at(-1)!
            assert(last._tag === "Settled")
            // Priced, not charged: the worst case is still held, as it was while the model answered.
            expect(last.charged).toBe(cost)
            expect(yield* held).toBe(quote.worstCase)
            expect(yield* balance).toBe(before - quote.worstCase)
            return yield* then(call)
          }))
        })
      let before = 1000

      const settled = yield* run((call) => call.settle)
      expect(settled.charged).toBe(cost)
      expect(yield* balance).toBe(before - cost)
      before -= cost

      const released = yield* run((call) => Effect.zipLeft(call.release, call.settle))
      expect(released.charged).toBe(0)
      expect(yield* balance).toBe(before)

      // Neither: closing the scope settles, as for any call.
      yield* run(() => Effect.void)
      expect(yield* balance).toBe(before - cost)
      expect(yield* held).toBe(0)
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("releases everything when the model fails before any output", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      yield* (yield* ScriptedModels).queue(models.economy.id, failBefore())
      const { events, settle } = yield* runCall({ _tag: "Model", id: models.economy.id })

      expect(Either.getLeft(events).pipe((error) => error._tag === "Some" && error.value._tag)).toBe("UpstreamUnavailable")
      expect(yield* balance).toBe(1000)
      expect(yield* held).toBe(0)
      expect(yield* settle).toMatchObject({ consumed: false, charged: 0 })
      const ledger = yield* Effect.flatMap(CreditStore, (store) => store.ledger(personal, { limit: 10 }))
      expect(ledger.map((entry) => entry.kind)).toEqual(["release", "reserve", "grant"])
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("charges the estimate of what was consumed when the model fails after output without usage", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      yield* (yield* ScriptedModels).queue(models.economy.id, failAfter(["abcdefgh", "ijkl"]))
      const { events, quote, settle } = yield* runCall({ _tag: "Model", id: models.economy.id })

      assert(Either.isLeft(events))
      expect(events.left).toMatchObject({ _tag: "UpstreamUnavailable", message: expect.stringContaining("failed mid-answer") })
      // 12 characters of output are 3 tokens; the input is the quote's estimate.
      const estimate = { input_tokens: quote.estimatedInput, output_tokens: 3 }
      expect(1000 - (yield* balance)).toBe(costOf(models.economy, estimate))
      expect(yield* held).toBe(0)
      expect(yield* settle).toMatchObject({ reported: false, consumed: true, usage: estimate, charged: costOf(models.economy, estimate) })
      expect(costOf(models.economy, estimate)).toBeGreaterThan(0)
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("charges the reported usage when the model reported it before failing", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const usage = { input_tokens: 20, output_tokens: 100 }
      yield* (yield* ScriptedModels).queue(models.economy.id, failAfter(["abc"], usage))
      const { events, settle } = yield* runCall({ _tag: "Model", id: models.economy.id })

      expect(Either.isLeft(events)).toBe(true)
      expect(1000 - (yield* balance)).toBe(costOf(models.economy, usage))
      expect(yield* held).toBe(0)
      expect(yield* settle).toMatchObject({ reported: true, usage, charged: costOf(models.economy, usage) })
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("settles for what was consumed when the consumer is interrupted mid-stream, leaving nothing held", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const script = yield* ScriptedModels
      yield* script.queue(models.economy.id, hang(["abcd", "efgh"]))
      const { candidates, quote } = yield* prepare({ _tag: "Model", id: models.economy.id })

      const allSeen = yield* Deferred.make<void>()
      let seen = ""
      const consumer = yield* Effect.scoped(Effect.gen(function*() {
        const call = yield* (yield* MeteredCall).run({ payer, purpose: "test", candidates, quote, messages })
        yield* Stream.runForEach(call.events, (event) => {
          if (event._tag !== "Delta") return Effect.void
          seen += event.text
          return seen.length === 8 ? Deferred.succeed(allSeen, undefined) : Effect.void
        })
      })).pipe(Effect.fork)
      yield* Deferred.await(allSeen)
      expect(yield* held).toBe(quote.worstCase)

      const exit = yield* Fiber.interrupt(consumer)
      expect(Exit.isInterrupted(exit)).toBe(true)
      const estimate = { input_tokens: quote.estimatedInput, output_tokens: 2 }
      expect(1000 - (yield* balance)).toBe(costOf(models.economy, estimate))
      expect(yield* held).toBe(0)
      const reservations = yield* Effect.flatMap(CreditStoreState, (state) => state.reservations)
      expect(reservations.map((reservation) => [reservation.status, reservation.actual])).toEqual([
        ["settled", costOf(models.economy, estimate)]
      ])
      // The settle row records the tokens it charged for: estimated, since the model reported none.
      expect(reservations[0]!.tokens).toEqual({ inputTokens: estimate.input_tokens, outputTokens: estimate.output_tokens })
      // The upstream request was aborted with the stream.
      expect(yield* script.open).toBe(0)
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("falls back to the next candidate when the first fails before output, at the second's price", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const usage = { input_tokens: 12, output_tokens: 300 }
      const script = yield* ScriptedModels
      yield* script.queue(models.economy.id, failBefore())
      yield* script.queue(models.economyDear.id, answer(["Hi"], usage))
      const { events, quote } = yield* runCall({ _tag: "Tier", tier: "economy" })

      assert(Either.isRight(events))
      const all = events.right
      expect(all.flatMap((event) => event._tag === "Answering" ? [event.model.id] : [])).toEqual([models.economy.id, models.economyDear.id])
      expect(all.find((event) => event._tag === "AttemptFailed")).toMatchObject({ model: { id: models.economy.id }, willRetry: false })
      const settled = all.at(-1)!
      assert(settled._tag === "Settled")
      expect(settled.model.id).toBe(models.economyDear.id)
      expect(settled.charged).toBe(costOf(models.economyDear, usage))
      expect(settled.charged).not.toBe(costOf(models.economy, usage))
      // The reservation covered the dearer of the two.
      expect(quote.worstCase).toBeGreaterThanOrEqual(costOf(models.economyDear, { input_tokens: quote.estimatedInput, output_tokens: 500 }))
      expect(1000 - (yield* balance)).toBe(settled.charged)
      expect((yield* script.calls).map((call) => call.model.id)).toEqual([models.economy.id, models.economyDear.id])
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("charges a failed attempt's reported usage at its own model's price, not the fallback's", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const failedUsage = { input_tokens: 40, output_tokens: 0 }
      const usage = { input_tokens: 12, output_tokens: 300 }
      const script = yield* ScriptedModels
      // Usage reported, then a broken answer before any output: the router falls back.
      yield* script.queue(models.economy.id, failAfter([], failedUsage))
      yield* script.queue(models.economyDear.id, answer(["Hi"], usage))
      const { events } = yield* runCall({ _tag: "Tier", tier: "economy" })

      assert(Either.isRight(events))
      const settled = events.right.at(-1)!
      assert(settled._tag === "Settled")
      expect(settled.usage).toMatchObject(usage)
      expect(settled.charged).toBe(costOf(models.economy, failedUsage) + costOf(models.economyDear, usage))
      // The tokens recorded with the charge are the answer's (the failed attempt's are priced, not counted).
      const reservations = yield* Effect.flatMap(CreditStoreState, (state) => state.reservations)
      expect(reservations.map((reservation) => reservation.tokens)).toEqual([{ inputTokens: usage.input_tokens, outputTokens: usage.output_tokens }])
      expect(1000 - (yield* balance)).toBe(settled.charged)
      expect(yield* held).toBe(0)
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("serves a tier above the policy's ceiling at the ceiling, and refuses a model above it", () =>
    Effect.gen(function*() {
      const metered = yield* MeteredCall
      const ids = (target: Target, ceiling: "economy" | "standard" | undefined) =>
        Effect.map(metered.candidates(target, ceiling), (found) => found.map((model) => model.id))

      expect(yield* ids({ _tag: "Tier", tier: "premium" }, "economy")).toEqual([models.economy.id, models.economyDear.id])
      expect(yield* ids({ _tag: "Tier", tier: "premium" }, undefined)).toEqual([models.premium.id])
      expect(yield* ids({ _tag: "Model", id: models.standard.id }, "standard")).toEqual([models.standard.id])

      const aboveModel = yield* Effect.flip(ids({ _tag: "Model", id: models.premium.id }, "standard"))
      expect(aboveModel._tag).toBe("PolicyViolation")
      expect(aboveModel.message).toContain("up to the standard tier")
      const abovePlan = yield* Effect.flip(ids({ _tag: "Candidates", ids: [models.economy.id, models.premium.id] }, "economy"))
      expect(abovePlan._tag).toBe("PolicyViolation")

      for (const ceiling of [undefined, "economy"] as const) {
        const unknown = yield* Effect.flip(ids({ _tag: "Model", id: "x" }, ceiling))
        expect(unknown).toMatchObject({ _tag: "NotFound", message: "The model `x` does not exist or you do not have access to it." })
      }
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("fails with InsufficientCredits before any provider is called", () =>
    Effect.gen(function*() {
      yield* grant(5)
      const script = yield* ScriptedModels
      yield* script.queue(models.standard.id, answer(["never"]))
      const { candidates, quote } = yield* prepare({ _tag: "Model", id: models.standard.id })
      expect(quote.worstCase).toBeGreaterThan(5)

      const error = yield* Effect.flip(Effect.scoped(Effect.gen(function*() {
        const call = yield* (yield* MeteredCall).run({ payer, purpose: "test", candidates, quote, messages })
        return yield* Stream.runDrain(call.events)
      })))
      expect(error._tag).toBe("InsufficientCredits")
      expect(yield* script.calls).toEqual([])
      expect(yield* balance).toBe(5)
      expect(yield* held).toBe(0)
      const denied = yield* Effect.flatMap(AuditLog, (audit) => audit.list({ orgId: null, userId: ann, limit: 10 }))
      expect(denied.map((event) => [event.event_type, event.details.amount])).toEqual([["credits.denied", quote.worstCase]])
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  const scripted = fc.record({
    deltas: fc.array(fc.string({ maxLength: 40 }), { maxLength: 8 }),
    usage: fc.option(fc.record({ input_tokens: fc.nat(3000), output_tokens: fc.nat(3000) }), { nil: undefined }),
    fails: fc.boolean()
  })

  it.effect.prop(
    "whatever the model answers, nothing stays held, the balance drops by exactly the charge, and never beyond the quote; a priced end (settleAfter) says what settling charges",
    [scripted, fc.boolean()],
    ([{ deltas, fails, usage }, settleAfter]) =>
      Effect.gen(function*() {
        yield* grant(1000)
        yield* (yield* ScriptedModels).queue(models.economy.id, fails ? failAfter(deltas, usage) : answer(deltas, usage))
        // With settleAfter, the scope's close settles (the caller did not): the same charge.
        const { events, quote, settle } = yield* runCall({ _tag: "Model", id: models.economy.id }, settleAfter)
        // Read before `settle`: the scope's close must have settled already.
        const heldAfter = yield* held
        const taken = 1000 - (yield* balance)
        const settled = yield* settle

        expect(heldAfter).toBe(0)
        expect(taken).toBe(settled.charged)
        expect(settled.charged).toBeLessThanOrEqual(quote.worstCase)
        // What was consumed: the reported counts, else the estimate once there was output, else nothing.
        const chars = deltas.join("").length
        const consumed = usage ?? (chars > 0 ? { input_tokens: quote.estimatedInput, output_tokens: Math.ceil(chars / 4) } : undefined)
        expect(settled.charged).toBe(consumed === undefined ? 0 : Math.min(quote.worstCase, costOf(models.economy, consumed)))
        if (Either.isRight(events)) expect(events.right.at(-1)).toEqual(settled)
        else expect(fails).toBe(true)
      }).pipe(Effect.provide(InMemoryDomain.layer())),
    { fastCheck: { numRuns: 60 } }
  )
})
