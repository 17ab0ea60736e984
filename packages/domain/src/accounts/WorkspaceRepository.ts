import { Context, type Effect, type Option } from "effect"
import type { Workspace } from "./Workspace.js"

export interface Service {
  readonly findById: (id: string) => Effect.Effect<Option.Option<Workspace>>
  readonly findPersonal: (ownerId: string) => Effect.Effect<Option.Option<Workspace>>
  /**
   * Stores `candidate` as its owner's personal workspace unless the owner has one already;
   * returns the one that exists afterwards (so concurrent callers agree on one).
   */
  readonly ensurePersonal: (candidate: Workspace) => Effect.Effect<Workspace>
}

export class WorkspaceRepository extends Context.Tag("@huddle/domain/WorkspaceRepository")<
  WorkspaceRepository,
  Service
>() {}
