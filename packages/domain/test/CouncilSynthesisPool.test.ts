/**
 * The chair weighs every answer given: a participant dropped after its proposal (its critique
 * call failed) is no longer asked anything, but its proposal still reaches the synthesis; a
 * participant that gave up its answer in the critique still has it shown as its first position.
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

const grant = Effect.flatMap(CreditStore, (store) =>
  store.grant({ account: { ownerType: "user", ownerId: ann, pool: "personal" }, amount: 1_000_000, reason: "test", actorId: null }))

/** A council of the three scripted models, to its end; the prompts the chair was given. */
const runCouncil = Effect.gen(function*() {
  const script = yield* ScriptedModels
  const council = yield* Council
  const plan = yield* council.plan({ models: [models.economy, models.economyDear, models.standard], messages })
  const events = yield* Effect.scoped(Effect.gen(function*() {
    const budget = yield* (yield* MeteredCall).budget(payer, "test", plan.worstCase)
    return yield* Stream.runCollect(council.run({ plan, payer, purpose: "test", budget, messages }))
  }))
  const result = Chunk.toReadonlyArray(events).map(resultOf).find((r) => r !== undefined)
  assert(result?._tag === "Council")
  const synthesis = (yield* script.calls).filter((call) => Protocol.roundOf(call.messages) === "synthesis")
  return { report: result.report, synthesis }
})

const critique = (position: string, changed: boolean) =>
  `CRITIQUE: fine.\nPOSITION: ${position}\nCHANGED: ${changed ? "yes" : "no"}\nREASON: ${changed ? "most of you hold it" : "simplest"}.`
const endorse = "{\"vote\": \"endorse\", \"rationale\": \"agreed\"}"

describe("the council's synthesis", () => {
  it.effect("shows the chair the proposal of a participant dropped in the critique round", () =>
    Effect.gen(function*() {
      yield* grant
      const script = yield* ScriptedModels
      const postgres = critique("Use Postgres as the queue.", false)
      yield* script.queue(models.economy.id, say("POSITION: Use Postgres as the queue.\nOne store."), say(postgres),
        say("POSITION: Use Postgres as the queue.\nConsensus."), say(endorse))
      yield* script.queue(models.economyDear.id, say("POSITION: Use Postgres as the queue.\nFewer parts."), say(postgres), say(endorse))
      yield* script.queue(models.standard.id, say("POSITION: Use Kafka for the queue.\nReplayable."), failBefore())

      const { report, synthesis } = yield* runCouncil
      expect(report.dropped.map((d) => [d.seat, d.round])).toEqual([[3, "critique"]])

      expect(synthesis).toHaveLength(1)
      const work = synthesis[0]!.messages.at(-1)!.content
      expect(work).toContain("--- Participant B ---\nFirst position: Use Kafka for the queue.\nPosition now: Use Kafka for the queue.")
      expect(work).toContain("Replayable.")
      // Dropped, it is asked nothing more.
      const asked = (yield* script.calls).filter((call) => call.model.id === models.standard.id)
      expect(asked.map((call) => Protocol.roundOf(call.messages))).toEqual(["proposals", "critique"])
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("shows the chair the first position of a participant that gave it up in the critique, beside its position now", () =>
    Effect.gen(function*() {
      yield* grant
      const script = yield* ScriptedModels
      yield* script.queue(models.economy.id, say("POSITION: Use Postgres as the queue.\nOne store."), say(critique("Use Postgres as the queue.", false)),
        say("POSITION: Use Postgres as the queue.\nConsensus."), say(endorse))
      yield* script.queue(models.economyDear.id, say("POSITION: Use Postgres as the queue.\nFewer parts."),
        say(critique("Use Postgres as the queue.", false)), say(endorse))
      yield* script.queue(models.standard.id, say("POSITION: Use Kafka for the queue.\nReplayable."),
        say(critique("Use Postgres as the queue.", true)), say(endorse))

      const { report, synthesis } = yield* runCouncil
      expect(report.participants[2]).toMatchObject({ initial_position: "Use Kafka for the queue.", position: "Use Postgres as the queue.", changed: true })
      expect(synthesis).toHaveLength(1)
      const work = synthesis[0]!.messages.at(-1)!.content
      // Everyone holds Postgres now, but the answer given up under the majority is still there.
      expect(work).toContain("--- Participant B ---\nFirst position: Use Kafka for the queue.\nPosition now: Use Postgres as the queue.")
      expect(work).toContain("--- Your own ---\nFirst position: Use Postgres as the queue.\nPosition now: Use Postgres as the queue.")
    }).pipe(Effect.provide(InMemoryDomain.layer())))
})
