/**
 * The domain's answer path (`Domain.answering`: request scopes, completions, the intent pipeline,
 * the metered call and what they use) over in-memory ports and scripted models: domain tests
 * without a database.
 *
 * ```ts
 * it.effect("…", () =>
 *   Effect.gen(function*() {
 *     yield* (yield* ScriptedModels).queue("std-a", answer(["Hi"], { input_tokens: 10, output_tokens: 1 }))
 *     const scope = yield* (yield* RequestScopes).resolve(principal("usr_ann"), {})
 *     // …
 *   }).pipe(Effect.provide(InMemoryDomain.layer({ members: [] }))))
 * ```
 *
 * Besides the domain's services and ports it provides the tests' views: `CreditStoreState`,
 * `MembershipReads` (membership is decorated with a counter) and `ScriptedModels`.
 */
import type { Workspace } from "@huddle/domain/accounts/Workspace"
import { Principal } from "@huddle/domain/identity/Principal"
import { Email, User, UserId } from "@huddle/domain/identity/User"
import * as Domain from "@huddle/domain/Domain"
import * as LexicalCodeSearch from "@huddle/adapters/grounding/LexicalCodeSearch"
import { DateTime, Layer } from "effect"
import * as InMemoryCreditStore from "./InMemoryCreditStore.js"
import * as InMemoryRepositoryStore from "./InMemoryRepositoryStore.js"
import * as InMemoryIntents from "./InMemoryIntents.js"
import * as InMemoryMemberships from "./InMemoryMemberships.js"
import * as InMemoryMemories from "./InMemoryMemories.js"
import * as InMemoryPorts from "./InMemoryPorts.js"
import * as ScriptedModels from "./ScriptedModels.js"

export interface Options {
  readonly members?: ReadonlyArray<InMemoryMemberships.Member> | undefined
  readonly workspaces?: ReadonlyArray<Workspace> | undefined
  readonly credits?: InMemoryCreditStore.Options | undefined
}

/** Every port of the request path in memory, membership reads counted, models scripted. */
export const ports = (options: Options = {}) =>
  Layer.mergeAll(
    InMemoryPorts.transactor,
    InMemoryPorts.auditLog,
    InMemoryPorts.preferences,
    InMemoryPorts.orgSettings,
    InMemoryIntents.layer,
    InMemoryMemories.layer,
    InMemoryCreditStore.layer(options.credits),
    InMemoryMemberships.counting.pipe(Layer.provide(InMemoryMemberships.layer(options.members ?? []))),
    ScriptedModels.layer,
    ScriptedModels.catalog
  ).pipe(
    Layer.provideMerge(InMemoryPorts.workspaces(options.workspaces)),
    Layer.provideMerge(InMemoryPorts.ids)
  )

export const layer = (options: Options = {}) =>
  Domain.answering.pipe(
    Layer.provideMerge(LexicalCodeSearch.layer.pipe(Layer.provideMerge(InMemoryRepositoryStore.layer))),
    Layer.provideMerge(ports(options))
  )

/** A user calling with an API key (`key_<userId>`), bound to `boundOrgId` when given. */
export const principal = (userId: string, options: { readonly boundOrgId?: string | undefined } = {}) =>
  new Principal({
    user: new User({ id: UserId.make(userId), email: Email.make(InMemoryPorts.emailOf(userId)), created_at: DateTime.unsafeMake(0) }),
    via: "api_key",
    credential_id: `key_${userId}`,
    bound_org_id: options.boundOrgId ?? null
  })
