/** An org's enforced policies and default preferences, read on every org request, cached until they change. */
import { OrgSettingsRepository } from "@huddle/domain/orgs/OrgSettingsRepository"
import type { OrgPolicies } from "@huddle/domain/settings/Policy"
import type { Preferences } from "@huddle/domain/settings/Preferences"
import { Effect, Layer } from "effect"
import { ChangeFeed } from "./ChangeFeed.js"
import * as Metrics from "@huddle/domain/observability/Metrics"
import * as InvalidatedCache from "./InvalidatedCache.js"

export const layer = Layer.effect(
  OrgSettingsRepository,
  Effect.gen(function*() {
    const metrics = yield* Metrics.Metrics
    const inner = yield* OrgSettingsRepository
    const feed = yield* ChangeFeed
    const policies = InvalidatedCache.make<OrgPolicies>(feed, { name: "org_policies", invalidatedBy: { org_policies: (orgId) => [orgId] } }, metrics)
    const defaults = InvalidatedCache.make<Preferences>(feed, { name: "org_preferences", invalidatedBy: { org_preferences: (orgId) => [orgId] } }, metrics)
    return OrgSettingsRepository.of({
      ...inner,
      putPolicies: (orgId, next, by) => Effect.ensuring(inner.putPolicies(orgId, next, by), Effect.sync(() => feed.wrote("org_policies"))),
      putDefaults: (orgId, next, by) => Effect.ensuring(inner.putDefaults(orgId, next, by), Effect.sync(() => feed.wrote("org_preferences"))),
      policies: (orgId) => policies.get(orgId, inner.policies(orgId)),
      defaults: (orgId) => defaults.get(orgId, inner.defaults(orgId))
    })
  })
)
