/**
 * Who may use a workspace, and who may manage it. A personal workspace is its owner's alone (an
 * API key bound to an org does not reach it); an org workspace is used by every member of the org
 * (an API key bound to another org does not reach it) and managed (repository connected, re-indexed, disconnected) by the org's admins.
 * A workspace the caller may not use does not exist for them (404); a member who tries to manage
 * an org workspace is refused (403).
 *
 * Not a port: services build it from the ports they already have (`yield* WorkspaceAccess.make`).
 */
import { DateTime, Effect, Option } from "effect"
import { Forbidden, NotFound } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { OrgAccess, personalContext, reaches } from "../orgs/OrgAccess.js"
import type { Role } from "../orgs/Membership.js"
import type { Principal } from "../identity/Principal.js"
import { personalWorkspaceName, Workspace } from "./Workspace.js"
import { WorkspaceRepository } from "./WorkspaceRepository.js"

export const workspaceNotFound = new NotFound({ message: "Workspace not found" })

export interface Usable {
  readonly workspace: Workspace
  /** The caller's role in the workspace's org; null for a personal workspace. */
  readonly role: Role | null
}

export interface WorkspaceAccess {
  /** The workspace, when the caller may use it. */
  readonly usable: (principal: Principal, workspaceId: string) => Effect.Effect<Usable, NotFound>
  /** The workspace, when the caller may manage it: its owner, or an admin of its org. */
  readonly manageable: (principal: Principal, workspaceId: string) => Effect.Effect<Workspace, NotFound | Forbidden>
  /** The caller's personal workspace, made on first use; a key bound to an org has none. */
  readonly personal: (principal: Principal) => Effect.Effect<Workspace, NotFound>
}

export const make = Effect.gen(function*() {
  const workspaces = yield* WorkspaceRepository
  const access = yield* OrgAccess
  const ids = yield* Ids

  const usable: WorkspaceAccess["usable"] = (principal, workspaceId) =>
    workspaces.findById(workspaceId).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(workspaceNotFound),
        onSome: (workspace): Effect.Effect<Usable, NotFound> =>
          workspace.org_id !== null
            ? access.member(principal, workspace.org_id).pipe(
              Effect.map((role) => ({ workspace, role })),
              Effect.mapError(() => workspaceNotFound)
            )
            : workspace.owner_id === principal.user.id && reaches(principal, null)
            ? Effect.succeed({ workspace, role: null })
            : Effect.fail(workspaceNotFound)
      }))
    )

  const manageable: WorkspaceAccess["manageable"] = (principal, workspaceId) =>
    usable(principal, workspaceId).pipe(
      Effect.filterOrFail(
        ({ role, workspace }) => workspace.org_id === null || role === "admin",
        () => new Forbidden({ message: "Only organization admins may manage an organization's workspace" })
      ),
      Effect.map(({ workspace }) => workspace)
    )

  const personal: WorkspaceAccess["personal"] = (principal) =>
    Effect.gen(function*() {
      yield* personalContext(principal)
      const existing = yield* workspaces.findPersonal(principal.user.id)
      if (Option.isSome(existing)) return existing.value
      return yield* workspaces.ensurePersonal(
        new Workspace({
          id: yield* ids.next("wsp"),
          owner_id: principal.user.id,
          org_id: null,
          name: personalWorkspaceName,
          personal: true,
          created_at: yield* DateTime.now
        })
      )
    })

  return { usable, manageable, personal } satisfies WorkspaceAccess
})
