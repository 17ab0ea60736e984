/**
 * An organization's enforced policies and default preferences (admins write; members may read
 * the policies), and the effective settings of a request under them.
 */
import { Context, Effect, Layer } from "effect"
import type { Forbidden, NotFound } from "../shared/Errors.js"
import type { OrgPolicies } from "../settings/Policy.js"
import type { Preferences } from "../settings/Preferences.js"
import type { Principal } from "../identity/Principal.js"
import { AuditLog } from "../audit/AuditLog.js"
import { OrgSettingsRepository } from "./OrgSettingsRepository.js"
import { PreferenceRepository } from "../settings/PreferenceRepository.js"
import { Transactor } from "../shared/Transactor.js"
import { OrgAccess } from "./OrgAccess.js"
import { traced } from "../observability/Traced.js"

export interface Service {
  readonly policies: (principal: Principal, orgId: string) => Effect.Effect<OrgPolicies, NotFound>
  readonly adminPolicies: (principal: Principal, orgId: string) => Effect.Effect<OrgPolicies, NotFound | Forbidden>
  readonly setPolicies: (principal: Principal, orgId: string, policies: OrgPolicies) => Effect.Effect<OrgPolicies, NotFound | Forbidden>
  readonly defaults: (principal: Principal, orgId: string) => Effect.Effect<Preferences, NotFound | Forbidden>
  readonly setDefaults: (principal: Principal, orgId: string, defaults: Preferences) => Effect.Effect<Preferences, NotFound | Forbidden>
  /**
   * What a user's settings in an org context are decided by, for a user whose membership the
   * caller has established (a request's scope, an approved intent's submitter).
   */
  readonly rulesFor: (userId: string, orgId: string | null) => Effect.Effect<Rules>
}

/** The inputs of the settings' precedence other than the request (see `Policies.resolve`). */
export interface Rules {
  readonly policies: OrgPolicies | undefined
  readonly orgDefaults: Preferences | undefined
  readonly personal: Preferences | undefined
}

export class OrgSettings extends Context.Tag("@huddle/domain/OrgSettings")<OrgSettings, Service>() {}

export const make = Effect.gen(function*() {
  const repo = yield* OrgSettingsRepository
  const personal = yield* PreferenceRepository
  const access = yield* OrgAccess
  const audit = yield* AuditLog
  const tx = yield* Transactor

  const policies: Service["policies"] = (principal, orgId) =>
    access.member(principal, orgId).pipe(Effect.zipRight(repo.policies(orgId)))

  const adminPolicies: Service["adminPolicies"] = (principal, orgId) =>
    access.admin(principal, orgId).pipe(Effect.zipRight(repo.policies(orgId)))

  const setPolicies: Service["setPolicies"] = (principal, orgId, next) =>
    Effect.gen(function*() {
      yield* access.admin(principal, orgId)
      yield* tx.atomically(Effect.gen(function*() {
        const before = yield* repo.policies(orgId)
        yield* repo.putPolicies(orgId, next, principal.user.id)
        yield* audit.record({
          orgId,
          eventType: "policy.updated",
          actorId: principal.user.id,
          target: orgId,
          details: { before: { ...before }, after: { ...next } }
        })
      }))
      return next
    })

  const defaults: Service["defaults"] = (principal, orgId) =>
    access.admin(principal, orgId).pipe(Effect.zipRight(repo.defaults(orgId)))

  const setDefaults: Service["setDefaults"] = (principal, orgId, next) =>
    Effect.gen(function*() {
      yield* access.admin(principal, orgId)
      yield* tx.atomically(Effect.gen(function*() {
        const before = yield* repo.defaults(orgId)
        yield* repo.putDefaults(orgId, next, principal.user.id)
        yield* audit.record({
          orgId,
          eventType: "preferences.updated",
          actorId: principal.user.id,
          target: orgId,
          details: { before: { ...before }, after: { ...next } }
        })
      }))
      return next
    })

  const rulesFor: Service["rulesFor"] = (userId, orgId) =>
    orgId === null
      ? Effect.map(personal.get(userId), (mine): Rules => ({ policies: undefined, orgDefaults: undefined, personal: mine }))
      : Effect.map(
        Effect.all([repo.policies(orgId), repo.defaults(orgId), personal.get(userId)]),
        ([policies, orgDefaults, mine]): Rules => ({ policies, orgDefaults, personal: mine })
      )

  return OrgSettings.of(traced("OrgSettings", { policies, adminPolicies, setPolicies, defaults, setDefaults, rulesFor }, { leaves: ["rulesFor"] }))
})

export const layer = Layer.effect(OrgSettings, make)

