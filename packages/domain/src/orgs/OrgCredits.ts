/**
 * An organization's credit pool as its members and admins see it: balances, which sources pay
 * for a member's requests, and the caps by which admins allocate the pool among members.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { type Forbidden, NotFound } from "../shared/Errors.js"
import { type Member, MemberCap, MemberSpent } from "./Organization.js"
import { OrganizationRepository } from "./OrganizationRepository.js"
import type { Principal } from "../identity/Principal.js"
import { AuditLog } from "../audit/AuditLog.js"
import { CreditStore } from "../credits/CreditStore.js"
import { OrgSettingsRepository } from "./OrgSettingsRepository.js"
import { Transactor } from "../shared/Transactor.js"
import { CreditSource, sourcesFor } from "../credits/Credits.js"
import { OrgAccess } from "./OrgAccess.js"
import { memberOf } from "./Organizations.js"
import { serviceDefaults } from "../settings/Policy.js"
import { traced } from "../observability/Traced.js"

export const OrgPool = Schema.Literal("subscription", "addon")
export type OrgPool = typeof OrgPool.Type

export class OrgCreditsView extends Schema.Class<OrgCreditsView>("OrgCredits")({
  subscription_balance: Schema.Int,
  addon_balance: Schema.Int,
  /** The caller's personal balance. */
  personal_balance: Schema.Int,
  credit_fallback: Schema.Boolean,
  /** Who pays for the caller's requests in this org, in the order tried. */
  payment_order: Schema.Array(CreditSource),
  /** The caller's cap on the pool, if an admin set one, and what they have taken from it. */
  cap: Schema.NullOr(MemberCap),
  spent: MemberSpent
}) {}

export class OrgPoolView extends Schema.Class<OrgPoolView>("OrgCreditPool")({
  subscription_balance: Schema.Int,
  addon_balance: Schema.Int
}) {}

export interface Service {
  readonly view: (principal: Principal, orgId: string) => Effect.Effect<OrgCreditsView, NotFound>
  /**
   * Sets (or, with null, lifts) a member's cap on what they may take from the pool. Admins
   * allocate the pool this way; they never add credits to it (only the operator mints).
   */
  readonly setCap: (
    principal: Principal,
    orgId: string,
    member: string,
    cap: MemberCap | null
  ) => Effect.Effect<Member, NotFound | Forbidden>
}

export class OrgCredits extends Context.Tag("@huddle/domain/OrgCredits")<OrgCredits, Service>() {}

export const make = Effect.gen(function*() {
  const store = yield* CreditStore
  const settings = yield* OrgSettingsRepository
  const access = yield* OrgAccess
  const audit = yield* AuditLog
  const tx = yield* Transactor
  const findMember = memberOf(yield* OrganizationRepository)

  const pool = (orgId: string) =>
    Effect.all({
      subscription_balance: store.balance({ ownerType: "org", ownerId: orgId, pool: "subscription" }),
      addon_balance: store.balance({ ownerType: "org", ownerId: orgId, pool: "addon" })
    })

  const view: Service["view"] = (principal, orgId) =>
    Effect.gen(function*() {
      yield* access.member(principal, orgId)
      const policies = yield* settings.policies(orgId)
      const creditFallback = policies.credit_fallback ?? serviceDefaults.credit_fallback
      const balances = yield* pool(orgId)
      const personal_balance = yield* store.balance({ ownerType: "user", ownerId: principal.user.id, pool: "personal" })
      const mine = (yield* store.spending(orgId, [principal.user.id])).get(principal.user.id)
      return new OrgCreditsView({
        ...balances,
        personal_balance,
        cap: mine?.cap ?? null,
        spent: { month: mine?.month ?? 0, total: mine?.total ?? 0 },
        credit_fallback: creditFallback,
        payment_order: sourcesFor({ userId: principal.user.id, orgId, creditFallback }).map((source) => source.pool)
      })
    })

  const setCap: Service["setCap"] = (principal, orgId, memberRef, cap) =>
    Effect.gen(function*() {
      yield* access.admin(principal, orgId)
      const member = yield* findMember(orgId, memberRef)
      if (member.user_id === null) {
        return yield* new NotFound({ message: "Member not found: an invitation has no spending to cap until it is accepted" })
      }
      const userId = member.user_id
      yield* tx.atomically(
        store.setCap(orgId, userId, cap).pipe(
          Effect.zipRight(audit.record({
            orgId,
            eventType: "credits.cap_changed",
            actorId: principal.user.id,
            target: userId,
            details: { email: member.email, from: member.cap, to: cap }
          }))
        )
      )
      return yield* findMember(orgId, userId)
    })

  return OrgCredits.of(traced("OrgCredits", { view, setCap }))
})

export const layer = Layer.effect(OrgCredits, make)
