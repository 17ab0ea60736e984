/**
 * The requests shutdown waits for: counted while their handler runs, and waited for no longer
 * than the grace, even from a finalizer (where Effect runs everything uninterruptibly).
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as InFlight from "@huddle/server/edge/InFlight"
import { Deferred, Effect, Fiber } from "effect"

/** A handler tracked as the server tracks it; it reads no request, so none is given. */
const tracked = (inFlight: InFlight.InFlight, handler: Effect.Effect<unknown>) =>
  inFlight.track(Effect.as(handler, HttpServerResponse.empty())).pipe(
    Effect.provideService(HttpServerRequest.HttpServerRequest, {} as HttpServerRequest.HttpServerRequest)
  )

describe("InFlight", () => {
  it.live("is drained once the handlers have ended, and not before", () =>
    Effect.gen(function*() {
      const inFlight = InFlight.make()
      const go = yield* Deferred.make<void>()
      const handler = yield* Effect.fork(tracked(inFlight, Deferred.await(go)))
      yield* Effect.yieldNow()
      expect(inFlight.count()).toBe(1)
      expect(yield* inFlight.drained("20 millis")).toBe(false)
      yield* Deferred.succeed(go, undefined)
      yield* Fiber.join(handler)
      expect(inFlight.count()).toBe(0)
      expect(yield* inFlight.drained("1 second")).toBe(true)
    }))

  it.live("gives up at the grace when asked from a finalizer, while a handler never ends", () =>
    Effect.gen(function*() {
      const inFlight = InFlight.make()
      yield* Effect.fork(tracked(inFlight, Effect.never))
      yield* Effect.yieldNow()
      const started = Date.now()
      // Shutdown asks from the server layer's finalizer: an uninterruptible region.
      const drained = yield* Effect.uninterruptible(inFlight.drained("100 millis"))
      expect(drained).toBe(false)
      expect(Date.now() - started).toBeLessThan(2_000)
    }))
})
