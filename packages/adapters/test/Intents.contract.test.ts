/**
 * Intents in storage, on every engine of `TestDatabase.availableEngines()`: a plan round-trips,
 * and a plan stored by an earlier version still reads.
 */
import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { type ChangeFeed, Storage, UlidIds } from "@huddle/adapters"
import { Ids } from "@huddle/domain/shared/Ids"
import { Intent, Plan } from "@huddle/domain/huddle/Intent"
import { EffectiveSettings } from "@huddle/domain/orgs/Policy"
import { IntentRepository } from "@huddle/domain/huddle/IntentRepository"
import { UserRepository } from "@huddle/domain/accounts/UserRepository"
import { RiskFlag } from "@huddle/domain/huddle/RiskFlags"
import { Email, User, UserId } from "@huddle/domain/accounts/User"
import { TestDatabase } from "@huddle/testkit"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Option } from "effect"

addEqualityTesters()

const storageOver = <E>(database: Layer.Layer<SqlClient.SqlClient | ChangeFeed.ChangeFeed, E>) =>
  Storage.layer.pipe(Layer.provideMerge(UlidIds.layer), Layer.provideMerge(database))

const at = DateTime.unsafeMake("2025-03-01T10:00:00.000Z")

const flaggedIntent = Effect.gen(function*() {
  const ids = yield* Ids
  const user = new User({
    id: UserId.make(yield* ids.next("usr")),
    email: Email.make(`intents-${randomBytes(5).toString("hex")}@example.com`),
    created_at: at
  })
  yield* (yield* UserRepository).create(user, "hash")
  const intent = new Intent({
    id: yield* ids.next("int"),
    status: "awaiting_review",
    input: "Drop the users table",
    mode: "single",
    org_id: null,
    session_id: null,
    settings: new EffectiveSettings({
      model_tier: { value: "standard", decided_by: "service_default" },
      risk_tolerance: { value: "low", decided_by: "personal" },
      auto_execute: { value: false, decided_by: "personal" },
      mode: { value: "single", decided_by: "service_default" },
      credit_fallback: { value: true, decided_by: "service_default" }
    }),
    plan: new Plan({
      models: ["offline-standard"],
      max_output_tokens: 1024,
      estimated_input_tokens: 20,
      worst_case_credits: 5,
      temperature: 0.2,
      memories_used: 0,
      history_messages: 0,
      flags: [new RiskFlag({ category: "destructive", match: "Drop the users table" })]
    }),
    output: null,
    models: [],
    usage: null,
    credits_charged: 0,
    error: null,
    created_at: at,
    updated_at: at
  })
  yield* (yield* IntentRepository).insert(intent, { userId: user.id, workspaceId: null })
  return intent
})

for (const engine of TestDatabase.availableEngines()) {
  layer(storageOver(TestDatabase.layer(engine)), { excludeTestServices: true })(`intents in storage on ${engine}`, (it) => {
    it.effect("keep each review flag's category and what matched", () =>
      Effect.gen(function*() {
        const intent = yield* flaggedIntent
        const found = yield* (yield* IntentRepository).find(intent.id)
        expect(Option.map(found, (_) => _.intent.plan?.flags)).toEqual(Option.some(intent.plan?.flags))
      }))

    it.effect("read review flags stored as bare labels as their categories", () =>
      Effect.gen(function*() {
        const intent = yield* flaggedIntent
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE intents SET plan = jsonb_set(plan, '{flags}', '["destructive operation", "money movement"]'::jsonb)
                   WHERE id = ${intent.id}`
        const found = yield* (yield* IntentRepository).find(intent.id)
        expect(Option.map(found, (_) => _.intent.plan?.flags)).toEqual(Option.some([
          new RiskFlag({ category: "destructive", match: "" }),
          new RiskFlag({ category: "money_movement", match: "" })
        ]))
      }))
  })
}
