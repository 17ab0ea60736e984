import { describe, expect, it } from "@effect/vitest"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { IntentPipeline } from "@huddle/domain/huddle/IntentPipeline"
import { outcomeOf } from "@huddle/domain/huddle/PipelineEvent"
import { Memory } from "@huddle/domain/memories/Memory"
import { MemoryRepository } from "@huddle/domain/memories/MemoryRepository"
import { Completions } from "@huddle/domain/answers/Completions"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import * as InMemoryDomain from "@huddle/testkit/ports/InMemoryDomain"
import { MembershipReads } from "@huddle/testkit/ports/InMemoryMemberships"
import { answer, models, ScriptedModels } from "@huddle/testkit/ports/ScriptedModels"
import { Chunk, DateTime, Effect, Stream } from "effect"

const ann = "usr_ann"
const bob = "usr_bob"
const orgId = "org_acme"
const domain = InMemoryDomain.layer({ members: [{ orgId, userId: ann, role: "member" }] })
const usage = { input_tokens: 40, output_tokens: 2 }

/** Ann's credits, an org memory (the proof that the scope's membership was used), answers queued. */
const setup = Effect.gen(function*() {
  yield* (yield* CreditStore).grant({ account: { ownerType: "user", ownerId: ann, pool: "personal" }, amount: 1000, reason: "test", actorId: null })
  const at = DateTime.unsafeMake(0)
  yield* (yield* MemoryRepository).create(
    new Memory({ id: "mem_1", scope: "org", content: "We deploy on Fridays", org_id: orgId, workspace_id: null, author_id: ann, created_at: at, updated_at: at })
  )
  const script = yield* ScriptedModels
  yield* script.queue(models.economy.id, answer(["Hi"], usage))
  yield* script.queue(models.standard.id, answer(["Hi"], usage))
  return script
})

const roleReads = Effect.flatMap(MembershipReads, (reads) => reads.roleOf)

/** Whether the model was sent the org's memory. */
const sawOrgMemory = (script: ScriptedModels["Type"]) =>
  Effect.map(script.calls, (calls) => calls.some((call) => call.messages.some((message) => message.content.includes("We deploy on Fridays"))))

describe("a request's scope", () => {
  it.effect("reads the membership once for a whole chat completion in an org", () =>
    Effect.gen(function*() {
      const script = yield* setup
      const scope = yield* (yield* RequestScopes).resolve(InMemoryDomain.principal(ann), { orgId })
      expect(scope).toMatchObject({ orgId, role: "member" })

      const events = Chunk.toReadonlyArray(
        yield* Stream.runCollect((yield* Completions).stream({ scope, model: "economy", messages: [{ role: "user", content: "Hi" }] }))
      )

      expect(events.at(-1)).toMatchObject({ _tag: "Settled", consumed: true })
      expect(yield* sawOrgMemory(script)).toBe(true)
      expect(yield* roleReads).toBe(1)
    }).pipe(Effect.provide(domain)))

  it.effect("reads the membership once for a whole intent in an org", () =>
    Effect.gen(function*() {
      const script = yield* setup
      const scope = yield* (yield* RequestScopes).resolve(InMemoryDomain.principal(ann), { headerOrgId: orgId })

      const outcome = yield* outcomeOf((yield* IntentPipeline).submit({ scope, sessionId: null, input: "Hi" }))

      expect(outcome.intent).toMatchObject({ status: "completed", org_id: orgId })
      expect(yield* sawOrgMemory(script)).toBe(true)
      expect(yield* roleReads).toBe(1)
    }).pipe(Effect.provide(domain)))

  it.effect("runs a key bound to an org in it, and refuses another org as not found without reading it", () =>
    Effect.gen(function*() {
      const scopes = yield* RequestScopes
      const bound = InMemoryDomain.principal(ann, { boundOrgId: orgId })
      // Without its user's personal context: no personal memories or workspace in its requests.
      expect(yield* scopes.resolve(bound, {})).toMatchObject({ orgId, role: "member", personal: false })
      expect(yield* roleReads).toBe(1)

      const elsewhere = InMemoryDomain.principal(ann, { boundOrgId: "org_other" })
      const error = yield* Effect.flip(scopes.resolve(elsewhere, { orgId }))
      expect(error).toMatchObject({ _tag: "NotFound", message: "Organization not found" })
      expect(yield* roleReads).toBe(1)
    }).pipe(Effect.provide(domain)))

  it.effect("tells a non-member the org does not exist", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip((yield* RequestScopes).resolve(InMemoryDomain.principal(bob), { orgId }))
      expect(error).toMatchObject({ _tag: "NotFound", message: "Organization not found" })
      expect(yield* roleReads).toBe(1)
    }).pipe(Effect.provide(domain)))

  it.effect("reads no membership in the personal context, for a completion and an intent", () =>
    Effect.gen(function*() {
      const script = yield* setup
      const scope = yield* (yield* RequestScopes).resolve(InMemoryDomain.principal(ann), {})
      expect(scope).toMatchObject({ orgId: null, role: null, personal: true })

      yield* Stream.runDrain((yield* Completions).stream({ scope, model: "economy", messages: [{ role: "user", content: "Hi" }] }))
      const outcome = yield* outcomeOf((yield* IntentPipeline).submit({ scope, sessionId: null, input: "Hi" }))

      expect(outcome.intent.status).toBe("completed")
      expect((yield* script.calls).map((call) => call.model.id)).toEqual([models.economy.id, models.standard.id])
      expect(yield* sawOrgMemory(script)).toBe(false)
      expect(yield* roleReads).toBe(0)
      expect(yield* Effect.flatMap(MembershipReads, (reads) => reads.listForUser)).toBe(0)
    }).pipe(Effect.provide(domain)))
})
