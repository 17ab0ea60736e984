/**
 * API key authentication without a database round trip: active keys by prefix, cached until a
 * change to the key (revocation) or its user is notified. Unknown prefixes are not cached, so
 * guessing cannot fill the cache. Use is recorded at most once a minute per key and instance.
 */
import { type ActiveApiKey, ApiKeyRepository } from "@huddle/domain/identity/ApiKeyRepository"
import { DateTime, Effect, Layer, Option } from "effect"
import { ChangeFeed } from "./ChangeFeed.js"
import * as Metrics from "@huddle/domain/observability/Metrics"
import * as InvalidatedCache from "./InvalidatedCache.js"

const touchEveryMs = 60_000
const maxTouched = 100_000

export const layer = Layer.effect(
  ApiKeyRepository,
  Effect.gen(function*() {
    const metrics = yield* Metrics.Metrics
    const inner = yield* ApiKeyRepository
    const feed = yield* ChangeFeed
    const active = InvalidatedCache.make<Option.Option<ActiveApiKey>>(feed, {
      name: "api_keys",
      invalidatedBy: { api_keys: (prefix) => [prefix], users: () => "all" },
      keep: Option.isSome
    }, metrics)
    const touched = new Map<string, number>()

    return ApiKeyRepository.of({
      ...inner,
      create: (key) => Effect.ensuring(inner.create(key), Effect.sync(() => feed.wrote("api_keys"))),
      revoke: (userId, id, at) => Effect.ensuring(inner.revoke(userId, id, at), Effect.sync(() => feed.wrote("api_keys"))),
      revokeAll: (userId, at) => Effect.ensuring(inner.revokeAll(userId, at), Effect.sync(() => feed.wrote("api_keys"))),
      revokeBoundTo: (userId, orgId, at) => Effect.ensuring(inner.revokeBoundTo(userId, orgId, at), Effect.sync(() => feed.wrote("api_keys"))),
      findActive: (prefix) => active.get(prefix, inner.findActive(prefix)),
      touch: (id, at) => {
        const now = DateTime.toEpochMillis(at)
        const last = touched.get(id)
        if (last !== undefined && now - last < touchEveryMs) return Effect.void
        if (touched.size >= maxTouched) touched.clear()
        touched.set(id, now)
        return inner.touch(id, at)
      }
    })
  })
)
