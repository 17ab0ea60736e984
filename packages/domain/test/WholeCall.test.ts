import { describe, expect, it } from "@effect/vitest"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { costOf, Usage } from "@huddle/domain/models/Model"
import { inputMargin, MeteredCall, type Payer } from "@huddle/domain/models/MeteredCall"
import { CreditStoreState } from "@huddle/testkit/ports/InMemoryCreditStore"
import * as InMemoryDomain from "@huddle/testkit/ports/InMemoryDomain"
import { models } from "@huddle/testkit/ports/ScriptedModels"
import { Deferred, Effect, Exit, Fiber } from "effect"

const ann = "usr_ann"
const personal = { ownerType: "user", ownerId: ann, pool: "personal" } as const
const payer: Payer = { userId: ann, orgId: null, creditFallback: false, authority: { via: "api_key", credentialId: "key_ann", actorId: ann } }

const grant = (amount: number) => Effect.flatMap(CreditStore, (store) => store.grant({ account: personal, amount, reason: "test", actorId: null }))
const balance = Effect.flatMap(CreditStore, (store) => store.balance(personal))
const held = Effect.flatMap(CreditStoreState, (state) => state.held)

const model = models.economy
const estimatedInput = 400
const worstCase = costOf(model, { input_tokens: Math.ceil(estimatedInput * inputMargin), output_tokens: 0 })

describe("a whole metered call (an embedding)", () => {
  it.effect("holds the worst case at the estimated input while it runs, then charges the reported usage once", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const usage = new Usage({ input_tokens: 350, output_tokens: 0 })
      let heldDuring = 0
      const state = yield* CreditStoreState
      const answered = yield* (yield* MeteredCall).whole({
        payer,
        purpose: "test",
        model,
        estimatedInput,
        call: Effect.map(state.held, (amount) => {
          heldDuring = amount
          return { value: "vectors", usage }
        })
      })
      expect(heldDuring).toBe(worstCase)
      expect(answered.value).toBe("vectors")
      expect(answered.settled.charged).toBe(costOf(model, usage))
      expect(1000 - (yield* balance)).toBe(costOf(model, usage))
      expect(yield* held).toBe(0)
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("charges nothing when the call fails or is interrupted, and refuses (402) a payer who cannot cover the worst case", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const metered = yield* MeteredCall
      const failed = yield* Effect.exit(metered.whole({ payer, purpose: "test", model, estimatedInput, call: Effect.fail("upstream down" as const) }))
      expect(failed).toEqual(Exit.fail("upstream down"))

      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(metered.whole({
        payer,
        purpose: "test",
        model,
        estimatedInput,
        call: Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
      }))
      yield* Deferred.await(started)
      expect(yield* held).toBe(worstCase)
      yield* Fiber.interrupt(fiber)
      expect(yield* held).toBe(0)
      expect(yield* balance).toBe(1000)

      const poor = yield* Effect.flip(metered.whole({
        payer,
        purpose: "test",
        model,
        estimatedInput: 10_000_000,
        call: Effect.succeed({ value: 0, usage: new Usage({ input_tokens: 1, output_tokens: 0 }) })
      }))
      expect(poor._tag).toBe("InsufficientCredits")
      expect(yield* balance).toBe(1000)
    }).pipe(Effect.provide(InMemoryDomain.layer())))
})
