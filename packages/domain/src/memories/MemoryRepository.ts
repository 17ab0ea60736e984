import { Context, type DateTime, type Effect, type Option } from "effect"
import type { Memory } from "./Memory.js"
import type { PageRequest } from "../shared/Page.js"

/** A set of memories: the union of the parts that are given. */
export interface Selection {
  /** The personal memories written by this user. */
  readonly personalOf: string | null
  /**
   * The workspace memories of the workspaces this user owns (none when null) and of the
   * workspaces of these orgs, or of just one of them.
   */
  readonly workspaces: {
    readonly ownerId: string | null
    readonly orgIds: ReadonlyArray<string>
    readonly workspaceId: string | null
  } | null
  /** The org memories of these organizations. */
  readonly orgIds: ReadonlyArray<string>
}

export interface Service {
  readonly create: (memory: Memory) => Effect.Effect<void>
  readonly findById: (id: string) => Effect.Effect<Option.Option<Memory>>
  /** Replaces the content; none when there is no such memory. */
  readonly update: (id: string, content: string, at: DateTime.Utc) => Effect.Effect<Option.Option<Memory>>
  /** Whether a memory was deleted. */
  readonly delete: (id: string) => Effect.Effect<boolean>
  /** The selected memories, newest first, up to `limit + 1` of them. */
  readonly list: (selection: Selection, page: PageRequest) => Effect.Effect<ReadonlyArray<Memory>>
  /** Every selected memory, oldest first. */
  readonly listAll: (selection: Selection) => Effect.Effect<ReadonlyArray<Memory>>
}

export class MemoryRepository extends Context.Tag("@huddle/domain/MemoryRepository")<MemoryRepository, Service>() {}
