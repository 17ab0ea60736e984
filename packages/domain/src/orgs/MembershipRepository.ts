import { Context, type Effect, type Option } from "effect"
import type { OrgMembership, Role } from "./Membership.js"

export interface Service {
  /** The organizations in which the user is an active member, oldest membership first. */
  readonly listForUser: (userId: string) => Effect.Effect<ReadonlyArray<OrgMembership>>
  readonly roleOf: (userId: string, orgId: string) => Effect.Effect<Option.Option<Role>>
}

export class MembershipRepository extends Context.Tag("@huddle/domain/MembershipRepository")<
  MembershipRepository,
  Service
>() {}
