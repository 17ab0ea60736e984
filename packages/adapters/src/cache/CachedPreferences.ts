/** A user's personal preferences, read on every request, cached until they change. */
import { PreferenceRepository } from "@huddle/domain/settings/PreferenceRepository"
import type { Preferences } from "@huddle/domain/settings/Preferences"
import { Effect, Layer } from "effect"
import { ChangeFeed } from "./ChangeFeed.js"
import * as Metrics from "@huddle/domain/observability/Metrics"
import * as InvalidatedCache from "./InvalidatedCache.js"

export const layer = Layer.effect(
  PreferenceRepository,
  Effect.gen(function*() {
    const metrics = yield* Metrics.Metrics
    const inner = yield* PreferenceRepository
    const feed = yield* ChangeFeed
    const preferences = InvalidatedCache.make<Preferences>(feed, {
      name: "preferences",
      invalidatedBy: { user_preferences: (userId) => [userId] }
    }, metrics)
    return PreferenceRepository.of({
      ...inner,
      put: (userId, next) => Effect.ensuring(inner.put(userId, next), Effect.sync(() => feed.wrote("user_preferences"))),
      get: (userId) => preferences.get(userId, inner.get(userId))
    })
  })
)
