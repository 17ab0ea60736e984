import { Context, type Effect } from "effect"
import type { OrgPolicies } from "../settings/Policy.js"
import type { Preferences } from "../settings/Preferences.js"

export interface Service {
  readonly policies: (orgId: string) => Effect.Effect<OrgPolicies>
  readonly putPolicies: (orgId: string, policies: OrgPolicies, by: string) => Effect.Effect<void>
  readonly defaults: (orgId: string) => Effect.Effect<Preferences>
  readonly putDefaults: (orgId: string, defaults: Preferences, by: string) => Effect.Effect<void>
}

export class OrgSettingsRepository extends Context.Tag("@huddle/domain/OrgSettingsRepository")<
  OrgSettingsRepository,
  Service
>() {}
