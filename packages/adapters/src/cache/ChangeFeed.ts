/**
 * Notifications of changed rows (see migration 0006): `table:key`, delivered to every instance.
 * Caches subscribe by table. While the feed is not live (not yet listening, or its connection
 * broke and notifications may have been missed), caches must not serve what they hold; every
 * change of liveness resets them.
 */
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
}

export class ChangeFeed extends Context.Tag("@huddle/adapters/ChangeFeed")<ChangeFeed, Service>() {}

/** The dispatching half shared by the engines' feeds: they report payloads and liveness. */
export const makeDispatcher = () => {
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
    }
  }
  return {
    service,
    /** A `table:key` payload arrived. */
    deliver: (payload: string) => {
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
      resetAll()
    }
  }
}
