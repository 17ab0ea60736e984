/**
 * The memories injected into every request, cached by selection. Memories change far less often
 * than they are read; any change (or a workspace's) clears the cache rather than working out
 * which selections it touches.
 */
import type { Memory } from "@huddle/domain/Memory"
import { MemoryRepository } from "@huddle/domain/ports/MemoryRepository"
import { Effect, Layer } from "effect"
import { ChangeFeed } from "./ChangeFeed.js"
import * as InvalidatedCache from "./InvalidatedCache.js"

export const layer = Layer.effect(
  MemoryRepository,
  Effect.gen(function*() {
    const inner = yield* MemoryRepository
    const selections = InvalidatedCache.make<ReadonlyArray<Memory>>(yield* ChangeFeed, {
      invalidatedBy: { memories: () => "all", workspaces: () => "all" }
    })
    return MemoryRepository.of({
      ...inner,
      listAll: (selection) => selections.get(JSON.stringify(selection), inner.listAll(selection))
    })
  })
)
