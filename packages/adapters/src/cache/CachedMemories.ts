/**
 * The memories injected into every request, cached by selection. Memories change far less often
 * than they are read; any change (or a workspace's) clears the cache rather than working out
 * which selections it touches.
 */
import type { Memory } from "@huddle/domain/memories/Memory"
import { MemoryRepository } from "@huddle/domain/memories/MemoryRepository"
import { Effect, Layer } from "effect"
import { ChangeFeed } from "./ChangeFeed.js"
import * as Metrics from "@huddle/domain/observability/Metrics"
import * as InvalidatedCache from "./InvalidatedCache.js"

export const layer = Layer.effect(
  MemoryRepository,
  Effect.gen(function*() {
    const metrics = yield* Metrics.Metrics
    const inner = yield* MemoryRepository
    const feed = yield* ChangeFeed
    const wrote = Effect.sync(() => feed.wrote("memories"))
    const selections = InvalidatedCache.make<ReadonlyArray<Memory>>(feed, {
      name: "memories",
      invalidatedBy: { memories: () => "all", workspaces: () => "all" }
    }, metrics)
    return MemoryRepository.of({
      ...inner,
      create: (memory) => Effect.ensuring(inner.create(memory), wrote),
      update: (id, content, at) => Effect.ensuring(inner.update(id, content, at), wrote),
      delete: (id) => Effect.ensuring(inner.delete(id), wrote),
      listAll: (selection) => selections.get(JSON.stringify(selection), inner.listAll(selection))
    })
  })
)
