import { Context, type Effect, type Option } from "effect"
import type { PageRequest } from "../shared/Page.js"
import type { Workspace } from "./Workspace.js"

export interface Service {
  readonly findById: (id: string) => Effect.Effect<Option.Option<Workspace>>
  readonly findPersonal: (ownerId: string) => Effect.Effect<Option.Option<Workspace>>
  /**
   * Stores `candidate` as its owner's personal workspace unless the owner has one already;
   * returns the one that exists afterwards (so concurrent callers agree on one).
   */
  readonly ensurePersonal: (candidate: Workspace) => Effect.Effect<Workspace>
  /** Stores an org workspace; false (and nothing stored) when the org has one by that name, in any case. */
  readonly createForOrg: (workspace: Workspace) => Effect.Effect<boolean>
  /** Whether a workspace was deleted (with what is in it: memories, repository, snapshot). */
  readonly delete: (id: string) => Effect.Effect<boolean>
  /** The personal workspace of `ownerId` (none when null) and the workspaces of `orgIds`, newest first, up to `limit + 1`. */
  readonly list: (
    selection: { readonly ownerId: string | null; readonly orgIds: ReadonlyArray<string> },
    page: PageRequest
  ) => Effect.Effect<ReadonlyArray<Workspace>>
}

export class WorkspaceRepository extends Context.Tag("@huddle/domain/WorkspaceRepository")<
  WorkspaceRepository,
  Service
>() {}
