/**
 * The chair weighs every answer given: a participant dropped after its proposal (its critique
 * call failed) is no longer asked anything, but its proposal still reaches the synthesis.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Council, resultOf } from "@huddle/domain/council/Council"
import * as Protocol from "@huddle/domain/council/Protocol"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import type { ChatMessage } from "@huddle/domain/models/Model"
import { MeteredCall, type Payer } from "@huddle/domain/models/MeteredCall"
import * as InMemoryDomain from "@huddle/testkit/ports/InMemoryDomain"
import { answer, failBefore, models, ScriptedModels } from "@huddle/testkit/ports/ScriptedModels"
import { Chunk, Effect, Stream } from "effect"

const ann = "usr_ann"
const payer: Payer = { userId: ann, orgId: null, creditFallback: false, authority: { via: "api_key", credentialId: "key_ann", actorId: ann } }
const messages: ReadonlyArray<ChatMessage> = [{ role: "user", content: "Which queue should we use?" }]
const usage = { input_tokens: 40, output_tokens: 10 }
const say = (text: string) => answer([text], usage)

describe("the council's synthesis", () => {
  it.effect("shows the chair the proposal of a participant dropped in the critique round", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(CreditStore, (store) =>
        store.grant({ account: { ownerType: "user", ownerId: ann, pool: "personal" }, amount: 1_000_000, reason: "test", actorId: null }))
      const script = yield* ScriptedModels
      const critique = "CRITIQUE: fine.\nPOSITION: Use Postgres as the queue.\nCHANGED: no\nREASON: simplest."
      const endorse = "{\"vote\": \"endorse\", \"rationale\": \"agreed\"}"
      yield* script.queue(models.economy.id, say("POSITION: Use Postgres as the queue.\nOne store."), say(critique),
        say("POSITION: Use Postgres as the queue.\nConsensus."), say(endorse))
      yield* script.queue(models.economyDear.id, say("POSITION: Use Postgres as the queue.\nFewer parts."), say(critique), say(endorse))
      yield* script.queue(models.standard.id, say("POSITION: Use Kafka for the queue.\nReplayable."), failBefore())

      const council = yield* Council
      const plan = yield* council.plan({ models: [models.economy, models.economyDear, models.standard], messages })
      const events = yield* Effect.scoped(Effect.gen(function*() {
        const budget = yield* (yield* MeteredCall).budget(payer, "test", plan.worstCase)
        return yield* Stream.runCollect(council.run({ plan, payer, purpose: "test", budget, messages }))
      }))
      const result = Chunk.toReadonlyArray(events).map(resultOf).find((r) => r !== undefined)
      assert(result?._tag === "Council")
      expect(result.report.dropped.map((d) => [d.seat, d.round])).toEqual([[3, "critique"]])

      const synthesis = (yield* script.calls).filter((call) => Protocol.roundOf(call.messages) === "synthesis")
      expect(synthesis).toHaveLength(1)
      const work = synthesis[0]!.messages.at(-1)!.content
      expect(work).toContain("POSITION: Use Kafka for the queue.")
      expect(work).toContain("Replayable.")
      // Dropped, it is asked nothing more.
      const asked = (yield* script.calls).filter((call) => call.model.id === models.standard.id)
      expect(asked.map((call) => Protocol.roundOf(call.messages))).toEqual(["proposals", "critique"])
    }).pipe(Effect.provide(InMemoryDomain.layer())))
})
