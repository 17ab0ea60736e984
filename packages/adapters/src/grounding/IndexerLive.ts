/**
 * The `RepositoryIndexer` port over the indexer (`Indexer.index`): progress is sampled twice a
 * second while a run goes (the indexer reports synchronously, the port's callback is an effect),
 * and the indexer's own errors become `IndexFailed` with their message.
 */
import { IndexFailed, RepositoryIndexer } from "@huddle/domain/grounding/RepositoryIndexer"
import { Effect, Layer, Schedule } from "effect"
import * as Indexer from "./Indexer.js"

export const layer = Layer.succeed(RepositoryIndexer, {
  index: (root, previous, progress) =>
    Effect.scoped(Effect.gen(function*() {
      const latest = { seen: 0, processed: 0 }
      const report = Effect.suspend(() => progress({ seen: latest.seen, indexed: latest.processed, skipped: 0 }))
      yield* Effect.forkScoped(Effect.repeat(report, Schedule.spaced("500 millis")))
      const result = yield* Indexer.index(root, {
        previous,
        // The sources give the real path they checked (a local path's, or the clone's).
        within: root,
        onProgress: (p) => {
          latest.seen = p.seen
          latest.processed = p.processed
        }
      }).pipe(Effect.mapError((error) => new IndexFailed({ message: error.message })))
      const { files, skipped } = result.snapshot
      yield* progress({ seen: latest.seen, indexed: files.length, skipped: skipped.length })
      return { snapshot: result.snapshot, changed: result.changes }
    }))
})
