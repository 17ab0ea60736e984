/**
 * The change feed over PostgreSQL: one dedicated connection per instance that LISTENs. The feed
 * is live only while that connection is known to work: it is pinged every few seconds, and an
 * error, an end or a failed ping marks it not live (caches stop serving and are cleared) until a
 * new connection listens again. Notifications sent while it was down are lost, which is why
 * caches start empty each time it comes back.
 */
import { Duration, Effect, Layer, Redacted } from "effect"
import pg from "pg"
import { ChangeFeed, channel, makeDispatcher } from "./ChangeFeed.js"

export interface Options {
  readonly url: Redacted.Redacted
  /** How often the listening connection is checked (default 5 s). */
  readonly pingEvery?: Duration.DurationInput | undefined
}

const connectTimeoutMs = 3_000
const retryAfterMs = 1_000

export const layer = (options: Options) =>
  Layer.scoped(
    ChangeFeed,
    Effect.gen(function*() {
      const dispatcher = makeDispatcher()
      const pingMs = Duration.toMillis(options.pingEvery ?? Duration.seconds(5))
      let client: pg.Client | undefined
      let stopped = false
      let retry: NodeJS.Timeout | undefined
      let ping: NodeJS.Timeout | undefined

      const drop = (failed: pg.Client) => {
        if (client !== failed) return
        client = undefined
        dispatcher.setLive(false)
        clearInterval(ping)
        failed.removeAllListeners("notification")
        failed.end().catch(() => {})
        if (!stopped) retry = setTimeout(connect, retryAfterMs)
      }

      const connect = () => {
        if (stopped) return
        const next = new pg.Client({
          connectionString: Redacted.value(options.url),
          connectionTimeoutMillis: connectTimeoutMs,
          query_timeout: connectTimeoutMs,
          keepAlive: true,
          application_name: "huddle-changes"
        })
        client = next
        next.on("error", () => drop(next))
        next.on("end", () => drop(next))
        next.on("notification", (message) => {
          if (message.channel === channel && message.payload !== undefined) dispatcher.deliver(message.payload)
        })
        next.connect()
          .then(() => next.query(`LISTEN ${channel}`))
          .then(() => {
            if (client !== next) return
            dispatcher.setLive(true)
            ping = setInterval(() => {
              next.query("SELECT 1").catch(() => drop(next))
            }, pingMs)
            ping.unref()
          })
          .catch(() => drop(next))
      }

      yield* Effect.acquireRelease(
        Effect.sync(connect),
        () =>
          Effect.promise(async () => {
            stopped = true
            clearTimeout(retry)
            clearInterval(ping)
            const last = client
            client = undefined
            dispatcher.setLive(false)
            await last?.end().catch(() => {})
          })
      )
      return dispatcher.service
    })
  )
