/**
 * Notifications of changed rows (see migration 0006): `table:key`, delivered to every instance.
 * Caches subscribe by table. While the feed is not live (not yet listening, or its connection
 * broke and notifications may have been missed), caches must not serve what they hold; every
 * change of liveness resets them.
 */
import * as Instruments from "@huddle/domain/observability/Instruments"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { Context } from "effect"

export const channel = "huddle_changes"

export interface Subscriber {
  /** A row of the table changed; `key` is the trigger's key columns joined by `/`. */
  readonly changed: (key: string) => void
  /** Forget everything: notifications may have been missed. */
  readonly reset: () => void
}

export interface Service {
  readonly live: () => boolean
  readonly subscribe: (table: string, subscriber: Subscriber) => void
  /**
   * This instance wrote to `table` (or to anything, in a transaction), and the write has
   * committed: its caches of the table forget everything now, so that the next read here sees
   * the write even before the notification comes back.
   */
  readonly wrote: (table?: string) => void
}

export class ChangeFeed extends Context.Tag("@huddle/adapters/ChangeFeed")<ChangeFeed, Service>() {}

/** The dispatching half shared by the engines' feeds: they report payloads and liveness. */
export const makeDispatcher = (metrics: Metrics.Service = Metrics.disabled) => {
  metrics.set(Instruments.changeFeedLive, {}, 0)
  const subscribers = new Map<string, Array<Subscriber>>()
  let live = false
  const resetAll = () => {
    for (const list of subscribers.values()) for (const subscriber of list) subscriber.reset()
  }
  const service: Service = {
    live: () => live,
    subscribe: (table, subscriber) => {
      const list = subscribers.get(table)
      if (list === undefined) subscribers.set(table, [subscriber])
      else list.push(subscriber)
    },
    wrote: (table) => {
      if (table === undefined) return resetAll()
      for (const subscriber of subscribers.get(table) ?? []) subscriber.reset()
    }
  }
  return {
    service,
    /** A `table:key` payload arrived. */
    deliver: (payload: string) => {
      metrics.add(Instruments.changeFeedNotifications, {})
      const colon = payload.indexOf(":")
      if (colon < 0) return
      const list = subscribers.get(payload.slice(0, colon))
      if (list === undefined) return
      const key = payload.slice(colon + 1)
      for (const subscriber of list) subscriber.changed(key)
    },
    setLive: (next: boolean) => {
      if (next === live) return
      live = next
      metrics.set(Instruments.changeFeedLive, {}, next ? 1 : 0)
      resetAll()
    }
  }
}
