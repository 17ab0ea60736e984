import { Context, type DateTime, type Effect, type Option } from "effect"
import type { Conflict } from "../shared/Errors.js"
import type { Role } from "./Membership.js"
import type { Member, Organization } from "./Organization.js"
import type { PageRequest } from "../shared/Page.js"

export interface Service {
  /** Creates the org with its creator as active admin. Fails with `Conflict` if the slug is taken. */
  readonly create: (org: Organization, creator: { readonly userId: string; readonly email: string }) => Effect.Effect<void, Conflict>
  readonly findById: (orgId: string) => Effect.Effect<Option.Option<Organization>>
  /** Deletes the org and everything it owns (members, memories, policies, credit accounts, org audit rows). */
  readonly delete: (orgId: string) => Effect.Effect<void>
  readonly members: (orgId: string, page: PageRequest) => Effect.Effect<ReadonlyArray<Member>>
  readonly findMember: (orgId: string, userIdOrEmail: string) => Effect.Effect<Option.Option<Member>>
  /** Adds a pending membership for the email; `Conflict` when the email is already invited or a member. */
  readonly invite: (
    input: { readonly orgId: string; readonly email: string; readonly role: Role; readonly invitedBy: string; readonly at: DateTime.Utc }
  ) => Effect.Effect<void, Conflict>
  /** Activates every pending invitation for the email; returns the org ids joined. */
  readonly activateInvitations: (email: string, userId: string, at: DateTime.Utc) => Effect.Effect<ReadonlyArray<string>>
  readonly setRole: (orgId: string, email: string, role: Role) => Effect.Effect<void>
  readonly removeMember: (orgId: string, email: string) => Effect.Effect<void>
  /**
   * Locks the org's admin memberships until the end of the surrounding transaction and counts
   * the active ones, so that "at least one admin remains" holds under concurrent changes.
   */
  readonly lockAdmins: (orgId: string) => Effect.Effect<number>
  readonly counts: (orgId: string) => Effect.Effect<{ readonly members: number; readonly pending: number }>
}

export class OrganizationRepository extends Context.Tag("@huddle/domain/OrganizationRepository")<
  OrganizationRepository,
  Service
>() {}
