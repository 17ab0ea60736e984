/** Memories in memory; a workspace memory belongs to its workspace's owner or org, as the SQL join has it. */
import { Memory } from "@huddle/domain/memories/Memory"
import { MemoryRepository, type Selection } from "@huddle/domain/memories/MemoryRepository"
import { WorkspaceRepository } from "@huddle/domain/accounts/WorkspaceRepository"
import { Effect, Layer, Option } from "effect"

export const layer = Layer.effect(
  MemoryRepository,
  Effect.gen(function*() {
    const workspaces = yield* WorkspaceRepository
    const byId = new Map<string, Memory>()

    const selected = (selection: Selection, memory: Memory): Effect.Effect<boolean> => {
      switch (memory.scope) {
        case "personal":
          return Effect.succeed(selection.personalOf !== null && memory.author_id === selection.personalOf)
        case "org":
          return Effect.succeed(memory.org_id !== null && selection.orgIds.includes(memory.org_id))
        case "workspace": {
          const wanted = selection.workspaces
          if (wanted === null || memory.workspace_id === null) return Effect.succeed(false)
          if (wanted.workspaceId !== null && wanted.workspaceId !== memory.workspace_id) return Effect.succeed(false)
          return Effect.map(workspaces.findById(memory.workspace_id), (found) =>
            Option.isSome(found) &&
            ((wanted.ownerId !== null && found.value.owner_id === wanted.ownerId) || (found.value.org_id !== null && wanted.orgIds.includes(found.value.org_id))))
        }
      }
    }

    /** The selected memories, oldest (lowest id) first. */
    const select = (selection: Selection) =>
      Effect.filter([...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1)), (memory) => selected(selection, memory))

    return MemoryRepository.of({
      create: (memory) => Effect.sync(() => void byId.set(memory.id, memory)),
      findById: (id) => Effect.sync(() => Option.fromNullable(byId.get(id))),
      update: (id, content, at) =>
        Effect.sync(() => {
          const memory = byId.get(id)
          if (memory === undefined) return Option.none()
          const next = new Memory({ ...memory, content, updated_at: at }, { disableValidation: true })
          byId.set(id, next)
          return Option.some(next)
        }),
      delete: (id) => Effect.sync(() => byId.delete(id)),
      list: (selection, { cursor, limit }) =>
        Effect.map(select(selection), (memories) =>
          memories.filter((memory) => cursor === undefined || memory.id < cursor).reverse().slice(0, limit + 1)),
      listAll: select
    })
  })
)
