/**
 * An organization's enforced policies and default preferences (admins write; members may read
 * the policies), and the effective settings of a request under them.
 */
import { Context, Effect, Layer } from "effect"
import type { Forbidden, NotFound } from "../Errors.js"
import type { EffectiveSettings, OrgPolicies } from "../Policy.js"
import type { Preferences } from "../Preferences.js"
import type { Principal } from "../Principal.js"
import { AuditLog } from "../ports/AuditLog.js"
import { OrgSettingsRepository } from "../ports/OrgSettingsRepository.js"
import { PreferenceRepository } from "../ports/PreferenceRepository.js"
import { Transactor } from "../ports/Transactor.js"
import { OrgAccess } from "./OrgAccess.js"
import { resolve } from "./Policies.js"

export interface Service {
  readonly policies: (principal: Principal, orgId: string) => Effect.Effect<OrgPolicies, NotFound>
  readonly adminPolicies: (principal: Principal, orgId: string) => Effect.Effect<OrgPolicies, NotFound | Forbidden>
  readonly setPolicies: (principal: Principal, orgId: string, policies: OrgPolicies) => Effect.Effect<OrgPolicies, NotFound | Forbidden>
  readonly defaults: (principal: Principal, orgId: string) => Effect.Effect<Preferences, NotFound | Forbidden>
  readonly setDefaults: (principal: Principal, orgId: string, defaults: Preferences) => Effect.Effect<Preferences, NotFound | Forbidden>
  /** The settings a request by this principal runs with, in the org context given (if any). */
  readonly effective: (
    principal: Principal,
    orgId: string | null,
    request: Preferences | undefined
  ) => Effect.Effect<EffectiveSettings, NotFound>
  /**
   * The same for a user known to be a member of the org (the submitter of an intent approved
   * later, whose settings are decided again under the rules in force at approval).
   */
  readonly effectiveFor: (userId: string, orgId: string | null, request: Preferences | undefined) => Effect.Effect<EffectiveSettings>
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

  const effectiveFor: Service["effectiveFor"] = (userId, orgId, request) =>
    Effect.gen(function*() {
      const mine = yield* personal.get(userId)
      if (orgId === null) {
        return resolve({ policies: undefined, request, personal: mine, orgDefaults: undefined })
      }
      const [orgPolicies, orgDefaults] = yield* Effect.all([repo.policies(orgId), repo.defaults(orgId)])
      return resolve({ policies: orgPolicies, request, personal: mine, orgDefaults })
    })

  const effective: Service["effective"] = (principal, orgId, request) =>
    orgId === null
      ? effectiveFor(principal.user.id, null, request)
      : access.member(principal, orgId).pipe(Effect.zipRight(effectiveFor(principal.user.id, orgId, request)))

  return OrgSettings.of({ policies, adminPolicies, setPolicies, defaults, setDefaults, effective, effectiveFor })
})

export const layer = Layer.effect(OrgSettings, make)

