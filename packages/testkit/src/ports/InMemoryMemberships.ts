/**
 * Memberships in memory, and a decorator that counts the reads of any `MembershipRepository`
 * (a request's scope reads the caller's membership once; the counts show where that slips).
 */
import { OrgMembership, type Role } from "@huddle/domain/orgs/Membership"
import { MembershipRepository } from "@huddle/domain/orgs/MembershipRepository"
import { Context, Effect, Layer, Option, Ref } from "effect"

export interface Member {
  readonly orgId: string
  readonly userId: string
  readonly role: Role
}

/** The active memberships `members`, in that order (the org's id stands for its name and slug). */
export const layer = (members: ReadonlyArray<Member>) =>
  Layer.succeed(
    MembershipRepository,
    MembershipRepository.of({
      listForUser: (userId) =>
        Effect.succeed(
          members
            .filter((member) => member.userId === userId)
            .map((member) => new OrgMembership({ id: member.orgId, name: member.orgId, slug: member.orgId, role: member.role }))
        ),
      roleOf: (userId, orgId) =>
        Effect.succeed(
          Option.map(Option.fromNullable(members.find((member) => member.userId === userId && member.orgId === orgId)), (_) => _.role)
        )
    })
  )

/** How many times each method of the decorated repository has run so far. */
export interface Reads {
  readonly roleOf: Effect.Effect<number>
  readonly listForUser: Effect.Effect<number>
}

export class MembershipReads extends Context.Tag("@huddle/testkit/MembershipReads")<MembershipReads, Reads>() {}

/** Decorates the `MembershipRepository` below it, counting each read as it runs. */
export const counting: Layer.Layer<MembershipRepository | MembershipReads, never, MembershipRepository> = Layer.effectContext(
  Effect.gen(function*() {
    const inner = yield* MembershipRepository
    const roleOf = yield* Ref.make(0)
    const listForUser = yield* Ref.make(0)
    return Context.make(
      MembershipRepository,
      MembershipRepository.of({
        roleOf: (userId, orgId) => Effect.zipRight(Ref.update(roleOf, (n) => n + 1), inner.roleOf(userId, orgId)),
        listForUser: (userId) => Effect.zipRight(Ref.update(listForUser, (n) => n + 1), inner.listForUser(userId))
      })
    ).pipe(Context.add(MembershipReads, { roleOf: Ref.get(roleOf), listForUser: Ref.get(listForUser) }))
  })
)
