/**
 * Organizations are not cached, but their writes change memberships, which are: after each one
 * this instance's membership cache forgets what it holds (see `ChangeFeed.wrote`).
 */
import { OrganizationRepository } from "@huddle/domain/orgs/OrganizationRepository"
import { Effect, Layer } from "effect"
import { ChangeFeed } from "./ChangeFeed.js"

export const layer = Layer.effect(
  OrganizationRepository,
  Effect.gen(function*() {
    const inner = yield* OrganizationRepository
    const feed = yield* ChangeFeed
    const wrote = Effect.sync(() => feed.wrote("memberships"))
    return OrganizationRepository.of({
      ...inner,
      create: (org, creator) => Effect.ensuring(inner.create(org, creator), wrote),
      delete: (orgId) => Effect.ensuring(inner.delete(orgId), Effect.sync(() => feed.wrote())),
      invite: (invitation) => Effect.ensuring(inner.invite(invitation), wrote),
      activateInvitations: (email, userId, at) => Effect.ensuring(inner.activateInvitations(email, userId, at), wrote),
      setRole: (orgId, email, role) => Effect.ensuring(inner.setRole(orgId, email, role), wrote),
      removeMember: (orgId, email) => Effect.ensuring(inner.removeMember(orgId, email), wrote)
    })
  })
)
