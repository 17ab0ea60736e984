/**
 * The scope of one request, resolved once at its start and handed to every service it calls:
 * who calls, the organization and workspace it runs in, the caller's role there, and the rules
 * its settings are decided by (the org's enforced policies and defaults, the caller's personal
 * preferences). Membership is read here and nowhere else on a request's way to the model.
 *
 * Org: an API key bound to an org runs in it (and nowhere else); otherwise an explicit `org_id`,
 * then the `OpenAI-Organization` or `Huddle-Organization` header, selects an org the caller
 * belongs to; otherwise the request runs in the personal context. A workspace must be one the
 * caller may use: their own, or one of an org they belong to (`WorkspaceAccess`); naming an org
 * workspace does not by itself choose the org the request runs in.
 */
import { Context, Effect, Layer } from "effect"
import type { NotFound } from "../shared/Errors.js"
import type { Role } from "../orgs/Membership.js"
import type { EffectiveSettings } from "../settings/Policy.js"
import type { Preferences } from "../settings/Preferences.js"
import type { Principal } from "../identity/Principal.js"
import * as WorkspaceAccess from "../accounts/WorkspaceAccess.js"
import { noPersonalContext, OrgAccess, orgNotFound, reaches } from "../orgs/OrgAccess.js"
import { OrgSettings, type Rules } from "../orgs/OrgSettings.js"
import { resolve } from "../settings/Policies.js"
import { traced } from "../observability/Traced.js"

export interface RequestScope {
  readonly principal: Principal
  /** The org the request runs in; null in the personal context. */
  readonly orgId: string | null
  /** The caller's role in `orgId`, read once for the request; null in the personal context. */
  readonly role: Role | null
  /** Whose workspace memories (and repository) count; the caller's personal workspace when null (and `personal`). */
  readonly workspaceId: string | null
  /**
   * Whether the caller's personal context counts: their personal memories, and their personal
   * workspace when none is named. False for a key bound to an org, which reaches nothing personal.
   */
  readonly personal: boolean
  /** What the request's settings are decided by. */
  readonly rules: Rules
}

/** The name of the context of no organization, in headers both ways (`Huddle-Organization`). */
export const personalContext = "personal"

export interface Requested {
  readonly orgId?: string | null | undefined
  /** From the `OpenAI-Organization` / `Huddle-Organization` header. */
  readonly headerOrgId?: string | null | undefined
  readonly workspaceId?: string | null | undefined
}

/** The settings a request in this scope runs with, given what the request itself names. */
export const settingsOf = (scope: Pick<RequestScope, "rules">, request?: Preferences | undefined): EffectiveSettings =>
  resolve({ ...scope.rules, request })

export interface Service {
  readonly resolve: (principal: Principal, requested: Requested) => Effect.Effect<RequestScope, NotFound>
}

export class RequestScopes extends Context.Tag("@huddle/domain/RequestScopes")<RequestScopes, Service>() {}

export const make = Effect.gen(function*() {
  const access = yield* OrgAccess
  const settings = yield* OrgSettings
  const workspaces = yield* WorkspaceAccess.make

  const resolveOrg = (principal: Principal, requested: Requested) => {
    // `personal`, as responses name that context, asks for it: a key bound to an org has none.
    if (requested.orgId == null && requested.headerOrgId === personalContext) {
      return reaches(principal, null) ? Effect.succeed({ orgId: null, role: null }) : Effect.fail(noPersonalContext)
    }
    const asked = requested.orgId ?? requested.headerOrgId ?? null
    if (asked === null && principal.bound_org_id === null) return Effect.succeed({ orgId: null, role: null })
    if (asked !== null && !reaches(principal, asked)) return Effect.fail(orgNotFound)
    const orgId = asked ?? principal.bound_org_id!
    return Effect.map(access.member(principal, orgId), (role) => ({ orgId, role }))
  }

  const resolveWorkspace = (principal: Principal, workspaceId: string | null | undefined) =>
    workspaceId === null || workspaceId === undefined
      ? Effect.succeed(null)
      : Effect.as(workspaces.usable(principal, workspaceId), workspaceId)

  return RequestScopes.of(traced("RequestScopes", {
    resolve: (principal, requested) =>
      Effect.gen(function*() {
        const { orgId, role } = yield* resolveOrg(principal, requested)
        const [workspaceId, rules] = yield* Effect.all([
          resolveWorkspace(principal, requested.workspaceId),
          settings.rulesFor(principal.user.id, orgId)
        ])
        return { principal, orgId, role, workspaceId, personal: reaches(principal, null), rules } satisfies RequestScope
      })
  }))
})

export const layer = Layer.effect(RequestScopes, make)
