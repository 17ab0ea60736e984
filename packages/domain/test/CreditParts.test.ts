/**
 * Parts of a reservation (`Credits.carve`) over the in-memory store: whatever the sequence of
 * carves, settlements and releases, no credit is made or lost, and each part charges at most what
 * it holds.
 */
import { describe, expect, it } from "@effect/vitest"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import * as Credits from "@huddle/domain/credits/Credits"
import { CreditStoreState } from "@huddle/testkit/ports/InMemoryCreditStore"
import * as InMemoryCreditStore from "@huddle/testkit/ports/InMemoryCreditStore"
import * as InMemoryPorts from "@huddle/testkit/ports/InMemoryPorts"
import { Effect, FastCheck as fc, Layer, Option } from "effect"

const ann = "usr_ann"
const org = "org_acme"
const authority = { via: "api_key", credentialId: "key_ann", actorId: ann } as const

const layer = () =>
  Credits.layer.pipe(
    Layer.provideMerge(Layer.merge(InMemoryCreditStore.layer(), InMemoryPorts.auditLog)),
    Layer.provide(InMemoryPorts.ids)
  )

type Op =
  | { readonly _tag: "reserve"; readonly amount: number }
  | { readonly _tag: "carve"; readonly index: number; readonly amount: number }
  | { readonly _tag: "settle"; readonly index: number; readonly actual: number }
  | { readonly _tag: "release"; readonly index: number }

// Amounts are not always integers: a carve rounds up, as a reservation does.
const amount = fc.oneof(fc.integer({ min: 0, max: 60 }), fc.double({ min: 0, max: 60, noNaN: true }))

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ _tag: fc.constant("reserve" as const), amount: fc.integer({ min: 1, max: 80 }) }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("carve" as const), index: fc.nat(15), amount }), weight: 4 },
  { arbitrary: fc.record({ _tag: fc.constant("settle" as const), index: fc.nat(15), actual: fc.integer({ min: 0, max: 90 }) }), weight: 2 },
  { arbitrary: fc.record({ _tag: fc.constant("release" as const), index: fc.nat(15) }), weight: 1 }
)

describe("parts of a reservation", () => {
  it.effect.prop(
    "conserve credits: balance + held + charged = what was granted, and the pool's spending is what is held or charged",
    [fc.integer({ min: 0, max: 200 }), fc.boolean(), fc.array(op, { minLength: 1, maxLength: 25 })],
    ([initial, inOrg, ops]) =>
      Effect.gen(function*() {
        const credits = yield* Credits.Credits
        const store = yield* CreditStore
        const state = yield* CreditStoreState
        // In an org context the member has no personal credits: everything comes from the pool.
        const account = inOrg
          ? { ownerType: "org", ownerId: org, pool: "subscription" } as const
          : { ownerType: "user", ownerId: ann, pool: "personal" } as const
        if (initial > 0) yield* store.grant({ account, amount: initial, reason: "test", actorId: null })

        // What each reservation (made or carved) still holds in the model; null once closed.
        const parts: Array<{ readonly reservation: Credits.Reservation; holds: number | null }> = []
        let balance = initial
        let charged = 0
        for (const step of ops) {
          if (step._tag === "reserve") {
            const outcome = yield* Effect.either(
              credits.reserve({ userId: ann, orgId: inOrg ? org : null, amount: step.amount, creditFallback: true, purpose: "run", authority })
            )
            expect(outcome._tag).toBe(balance >= step.amount ? "Right" : "Left")
            if (outcome._tag === "Right") {
              balance -= step.amount
              parts.push({ reservation: outcome.right, holds: step.amount })
            }
            continue
          }
          const part = parts[step.index % Math.max(1, parts.length)]
          if (part === undefined) continue
          if (step._tag === "carve") {
            const wanted = Math.max(1, Math.ceil(step.amount))
            const child = yield* credits.carve(part.reservation, step.amount)
            const expected = part.holds !== null && part.holds >= wanted
            expect(Option.isSome(child)).toBe(expected)
            if (Option.isSome(child)) {
              expect(child.value.amount).toBe(wanted)
              expect(child.value.source).toBe(part.reservation.source)
              part.holds! -= wanted
              parts.push({ reservation: child.value, holds: wanted })
            }
          } else if (step._tag === "settle") {
            const result = yield* credits.settle(part.reservation, step.actual)
            const expected = part.holds === null ? 0 : Math.min(step.actual, part.holds)
            expect(result).toBe(expected)
            if (part.holds !== null) {
              balance += part.holds - expected
              charged += expected
            }
            part.holds = null
          } else {
            yield* credits.release(part.reservation)
            if (part.holds !== null) balance += part.holds
            part.holds = null
          }
        }
        const held = parts.reduce((sum, part) => sum + (part.holds ?? 0), 0)
        expect(yield* store.balance(account)).toBe(balance)
        expect(yield* store.ledgerTotal(account)).toBe(balance)
        expect(yield* state.held).toBe(held)
        expect(balance + held + charged).toBe(initial)
        if (inOrg) {
          const spending = (yield* store.spending(org, [ann])).get(ann)
          expect(spending?.total).toBe(held + charged)
        }
      }).pipe(Effect.provide(layer())),
    { fastCheck: { numRuns: 300 } }
  )
})
