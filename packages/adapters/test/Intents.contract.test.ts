/**
 * Intents in storage, on every engine of `TestDatabase.availableEngines()`: a plan round-trips,
 * a plan stored by an earlier version still reads, and an org's intents list a page at a time
 * from an index in their order.
 */
import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { type ChangeFeed, Storage, UlidIds } from "@huddle/adapters"
import { Ids } from "@huddle/domain/shared/Ids"
import { Intent, Plan } from "@huddle/domain/huddle/Intent"
import { EffectiveSettings } from "@huddle/domain/settings/Policy"
import { IntentRepository } from "@huddle/domain/huddle/IntentRepository"
import * as IntentExpiry from "@huddle/domain/huddle/IntentExpiry"
import { UserRepository } from "@huddle/domain/accounts/UserRepository"
import { RiskFlag } from "@huddle/domain/huddle/RiskFlags"
import { Email, User, UserId } from "@huddle/domain/identity/User"
import { TestDatabase } from "@huddle/testkit"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Option } from "effect"

addEqualityTesters()

const storageOver = <E>(database: Layer.Layer<SqlClient.SqlClient | ChangeFeed.ChangeFeed, E>) =>
  Storage.layer.pipe(Layer.provideMerge(UlidIds.layer), Layer.provideMerge(database))

const at = DateTime.unsafeMake("2025-03-01T10:00:00.000Z")

const newUser = Effect.gen(function*() {
  const user = new User({
    id: UserId.make(yield* (yield* Ids).next("usr")),
    email: Email.make(`intents-${randomBytes(5).toString("hex")}@example.com`),
    created_at: at
  })
  yield* (yield* UserRepository).create(user, "hash")
  return user
})

/** An intent of `user` in storage, as the pipeline writes one it planned. */
const storedIntent = (user: User, options: { readonly input: string; readonly orgId: string | null; readonly status: Intent["status"] }) =>
  Effect.gen(function*() {
    const intent = new Intent({
      id: yield* (yield* Ids).next("int"),
      status: options.status,
      input: options.input,
      mode: "single",
      org_id: options.orgId,
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
        flags: [new RiskFlag({ category: "destructive", match: options.input })]
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

const newOrg = (creator: User) =>
  Effect.gen(function*() {
    const id = yield* (yield* Ids).next("org")
    yield* (yield* SqlClient.SqlClient)`INSERT INTO organizations (id, name, slug, created_by, created_at)
                                          VALUES (${id}, ${id}, ${id}, ${creator.id}, now())`
    return id
  })

const flaggedIntent = Effect.gen(function*() {
  const user = yield* newUser
  return yield* storedIntent(user, { input: "Drop the users table", orgId: null, status: "awaiting_review" })
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

    it.effect("list an org's intents, every member's, newest first a page at a time, each with its submitter", () =>
      Effect.gen(function*() {
        const [ann, bob] = [yield* newUser, yield* newUser]
        const [orgId, otherOrgId] = [yield* newOrg(ann), yield* newOrg(ann)]
        const first = yield* storedIntent(ann, { input: "first", orgId, status: "awaiting_review" })
        const second = yield* storedIntent(bob, { input: "second", orgId, status: "completed" })
        const third = yield* storedIntent(bob, { input: "third", orgId, status: "awaiting_review" })
        yield* storedIntent(ann, { input: "personal", orgId: null, status: "awaiting_review" })
        yield* storedIntent(ann, { input: "elsewhere", orgId: otherOrgId, status: "awaiting_review" })
        const repo = yield* IntentRepository
        const listed = (rows: ReadonlyArray<{ readonly intent: Intent; readonly submitter: { readonly email: string } }>) =>
          rows.map(({ intent, submitter }) => [intent.id, submitter.email])

        expect(listed(yield* repo.listForOrg(orgId, { limit: 10 })))
          .toEqual([[third.id, bob.email], [second.id, bob.email], [first.id, ann.email]])
        // limit + 1 rows tell that another page follows; the cursor continues after the last shown.
        expect(listed(yield* repo.listForOrg(orgId, { limit: 1, status: "awaiting_review" }))).toEqual([[third.id, bob.email], [first.id, ann.email]])
        expect(listed(yield* repo.listForOrg(orgId, { limit: 1, status: "awaiting_review", cursor: third.id }))).toEqual([[first.id, ann.email]])
        expect(listed(yield* repo.listForOrg(orgId, { limit: 10, status: "completed" }))).toEqual([[second.id, bob.email]])
      }))

    it.effect("fail the intents left running past any run's length, and only those", () =>
      Effect.gen(function*() {
        const user = yield* newUser
        const repo = yield* IntentRepository
        const stale = yield* storedIntent(user, { input: "stale", orgId: null, status: "executing" })
        const held = yield* storedIntent(user, { input: "held", orgId: null, status: "awaiting_review" })
        const done = yield* storedIntent(user, { input: "done", orgId: null, status: "completed" })
        const fresh = yield* storedIntent(user, { input: "fresh", orgId: null, status: "executing" })
        yield* repo.update(new Intent({ ...fresh, updated_at: yield* DateTime.now }, { disableValidation: true }))

        expect(yield* IntentExpiry.sweep).toBeGreaterThanOrEqual(1)

        const statusOf = (intent: Intent) => Effect.map(repo.find(intent.id), (found) => Option.map(found, (_) => [_.intent.status, _.intent.error?.error]))
        expect(yield* statusOf(stale)).toEqual(Option.some(["failed", "DEADLINE_EXCEEDED"]))
        expect(yield* statusOf(fresh)).toEqual(Option.some(["executing", undefined]))
        expect(yield* statusOf(held)).toEqual(Option.some(["awaiting_review", undefined]))
        expect(yield* statusOf(done)).toEqual(Option.some(["completed", undefined]))
      }))

    it.effect("read an org's review queue in id order from an index, without sorting", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // The planner would scan the (small) table otherwise; what matters is that an index can serve the query.
        const plan = yield* sql.withTransaction(Effect.zipRight(
          sql`SET LOCAL enable_seqscan = off`,
          sql<{ "QUERY PLAN": unknown }>`EXPLAIN (FORMAT JSON) SELECT id FROM intents WHERE org_id = ${"org_x"} AND status = 'awaiting_review'
                                           AND id < ${"int_z"} ORDER BY id DESC LIMIT 51`
        ))
        const text = JSON.stringify(plan)
        expect(text).toContain("intents_org_review_id_idx")
        expect(text).not.toContain("\"Sort\"")
      }))
  })
}
