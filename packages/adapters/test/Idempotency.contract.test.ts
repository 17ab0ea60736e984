/**
 * The idempotency store's contract on every engine of `TestDatabase.availableEngines()` (PGlite
 * always; PostgreSQL in `npm run test:postgres`, where concurrent claims really race over a pool
 * of connections, as they do across instances).
 */
import { randomBytes } from "node:crypto"
import * as SqlIdempotencyStore from "@huddle/adapters/repositories/SqlIdempotencyStore"
import type { ClaimRequest } from "@huddle/domain/request/IdempotencyStore"
import { IdempotencyStore } from "@huddle/domain/request/IdempotencyStore"
import { TestDatabase } from "@huddle/testkit"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Duration, Effect, Layer } from "effect"

const t0 = DateTime.unsafeMake("2025-06-01T12:00:00.000Z")
const later = (duration: Duration.DurationInput) => DateTime.addDuration(t0, duration)
const earlier = (duration: Duration.DurationInput) => DateTime.subtractDuration(t0, duration)

/** A claim at `now` with a 30 s lock and a 24 h retention, in a scope of its own. */
const request = (overrides: Partial<ClaimRequest> = {}): ClaimRequest => {
  const now = overrides.now ?? t0
  return {
    scope: `key_${randomBytes(6).toString("hex")}`,
    key: "retry-me",
    fingerprint: "fp-1",
    now,
    lockedUntil: DateTime.addDuration(now, Duration.seconds(30)),
    expiredBefore: DateTime.subtractDuration(now, Duration.hours(24)),
    ...overrides
  }
}

/** Every byte value, NUL included: outcomes are opaque bytes. */
const outcome = new Uint8Array(Array.from({ length: 512 }, (_, i) => i % 256))

for (const engine of TestDatabase.availableEngines()) {
  layer(SqlIdempotencyStore.layer.pipe(Layer.provideMerge(TestDatabase.layer(engine))), { excludeTestServices: true })(
    `idempotency store on ${engine}`,
    (it) => {
      describe("claims", () => {
        it.effect("claims a free key once; the holder's outcome is what later claims get", () =>
          Effect.gen(function*() {
            const store = yield* IdempotencyStore
            const first = request()
            const claimed = yield* store.claim(first)
            if (claimed._tag !== "Claimed") throw new Error(`expected Claimed, got ${claimed._tag}`)
            expect(yield* store.claim({ ...first, now: later("1 second") })).toMatchObject({ _tag: "InProgress", fingerprint: "fp-1" })
            expect(yield* store.complete(claimed.claim, outcome)).toBe(true)
            const after = yield* store.claim({ ...first, fingerprint: "fp-2", now: later("1 hour") })
            expect(after).toEqual({ _tag: "Completed", fingerprint: "fp-1", outcome })
            // Completing twice, or renewing a completed claim, does nothing.
            expect(yield* store.complete(claimed.claim, new Uint8Array([1]))).toBe(false)
            expect(yield* store.renew(claimed.claim, later("1 hour"))).toBe(false)
          }))

        it.effect("gives one of many concurrent claims the key", () =>
          Effect.gen(function*() {
            const store = yield* IdempotencyStore
            const claim = request()
            const results = yield* Effect.all(Array.from({ length: 12 }, () => store.claim(claim)), { concurrency: "unbounded" })
            expect(results.filter((r) => r._tag === "Claimed")).toHaveLength(1)
            expect(results.filter((r) => r._tag === "InProgress")).toHaveLength(11)
          }))

        it.effect("keeps scopes apart", () =>
          Effect.gen(function*() {
            const store = yield* IdempotencyStore
            expect((yield* store.claim(request()))._tag).toBe("Claimed")
            expect((yield* store.claim(request()))._tag).toBe("Claimed")
          }))
      })

      describe("locks", () => {
        it.effect("frees a key whose claim's lock lapsed (a crashed holder), and the old holder loses it", () =>
          Effect.gen(function*() {
            const store = yield* IdempotencyStore
            const crashed = request()
            const old = yield* store.claim(crashed)
            if (old._tag !== "Claimed") throw new Error("expected Claimed")
            const retry = yield* store.claim(request({ scope: crashed.scope, fingerprint: "fp-other", now: later("31 seconds") }))
            if (retry._tag !== "Claimed") throw new Error(`expected the lapsed claim to be taken over, got ${retry._tag}`)
            expect(yield* store.complete(old.claim, outcome)).toBe(false)
            expect(yield* store.renew(old.claim, later("2 minutes"))).toBe(false)
            yield* store.release(old.claim)
            expect(yield* store.complete(retry.claim, outcome)).toBe(true)
          }))

        it.effect("holds a renewed claim past its first lock", () =>
          Effect.gen(function*() {
            const store = yield* IdempotencyStore
            const first = request()
            const claimed = yield* store.claim(first)
            if (claimed._tag !== "Claimed") throw new Error("expected Claimed")
            expect(yield* store.renew(claimed.claim, later("90 seconds"))).toBe(true)
            expect((yield* store.claim({ ...first, now: later("60 seconds") }))._tag).toBe("InProgress")
            expect((yield* store.claim({ ...first, now: later("91 seconds") }))._tag).toBe("Claimed")
          }))

        it.effect("frees a released key at once", () =>
          Effect.gen(function*() {
            const store = yield* IdempotencyStore
            const first = request()
            const claimed = yield* store.claim(first)
            if (claimed._tag !== "Claimed") throw new Error("expected Claimed")
            yield* store.release(claimed.claim)
            expect((yield* store.claim({ ...first, fingerprint: "fp-2" }))._tag).toBe("Claimed")
          }))
      })

      describe("retention", () => {
        it.effect("ignores a record past its retention, and purges it", () =>
          Effect.gen(function*() {
            const store = yield* IdempotencyStore
            const first = request()
            const claimed = yield* store.claim(first)
            if (claimed._tag !== "Claimed") throw new Error("expected Claimed")
            yield* store.complete(claimed.claim, outcome)
            const nextDay = later("25 hours")
            const again = yield* store.claim(request({ scope: first.scope, fingerprint: "fp-2", now: nextDay }))
            expect(again._tag).toBe("Claimed")

            const stale = request({ now: earlier("2 days") })
            const staleClaim = yield* store.claim(stale)
            if (staleClaim._tag !== "Claimed") throw new Error("expected Claimed")
            yield* store.complete(staleClaim.claim, outcome)
            expect(yield* store.purge(earlier("1 day"), t0)).toBeGreaterThanOrEqual(1)
            expect((yield* store.claim(request({ scope: stale.scope, fingerprint: "fp-3" })))._tag).toBe("Claimed")
            // A claim still held is never purged, however old.
            expect(yield* store.purge(later("365 days"), t0)).toBeGreaterThanOrEqual(0)
            expect((yield* store.claim(request({ scope: stale.scope, fingerprint: "fp-3" })))._tag).toBe("InProgress")
          }))
      })
    }
  )
}
