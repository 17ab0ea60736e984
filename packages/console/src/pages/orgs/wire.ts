/** The organization pages' data, as the typed client answers it. */
import type { HttpClientResponse } from "@effect/platform"
import type { Effect } from "effect"
import type { Client } from "../../api.js"

/** What an endpoint answers (not the `[answer, response]` pair of its `withResponse` form). */
type Answer<F extends (...args: never) => Effect.Effect<unknown, unknown>> = Exclude<
  Effect.Effect.Success<ReturnType<F>>,
  readonly [unknown, HttpClientResponse.HttpClientResponse]
>

export type Profile = Answer<Client["me"]["me"]>
export type Membership = Profile["orgs"][number]
export type MemberPage = Answer<Client["orgAdmin"]["members"]>
export type Member = MemberPage["data"][number]
export type AuditPage = Answer<Client["orgAdmin"]["auditLog"]>
export type AuditEvent = AuditPage["data"][number]
export type Dashboard = Answer<Client["orgAdmin"]["dashboard"]>
export type OrgCredits = Answer<Client["orgs"]["credits"]>
