/**
 * An organization's credit pool as its members and admins see it: balances, grants by admins,
 * and which sources may pay for a member's requests.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { Forbidden, NotFound } from "../Errors.js"
import type { Principal } from "../Principal.js"
import { AuditLog } from "../ports/AuditLog.js"
import { CreditStore } from "../ports/CreditStore.js"
import { OrgSettingsRepository } from "../ports/OrgSettingsRepository.js"
import { Transactor } from "../ports/Transactor.js"
import { CreditSource, sourcesFor } from "./Credits.js"
import { OrgAccess } from "./OrgAccess.js"
import { serviceDefaults } from "../Policy.js"

export const OrgPool = Schema.Literal("subscription", "addon")
export type OrgPool = typeof OrgPool.Type

export class OrgCreditsView extends Schema.Class<OrgCreditsView>("OrgCredits")({
  subscription_balance: Schema.Int,
  addon_balance: Schema.Int,
  /** The caller's personal balance. */
  personal_balance: Schema.Int,
  credit_fallback: Schema.Boolean,
  /** Who pays for the caller's requests in this org, in the order tried. */
  payment_order: Schema.Array(CreditSource)
}) {}

export class OrgPoolView extends Schema.Class<OrgPoolView>("OrgCreditPool")({
  subscription_balance: Schema.Int,
  addon_balance: Schema.Int
}) {}

export interface GrantInput {
  readonly balance: OrgPool
  readonly amount: number
  readonly reason: string
}

export interface Service {
  readonly view: (principal: Principal, orgId: string) => Effect.Effect<OrgCreditsView, NotFound>
  readonly grant: (principal: Principal, orgId: string, input: GrantInput) => Effect.Effect<OrgPoolView, NotFound | Forbidden>
}

export class OrgCredits extends Context.Tag("@huddle/domain/OrgCredits")<OrgCredits, Service>() {}

export const make = Effect.gen(function*() {
  const store = yield* CreditStore
  const settings = yield* OrgSettingsRepository
  const access = yield* OrgAccess
  const audit = yield* AuditLog
  const tx = yield* Transactor

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
      return new OrgCreditsView({
        ...balances,
        personal_balance,
        credit_fallback: creditFallback,
        payment_order: sourcesFor({ userId: principal.user.id, orgId, creditFallback }).map((source) => source.pool)
      })
    })

  const grant: Service["grant"] = (principal, orgId, { amount, balance, reason }) =>
    Effect.gen(function*() {
      yield* access.admin(principal, orgId)
      yield* tx.atomically(
        store.grant({ account: { ownerType: "org", ownerId: orgId, pool: balance }, amount, reason, actorId: principal.user.id }).pipe(
          Effect.zipRight(audit.record({
            orgId,
            eventType: "credits.granted",
            actorId: principal.user.id,
            target: orgId,
            details: { balance, amount, reason }
          }))
        )
      )
      return new OrgPoolView(yield* pool(orgId))
    })

  return OrgCredits.of({ view, grant })
})

export const layer = Layer.effect(OrgCredits, make)
