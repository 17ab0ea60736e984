import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { describe, expect, it } from "@effect/vitest"
import { ChangeFeed } from "@huddle/adapters"
import * as InvalidatedCache from "@huddle/adapters/cache/InvalidatedCache"
import { Deferred, Effect, Fiber } from "effect"

/** A cache over a feed driven by the test; `reads` counts the loads that reached "storage". */
const setup = () => {
  const feed = ChangeFeed.makeDispatcher()
  feed.setLive(true)
  const cache = InvalidatedCache.make<string>(feed.service, {
    name: "rows",
    invalidatedBy: { rows: (key) => [key], everything: () => "all" },
    timeToLive: "1 hour"
  })
  const state = { reads: 0, value: "v1" }
  const load = Effect.sync(() => {
    state.reads++
    return state.value
  })
  return { feed, cache, state, load }
}

describe("InvalidatedCache", () => {
  it.effect("serves what it loaded until the key is notified, then loads again", () =>
    Effect.gen(function*() {
      const { cache, feed, load, state } = setup()
      expect(yield* cache.get("a", load)).toBe("v1")
      expect(yield* cache.get("a", load)).toBe("v1")
      expect(state.reads).toBe(1)
      state.value = "v2"
      feed.deliver("rows:b")
      expect(yield* cache.get("a", load)).toBe("v1")
      feed.deliver("rows:a")
      expect(yield* cache.get("a", load)).toBe("v2")
      expect(state.reads).toBe(2)
      feed.deliver("everything:x")
      expect(yield* cache.get("a", load)).toBe("v2")
      expect(state.reads).toBe(3)
    }))

  it.effect("serves nothing while the feed is not live, and starts empty when it is back", () =>
    Effect.gen(function*() {
      const { cache, feed, load, state } = setup()
      yield* cache.get("a", load)
      feed.setLive(false)
      yield* cache.get("a", load)
      yield* cache.get("a", load)
      expect(state.reads).toBe(3)
      expect(cache.size()).toBe(0)
      feed.setLive(true)
      yield* cache.get("a", load)
      yield* cache.get("a", load)
      expect(state.reads).toBe(4)
    }))

  it.effect("serves nothing inside a transaction, which must read its own writes, and keeps nothing it read there", () =>
    Effect.gen(function*() {
      const { cache, load, state } = setup()
      expect(yield* cache.get("a", load)).toBe("v1")
      state.value = "v2 (written in the transaction)"
      // Any connection will do: the cache only asks whether the fiber is in a transaction.
      const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provideService(effect, SqlClient.TransactionConnection, [{} as Connection, 0])
      expect(yield* inTransaction(cache.get("a", load))).toBe("v2 (written in the transaction)")
      expect(yield* inTransaction(cache.get("b", load))).toBe("v2 (written in the transaction)")
      expect(state.reads).toBe(3)
      // Outside it, the entry loaded before is served; what was read inside was not kept.
      expect(yield* cache.get("a", load)).toBe("v1")
      expect(cache.size()).toBe(1)
    }))

  it.effect("does not keep a value whose load overlapped a change", () =>
    Effect.gen(function*() {
      const { cache, feed, state } = setup()
      const gate = yield* Deferred.make<void>()
      const slow = Effect.zipRight(Deferred.await(gate), Effect.sync(() => {
        state.reads++
        return "read before the change"
      }))
      const fiber = yield* Effect.fork(cache.get("a", slow))
      yield* Effect.yieldNow()
      feed.deliver("rows:a")
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(fiber)).toBe("read before the change")
      expect(cache.size()).toBe(0)
    }))
})
