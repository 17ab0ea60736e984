/**
 * Spend an operator and an org's admins can read: credits (and settled calls) over time, by
 * model, tier, member and paying source, from the ledger. Admins see what was spent in their
 * org's context (its pool, and members' personal balances when they paid for org requests);
 * the operator sees the deployment.
 */
import * as Traced from "../observability/Traced.js"
import { Context, Effect, Layer } from "effect"
import type { Principal } from "../identity/Principal.js"
import { ModelTier } from "../settings/Preferences.js"
import { CreditStore } from "../credits/CreditStore.js"
import { Catalog } from "../models/Catalog.js"
import { OrgAccess } from "../orgs/OrgAccess.js"
import { type Forbidden, InvalidRequest, type NotFound } from "../shared/Errors.js"
import { keysOf, positionOf, SpendReport, type SpendRequest } from "./SpendQuery.js"
import { SpendRepository, type SpendScope } from "./SpendRepository.js"

export interface Service {
  readonly deployment: (request: SpendRequest) => Effect.Effect<SpendReport, InvalidRequest>
  /** Admins only: a member gets 403, and someone outside the org 404 (as for every admin operation). */
  readonly org: (principal: Principal, orgId: string, request: SpendRequest) => Effect.Effect<SpendReport, InvalidRequest | NotFound | Forbidden>
}

export class Spend extends Context.Tag("@huddle/domain/Spend")<Spend, Service>() {}

export const make = Effect.gen(function*() {
  const repository = yield* SpendRepository
  const access = yield* OrgAccess
  const catalog = yield* Catalog
  const credits = yield* CreditStore
  // A request names a model or a tier (a name that is a tier is read as one, as routing does).
  const byName = new Map<string, string>(catalog.models.map((model) => [model.id, model.tier]))
  for (const tier of ModelTier.literals) byName.set(tier, tier)
  const tiers = [...byName]

  const report = (scope: SpendScope, request: SpendRequest) =>
    Effect.gen(function*() {
      const after = request.cursor === undefined ? undefined : keysOf(request.cursor, request.groupBy)
      if (request.cursor !== undefined && after === undefined) {
        return yield* new InvalidRequest({ message: "cursor: must be the next_cursor of a previous page with the same group_by", field: "cursor" })
      }
      // Every charge this instance has answered for is in the ledger before it is read.
      yield* credits.flush
      const page = yield* repository.query(scope, { ...request, after }, tiers)
      return new SpendReport({
        from: request.from.toISOString(),
        to: request.to.toISOString(),
        group_by: request.groupBy,
        totals: page.totals,
        data: page.rows,
        next_cursor: page.next === null ? null : positionOf(page.next)
      }, { disableValidation: true })
    })

  return Spend.of({
    deployment: (request) => Traced.span(report({ _tag: "Deployment" }, request), "Spend.deployment"),
    org: (principal, orgId, request) =>
      access.admin(principal, orgId).pipe(
        Effect.zipRight(report({ _tag: "Org", orgId }, request)),
        (effect) => Traced.span(effect, "Spend.org", { attributes: { orgId } })
      )
  })
})

export const layer = Layer.effect(Spend, make)
