/** Membership roles, read on every request in an org context, cached until the membership changes. */
import { type Role } from "@huddle/domain/orgs/Membership"
import { MembershipRepository } from "@huddle/domain/orgs/MembershipRepository"
import { Effect, Layer, type Option } from "effect"
import { ChangeFeed } from "./ChangeFeed.js"
import * as Metrics from "@huddle/domain/observability/Metrics"
import * as InvalidatedCache from "./InvalidatedCache.js"

export const layer = Layer.effect(
  MembershipRepository,
  Effect.gen(function*() {
    const metrics = yield* Metrics.Metrics
    const inner = yield* MembershipRepository
    const roles = InvalidatedCache.make<Option.Option<Role>>(yield* ChangeFeed, {
      name: "memberships",
      // Keyed `user/org`, as the trigger sends it; invitations (no user yet) concern no entry.
      invalidatedBy: { memberships: (key) => [key] }
    }, metrics)
    return MembershipRepository.of({
      ...inner,
      roleOf: (userId, orgId) => roles.get(`${userId}/${orgId}`, inner.roleOf(userId, orgId))
    })
  })
)
