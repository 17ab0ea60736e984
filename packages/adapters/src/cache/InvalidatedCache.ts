/**
 * A per-instance cache of read-mostly rows, invalidated by the change feed. It serves an entry
 * only while the feed is live, within a time to live (a bound on anything missed), and outside
 * transactions (a transaction must read its own writes, which notify only at commit). A load
 * that overlapped any invalidation is not stored, so an entry never outlives a change that
 * committed while it was being read.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Instruments from "@huddle/domain/observability/Instruments"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { Context, Duration, Effect, Option } from "effect"
import type { ChangeFeed } from "./ChangeFeed.js"

export interface Options<A> {
  /** The cache's name in metrics (`huddle_cache_lookups_total{cache=…}`). */
  readonly name: string
  /** The tables whose changes invalidate; for each, the entries a changed key affects ("all" clears). */
  readonly invalidatedBy: Readonly<Record<string, (changedKey: string) => ReadonlyArray<string> | "all">>
  readonly timeToLive?: Duration.DurationInput | undefined
  readonly maxEntries?: number | undefined
  /** Which loaded values to keep (default: all). */
  readonly keep?: ((value: A) => boolean) | undefined
}

export interface InvalidatedCache<A> {
  readonly get: <E, R>(key: string, load: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Entries held now; for tests and metrics. */
  readonly size: () => number
}

export const make = <A>(feed: ChangeFeed["Type"], options: Options<A>, metrics: Metrics.Service = Metrics.disabled): InvalidatedCache<A> => {
  const looked = (result: "hit" | "miss" | "bypass") => metrics.add(Instruments.cacheLookups, { cache: options.name, result })
  const ttl = Duration.toMillis(options.timeToLive ?? Duration.minutes(1))
  const maxEntries = options.maxEntries ?? 10_000
  const entries = new Map<string, { readonly value: A; readonly at: number }>()
  let generation = 0

  const clear = () => {
    generation++
    entries.clear()
  }
  for (const [table, affected] of Object.entries(options.invalidatedBy)) {
    feed.subscribe(table, {
      changed: (changedKey) => {
        generation++
        const keys = affected(changedKey)
        if (keys === "all") entries.clear()
        else for (const key of keys) entries.delete(key)
      },
      reset: clear
    })
  }

  const store = (key: string, value: A) => {
    entries.delete(key)
    entries.set(key, { value, at: Date.now() })
    // Maps iterate in insertion order: the first entry is the oldest.
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
  }

  // The transaction is read off the fiber rather than asked for as a service: three fewer steps
  // of the fiber's loop a lookup, and a completion makes seven.
  const get = <E, R>(key: string, load: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((fiber) => {
      if (Option.isSome(Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)) || !feed.live()) {
        looked("bypass")
        return load
      }
      const entry = entries.get(key)
      if (entry !== undefined && Date.now() - entry.at < ttl) {
        looked("hit")
        return Effect.succeed(entry.value)
      }
      looked("miss")
      const started = generation
      return Effect.tap(load, (value) => {
        if (generation === started && feed.live() && (options.keep?.(value) ?? true)) store(key, value)
      })
    })

  return { get, size: () => entries.size }
}
