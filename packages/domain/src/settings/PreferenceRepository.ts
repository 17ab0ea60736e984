import { Context, type Effect } from "effect"
import type { Preferences } from "./Preferences.js"

export interface Service {
  /** The user's personal preferences; empty when never set. */
  readonly get: (userId: string) => Effect.Effect<Preferences>
  readonly put: (userId: string, preferences: Preferences) => Effect.Effect<void>
}

export class PreferenceRepository extends Context.Tag("@huddle/domain/PreferenceRepository")<
  PreferenceRepository,
  Service
>() {}
