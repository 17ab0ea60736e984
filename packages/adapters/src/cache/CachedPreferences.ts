/** A user's personal preferences, read on every request, cached until they change. */
import { PreferenceRepository } from "@huddle/domain/ports/PreferenceRepository"
import type { Preferences } from "@huddle/domain/Preferences"
import { Effect, Layer } from "effect"
import { ChangeFeed } from "./ChangeFeed.js"
import * as InvalidatedCache from "./InvalidatedCache.js"

export const layer = Layer.effect(
  PreferenceRepository,
  Effect.gen(function*() {
    const inner = yield* PreferenceRepository
    const preferences = InvalidatedCache.make<Preferences>(yield* ChangeFeed, {
      invalidatedBy: { user_preferences: (userId) => [userId] }
    })
    return PreferenceRepository.of({
      ...inner,
      get: (userId) => preferences.get(userId, inner.get(userId))
    })
  })
)
