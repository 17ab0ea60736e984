/**
 * API keys: created and managed from a web session, shown once, revocable.
 */
import { Context, DateTime, Effect, Layer, Option } from "effect"
import { ApiKey, CreatedApiKey } from "../identity/ApiKey.js"
import { NotFound, SessionRequired } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { fromRows, type Page, type PageRequest } from "../shared/Page.js"
import type { Principal } from "../identity/Principal.js"
import { ApiKeyRepository } from "../identity/ApiKeyRepository.js"
import { MembershipRepository } from "../orgs/MembershipRepository.js"
import { SecretTokens } from "./SecretTokens.js"
import { AuditLog } from "../audit/AuditLog.js"
import { traced } from "../observability/Traced.js"

export interface NewKey {
  readonly name: string
  readonly orgId: string | null
}

export interface Service {
  readonly create: (principal: Principal, input: NewKey) => Effect.Effect<CreatedApiKey, SessionRequired | NotFound>
  readonly list: (principal: Principal, page: PageRequest) => Effect.Effect<Page<ApiKey>, SessionRequired>
  readonly revoke: (principal: Principal, id: string) => Effect.Effect<void, SessionRequired | NotFound>
}

export class ApiKeys extends Context.Tag("@huddle/domain/ApiKeys")<ApiKeys, Service>() {}

const requireSession = (principal: Principal) =>
  principal.via === "session"
    ? Effect.void
    : Effect.fail(new SessionRequired({ message: "Managing API keys needs a web session, not an API key" }))

export const make = Effect.gen(function*() {
  const ids = yield* Ids
  const keys = yield* ApiKeyRepository
  const tokens = yield* SecretTokens
  const memberships = yield* MembershipRepository
  const audit = yield* AuditLog

  const create: Service["create"] = (principal, { name, orgId }) =>
    Effect.gen(function*() {
      yield* requireSession(principal)
      if (orgId !== null) {
        const role = yield* memberships.roleOf(principal.user.id, orgId)
        if (Option.isNone(role)) return yield* new NotFound({ message: "Organization not found" })
      }
      const issued = yield* tokens.issue("hk")
      const key = new ApiKey({
        id: yield* ids.next("key"),
        name,
        prefix: issued.prefix,
        last_four: issued.lastFour,
        org_id: orgId,
        created_at: yield* DateTime.now,
        last_used_at: null
      })
      yield* keys.create({ key, userId: principal.user.id, tokenHash: issued.hash })
      yield* audit.record({
        orgId,
        eventType: "api_key.created",
        actorId: principal.user.id,
        target: key.id,
        details: { name, prefix: key.prefix }
      })
      return new CreatedApiKey({
        id: key.id,
        name: key.name,
        key: issued.token,
        prefix: key.prefix,
        last_four: key.last_four,
        org_id: key.org_id,
        created_at: key.created_at
      })
    })

  const list: Service["list"] = (principal, page) =>
    requireSession(principal).pipe(
      Effect.zipRight(keys.listForUser(principal.user.id, page)),
      Effect.map((rows) => fromRows(rows, page.limit))
    )

  const revoke: Service["revoke"] = (principal, id) =>
    Effect.gen(function*() {
      yield* requireSession(principal)
      const revoked = yield* keys.revoke(principal.user.id, id, yield* DateTime.now)
      if (Option.isNone(revoked)) return yield* new NotFound({ message: "API key not found" })
      yield* audit.record({
        orgId: revoked.value.org_id,
        eventType: "api_key.revoked",
        actorId: principal.user.id,
        target: id,
        details: { name: revoked.value.name, prefix: revoked.value.prefix }
      })
    })

  return ApiKeys.of(traced("ApiKeys", { create, list, revoke }))
})

export const layer = Layer.effect(ApiKeys, make)
