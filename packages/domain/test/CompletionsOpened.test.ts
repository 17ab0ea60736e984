/**
 * `Completions.open` is `Completions.stream` as the effect that opens its pull (decision 0029):
 * what the server's dialects run. The two must be the same answer, charged the same, refused the
 * same way, and a consumer that stops early must still leave nothing held.
 */
import { describe, expect, it } from "@effect/vitest"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { Completions, type Event } from "@huddle/domain/answers/Completions"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { forEachPull, mapOpenedError } from "@huddle/domain/shared/Streams"
import * as InMemoryDomain from "@huddle/testkit/ports/InMemoryDomain"
import { answer, hang, models, ScriptedModels } from "@huddle/testkit/ports/ScriptedModels"
import { Chunk, Effect, Stream } from "effect"

const ann = "usr_ann"
const account = { ownerType: "user", ownerId: ann, pool: "personal" } as const
const domain = () => InMemoryDomain.layer({ members: [] })
const usage = { input_tokens: 400, output_tokens: 300 }
const ask = { model: "economy", messages: [{ role: "user" as const, content: "Count to three" }] }

const grant = (amount: number) =>
  Effect.flatMap(CreditStore, (store) => store.grant({ account, amount, reason: "test", actorId: null }))
const balance = Effect.flatMap(CreditStore, (store) => store.balance(account))
const scope = Effect.flatMap(RequestScopes, (scopes) => scopes.resolve(InMemoryDomain.principal(ann), {}))

/** What a client sees of the events: their kinds, the text, and the charge. */
const seen = (events: ReadonlyArray<Event>) => ({
  tags: events.map((event) => event._tag),
  text: events.flatMap((event) => (event._tag === "Delta" ? [event.text] : [])).join(""),
  charged: events.flatMap((event) => (event._tag === "Settled" ? [event.charged] : []))
})

const viaOpen = (request: typeof ask) =>
  Effect.gen(function*() {
    const completions = yield* Completions
    const events: Array<Event> = []
    yield* forEachPull(completions.open({ ...request, scope: yield* scope }), (chunk) => void events.push(...chunk))
    return events
  })

const viaStream = (request: typeof ask) =>
  Effect.gen(function*() {
    const completions = yield* Completions
    return Chunk.toReadonlyArray(yield* Stream.runCollect(completions.stream({ ...request, scope: yield* scope })))
  })

describe("a completion opened as a pull", () => {
  it.effect("answers and charges as its stream does", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const script = yield* ScriptedModels
      yield* script.queue(models.economy.id, answer(["one ", "two ", "three"], usage), answer(["one ", "two ", "three"], usage))

      const streamed = seen(yield* viaStream(ask))
      const afterStream = yield* balance
      const opened = seen(yield* viaOpen(ask))
      const afterOpen = yield* balance

      expect(opened).toEqual(streamed)
      expect(opened.text).toBe("one two three")
      expect(opened.charged).toHaveLength(1)
      expect(opened.charged[0]).toBeGreaterThan(0)
      expect(1000 - afterStream).toBe(streamed.charged[0])
      expect(afterStream - afterOpen).toBe(opened.charged[0])
    }).pipe(Effect.provide(domain())))

  it.effect("is refused before any model is called when the credits cannot cover it, and takes nothing", () =>
    Effect.gen(function*() {
      const script = yield* ScriptedModels
      yield* script.queue(models.economy.id, answer(["never"], usage))

      const error = yield* Effect.flip(viaOpen(ask))

      expect(error._tag).toBe("InsufficientCredits")
      expect(yield* script.calls).toEqual([])
      expect(yield* balance).toBe(0)
    }).pipe(Effect.provide(domain())))

  it.effect("maps its failures, before and while it streams, with mapOpenedError", () =>
    Effect.gen(function*() {
      const completions = yield* Completions
      const opened = mapOpenedError(completions.open({ ...ask, scope: yield* scope }), (error) => `mapped ${error._tag}`)
      const error = yield* Effect.flip(forEachPull(opened, () => undefined))
      expect(error).toBe("mapped InsufficientCredits")
    }).pipe(Effect.provide(domain())))

  it.effect("leaves nothing held when its consumer stops at the first output", () =>
    Effect.gen(function*() {
      yield* grant(1000)
      const script = yield* ScriptedModels
      // An answer that never ends: only the consumer stopping ends the call.
      yield* script.queue(models.economy.id, hang(["one "]))
      const completions = yield* Completions
      const stop = yield* Effect.flip(forEachPull(
        completions.open({ ...ask, scope: yield* scope }),
        (chunk) => Chunk.some(chunk, (event) => event._tag === "Delta") ? Effect.fail("enough" as const) : undefined
      ))
      expect(stop).toBe("enough")
      // Charged for what was produced (an estimate, no usage reported), the rest given back.
      const spent = 1000 - (yield* balance)
      expect(spent).toBeGreaterThan(0)
      expect(spent).toBeLessThan(10)
      expect(yield* Effect.flatMap(CreditStore, (store) => store.ledgerTotal(account))).toBe(yield* balance)
    }).pipe(Effect.provide(domain())))
})
