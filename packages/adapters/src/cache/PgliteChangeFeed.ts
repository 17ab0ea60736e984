/**
 * The change feed of the embedded database: PGlite runs in this process, so its notifications
 * cannot be missed; the feed is live as soon as it listens.
 */
import { Effect, Layer } from "effect"
import { Pglite } from "../sql/PgliteClient.js"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { ChangeFeed, channel, makeDispatcher } from "./ChangeFeed.js"

export const layer = Layer.scoped(
  ChangeFeed,
  Effect.gen(function*() {
    const db = yield* Pglite
    const dispatcher = makeDispatcher(yield* Metrics.Metrics)
    yield* Effect.acquireRelease(
      Effect.promise(() => db.listen(channel, dispatcher.deliver)),
      (unlisten) => Effect.promise(() => unlisten()).pipe(Effect.ignore)
    )
    dispatcher.setLive(true)
    return dispatcher.service
  })
)
