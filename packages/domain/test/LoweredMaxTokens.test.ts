import { assert, describe, expect, it } from "@effect/vitest"
import { AuditLog } from "@huddle/domain/audit/AuditLog"
import { type CreditAccountRef, CreditStore } from "@huddle/domain/credits/CreditStore"
import { Credits } from "@huddle/domain/credits/Credits"
import { type CatalogModel, type ChatMessage, CatalogModel as Model } from "@huddle/domain/models/Model"
import {
  type CallEvent,
  floorOf,
  lowerQuote,
  MeteredCall,
  minimumAnswerTokens,
  type Payer,
  type Quote,
  worstCaseOf
} from "@huddle/domain/models/MeteredCall"
import { CreditStoreState } from "@huddle/testkit/ports/InMemoryCreditStore"
import * as InMemoryDomain from "@huddle/testkit/ports/InMemoryDomain"
import { answer, models, ScriptedModels } from "@huddle/testkit/ports/ScriptedModels"
import { Chunk, Effect, FastCheck as fc, Stream } from "effect"

const ann = "usr_ann"
const org = "org_acme"
const personal: CreditAccountRef = { ownerType: "user", ownerId: ann, pool: "personal" }
const subscription: CreditAccountRef = { ownerType: "org", ownerId: org, pool: "subscription" }
const authority = { via: "api_key", credentialId: "key_ann", actorId: ann } as const
const alone: Payer = { userId: ann, orgId: null, creditFallback: false, authority }
const inOrg: Payer = { userId: ann, orgId: org, creditFallback: true, authority }
const messages: ReadonlyArray<ChatMessage> = [{ role: "user", content: "Say hello" }]
const economy = models.economy

const grant = (account: CreditAccountRef, amount: number) =>
  Effect.flatMap(CreditStore, (store) => store.grant({ account, amount, reason: "test", actorId: null }))
const balanceOf = (account: CreditAccountRef) => Effect.flatMap(CreditStore, (store) => store.balance(account))
const held = Effect.flatMap(CreditStoreState, (state) => state.held)

/** A call to the economy model for `payer`, run to its end; what was held while it answered. */
const runCall = (payer: Payer, maxOutputTokens?: number) =>
  Effect.gen(function*() {
    const metered = yield* MeteredCall
    const candidates = [economy]
    const quote = yield* metered.quote(candidates, messages, { maxOutputTokens })
    return yield* Effect.scoped(Effect.gen(function*() {
      const call = yield* metered.run({ payer, purpose: "test", candidates, quote, messages })
      const heldWhileAnswering = yield* held
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect(call.events))
      return { quote, ran: call.quote, events, heldWhileAnswering }
    }))
  })

const settledOf = (events: ReadonlyArray<CallEvent>) => {
  const last = events.at(-1)
  assert(last?._tag === "Settled")
  return last
}

describe("a small balance lowers max_tokens instead of refusing", () => {
  // eco-a: 10 / 20 credits per 1k tokens, 500 output tokens at most. "Say hello" is about 10
  // input tokens (13 with the margin): the full worst case is 11 credits, the floor's (256 tokens) 6.
  it.effect("answers with the output cap the balance pays for, says so first, and charges within the balance", () =>
    Effect.gen(function*() {
      yield* grant(personal, 8)
      const script = yield* ScriptedModels
      yield* script.queue(economy.id, answer(["Hi"], { input_tokens: 10, output_tokens: 50 }))
      const { events, heldWhileAnswering, quote, ran } = yield* runCall(alone)

      expect(quote.worstCase).toBeGreaterThan(8)
      // The most output tokens whose worst case 8 credits cover: (8000 - 13 × 10) / 20.
      expect(ran).toMatchObject({ maxOutputTokens: 393, loweredFrom: 500 })
      expect(ran.worstCase).toBeLessThanOrEqual(8)
      expect(heldWhileAnswering).toBe(ran.worstCase)
      expect(events[0]).toEqual({ _tag: "Lowered", from: 500, to: 393 })
      expect((yield* script.calls).map((call) => call.maxOutputTokens)).toEqual([393])
      const settled = settledOf(events)
      expect(settled.lowered).toEqual({ _tag: "Lowered", from: 500, to: 393 })
      // 10 × 10 + 50 × 20 = 1,100 thousandths.
      expect(settled.charged).toBe(2)
      expect(yield* balanceOf(personal)).toBe(8 - settled.charged)
      expect(yield* held).toBe(0)
      // Not a denial: the audit log records refusals only.
      expect(yield* Effect.flatMap(AuditLog, (audit) => audit.list({ orgId: null, userId: ann, limit: 10 }))).toEqual([])
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("refuses (402) below the floor, calls no model, and records one denial of the full worst case", () =>
    Effect.gen(function*() {
      yield* grant(personal, 5)
      const script = yield* ScriptedModels
      yield* script.queue(economy.id, answer(["never"]))
      const error = yield* Effect.flip(runCall(alone))

      expect(error._tag).toBe("InsufficientCredits")
      expect(worstCaseOf([economy], 10, minimumAnswerTokens)).toBe(6)
      expect(yield* script.calls).toEqual([])
      expect(yield* balanceOf(personal)).toBe(5)
      expect(yield* held).toBe(0)
      const denied = yield* Effect.flatMap(AuditLog, (audit) => audit.list({ orgId: null, userId: ann, limit: 10 }))
      expect(denied.map((event) => [event.event_type, event.details.amount])).toEqual([["credits.denied", 11]])
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("does not lower a cap the client already set at or below the floor", () =>
    Effect.gen(function*() {
      yield* grant(personal, 4)
      // 200 tokens cost 5 credits at worst: not affordable, and 200 is its own floor.
      const error = yield* Effect.flip(runCall(alone, 200))
      expect(error._tag).toBe("InsufficientCredits")
      expect(yield* balanceOf(personal)).toBe(4)
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("reserves the full worst case, unlowered, when the balance covers it", () =>
    Effect.gen(function*() {
      yield* grant(personal, 11)
      yield* (yield* ScriptedModels).queue(economy.id, answer(["Hi"], { input_tokens: 10, output_tokens: 50 }))
      const { events, quote, ran } = yield* runCall(alone)
      expect(ran).toEqual(quote)
      expect(events.map((event) => event._tag)).not.toContain("Lowered")
      expect(settledOf(events).lowered).toBeUndefined()
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("counts the org pool within the member's cap when the fallback policy allows it", () =>
    Effect.gen(function*() {
      yield* grant(personal, 2)
      yield* grant(subscription, 1000)
      yield* Effect.flatMap(CreditStore, (store) => store.setCap(org, ann, { amount: 7, period: "month" }))
      expect(yield* Effect.flatMap(Credits, (credits) => credits.spendable(inOrg))).toBe(7)
      expect(yield* Effect.flatMap(Credits, (credits) => credits.spendable({ ...inOrg, creditFallback: false }))).toBe(2)

      yield* (yield* ScriptedModels).queue(economy.id, answer(["Hi"], { input_tokens: 10, output_tokens: 50 }))
      const { ran } = yield* runCall(inOrg)
      // (7000 - 130) / 20: the cap, not the pool's 1000, bounds it.
      expect(ran).toMatchObject({ maxOutputTokens: 343, loweredFrom: 500 })
      expect(yield* balanceOf(personal)).toBe(2)
      expect(yield* balanceOf(subscription)).toBe(998)

      // Without the fallback the personal 2 credits are all there is: below the floor.
      const error = yield* Effect.flip(runCall({ ...inOrg, creditFallback: false }))
      expect(error._tag).toBe("InsufficientCredits")
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  const price = fc.integer({ min: 1, max: 200 })
  const catalogModel = fc.record({ input: price, output: price, cap: fc.integer({ min: 1, max: 5000 }) }).map(
    ({ cap, input, output }, i = 0): CatalogModel =>
      new Model({
        id: `m-${input}-${output}-${cap}-${i}`,
        tier: "economy",
        provider: "scripted",
        pricing: { input: input * 1000, output: output * 1000 },
        context_window: 100_000,
        max_output_tokens: cap
      })
  )
  const lowering = fc.record({
    candidates: fc.array(catalogModel, { minLength: 1, maxLength: 3 }),
    estimatedInput: fc.integer({ min: 1, max: 20_000 }),
    asked: fc.integer({ min: 1, max: 8000 }),
    spendable: fc.integer({ min: 0, max: 2000 })
  })

  it.prop("the lowered reservation never exceeds what is spendable, keeps the floor, and is the largest that fits", [lowering], ([{
    asked,
    candidates,
    estimatedInput,
    spendable
  }]) => {
    const maxOutputTokens = Math.min(asked, Math.max(...candidates.map((model) => model.max_output_tokens)))
    const quote: Quote = {
      estimatedInput,
      maxOutputTokens,
      worstCase: worstCaseOf(candidates, estimatedInput, maxOutputTokens),
      floorOutputTokens: floorOf(maxOutputTokens)
    }
    const lowered = lowerQuote(candidates, quote, spendable)
    const floor = floorOf(maxOutputTokens)
    if (lowered === undefined) {
      // Refused only when even the floor is beyond it (or nothing is left to lower).
      expect(floor >= maxOutputTokens || worstCaseOf(candidates, estimatedInput, floor) > spendable).toBe(true)
      return
    }
    expect(lowered.worstCase).toBeLessThanOrEqual(spendable)
    expect(lowered.worstCase).toBe(worstCaseOf(candidates, estimatedInput, lowered.maxOutputTokens))
    expect(lowered.maxOutputTokens).toBeGreaterThanOrEqual(floor)
    expect(lowered.maxOutputTokens).toBeLessThan(maxOutputTokens)
    expect(lowered.loweredFrom).toBe(maxOutputTokens)
    expect(worstCaseOf(candidates, estimatedInput, lowered.maxOutputTokens + 1) > spendable || lowered.maxOutputTokens + 1 === maxOutputTokens)
      .toBe(true)
  })

  const wallet = fc.record({
    personal: fc.nat(30),
    pool: fc.nat(30),
    cap: fc.option(fc.nat(30), { nil: undefined }),
    fallback: fc.boolean(),
    asked: fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined })
  })

  it.effect.prop(
    "whatever the member can spend, a call holds no more than that, and is charged no more than it held",
    [wallet],
    ([w]) =>
      Effect.gen(function*() {
        yield* grant(personal, w.personal)
        yield* grant(subscription, w.pool)
        if (w.cap !== undefined) yield* Effect.flatMap(CreditStore, (store) => store.setCap(org, ann, { amount: w.cap!, period: "total" }))
        const payer: Payer = { ...inOrg, creditFallback: w.fallback }
        // What one reservation could take, worked out here from the wallet, not by the code under test.
        const orgShare = w.fallback ? Math.min(w.pool, w.cap ?? Infinity) : 0
        const spendable = Math.max(w.personal, orgShare)
        expect(yield* Effect.flatMap(Credits, (credits) => credits.spendable(payer))).toBe(spendable)

        yield* (yield* ScriptedModels).queue(economy.id, answer(["Hi there"], { input_tokens: 10, output_tokens: 600 }))
        const result = yield* Effect.either(runCall(payer, w.asked))
        const total = (yield* balanceOf(personal)) + (yield* balanceOf(subscription))
        expect(yield* held).toBe(0)
        if (result._tag === "Left") {
          expect(result.left._tag).toBe("InsufficientCredits")
          expect(total).toBe(w.personal + w.pool)
          return
        }
        const { events, heldWhileAnswering, quote, ran } = result.right
        expect(heldWhileAnswering).toBeLessThanOrEqual(spendable)
        expect(heldWhileAnswering).toBe(ran.worstCase)
        expect(ran.maxOutputTokens).toBeGreaterThanOrEqual(floorOf(quote.maxOutputTokens))
        const settled = settledOf(events)
        expect(settled.charged).toBeLessThanOrEqual(heldWhileAnswering)
        expect(total).toBe(w.personal + w.pool - settled.charged)
        expect(settled.lowered === undefined).toBe(ran.loweredFrom === undefined)
      }).pipe(Effect.provide(InMemoryDomain.layer())),
    { fastCheck: { numRuns: 80 } }
  )
})
