/**
 * Who may touch an organization. A non-member (or an API key bound to another org) is told the
 * org does not exist; a member asking for an admin operation is told it is forbidden.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Forbidden, NotFound } from "../shared/Errors.js"
import type { Role } from "./Membership.js"
import type { Principal } from "../identity/Principal.js"
import { MembershipRepository } from "./MembershipRepository.js"
import { traced } from "../observability/Traced.js"

export interface Service {
  readonly member: (principal: Principal, orgId: string) => Effect.Effect<Role, NotFound>
  readonly admin: (principal: Principal, orgId: string) => Effect.Effect<void, NotFound | Forbidden>
}

export class OrgAccess extends Context.Tag("@huddle/domain/OrgAccess")<OrgAccess, Service>() {}

export const orgNotFound = new NotFound({ message: "Organization not found" })

/**
 * Whether the principal's credential reaches `orgId` (null: the personal context): a key bound to
 * an org reaches that org only, and nothing personal (memories, the personal workspace and its
 * repository, sessions, intents, preferences, ledger). Every check of a bound key comes here.
 */
export const reaches = (principal: Principal, orgId: string | null): boolean =>
  principal.bound_org_id === null || principal.bound_org_id === orgId

/** What a key bound to an org is told when it asks for the personal context: it has none. */
export const noPersonalContext = new NotFound({ message: "This key is bound to an organization: it has no personal context" })

/** The personal context, for a credential that reaches it (any but a key bound to an org). */
export const personalContext = (principal: Principal): Effect.Effect<void, NotFound> =>
  reaches(principal, null) ? Effect.void : Effect.fail(noPersonalContext)

/** Admins act on everything in their org; members on what is theirs. */
export const isAdmin = (role: Role): boolean => role === "admin"

export const make = Effect.map(MembershipRepository, (memberships) => {
  const member: Service["member"] = (principal, orgId) =>
    !reaches(principal, orgId)
      ? Effect.fail(orgNotFound)
      : memberships.roleOf(principal.user.id, orgId).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(orgNotFound), onSome: Effect.succeed }))
      )
  const admin: Service["admin"] = (principal, orgId) =>
    member(principal, orgId).pipe(
      Effect.filterOrFail(
        isAdmin,
        () => new Forbidden({ message: "Only organization admins may do this" })
      ),
      Effect.asVoid
    )
  return OrgAccess.of(traced("OrgAccess", { member, admin }, { leaves: ["member", "admin"] }))
})

export const layer = Layer.effect(OrgAccess, make)
