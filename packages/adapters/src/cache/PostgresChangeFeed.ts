/**
 * The change feed over PostgreSQL: one dedicated connection per instance that LISTENs. The feed
 * is live only while that connection is known to deliver: every `pingEvery` it notifies itself a
 * heartbeat carrying the time it was sent, and the feed counts as live only while the last
 * heartbeat that came back was sent within three periods. PostgreSQL delivers notifications in
 * commit order, so that heartbeat's return proves every change committed before it was sent has
 * been delivered: while live, no cache misses a change older than three periods, however slow
 * the connection. A stalled, slowed or broken connection (or a pooler that does not pass LISTEN
 * through) therefore stops the caches within that bound; an error or an end stops them at once.
 * Then a new connection is made; caches start empty each time it comes back, since
 * notifications sent meanwhile are lost. LISTEN needs a direct (or session-pooled) connection.
 */
import { Duration, Effect, Layer, Redacted, Runtime } from "effect"
import pg from "pg"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { ChangeFeed, channel, makeDispatcher } from "./ChangeFeed.js"

export interface Options {
  readonly url: Redacted.Redacted
  /** How often the listening connection proves it still delivers (default 1 s). */
  readonly pingEvery?: Duration.DurationInput | undefined
}

const connectTimeoutMs = 3_000
const retryAfterMs = 1_000

export const layer = (options: Options) =>
  Layer.scoped(
    ChangeFeed,
    Effect.gen(function*() {
      const dispatcher = makeDispatcher(yield* Metrics.Metrics)
      // The connection's callbacks run outside any fiber; they log through the layer's runtime.
      const log = Runtime.runFork(yield* Effect.runtime<never>())
      const pingMs = Duration.toMillis(options.pingEvery ?? Duration.seconds(1))
      const heartbeat = `ping:${process.pid}:${Math.random().toString(36).slice(2)}:`
      /** When the last heartbeat that came back was sent (or when listening began). */
      let lastBeat = 0
      let reconnecting = false
      let client: pg.Client | undefined
      let stopped = false
      let retry: NodeJS.Timeout | undefined
      let ping: NodeJS.Timeout | undefined

      const drop = (failed: pg.Client) => {
        if (client !== failed) return
        client = undefined
        if (dispatcher.service.live() && !stopped) {
          log(Effect.logWarning("huddle-changes: the change feed stopped; caches are off until it reconnects"))
        }
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
          if (message.channel !== channel || message.payload === undefined) return
          if (message.payload.startsWith(heartbeat)) lastBeat = Math.max(lastBeat, Number(message.payload.slice(heartbeat.length)))
          else dispatcher.deliver(message.payload)
        })
        next.connect()
          .then(() => next.query(`LISTEN ${channel}`))
          .then(() => {
            if (client !== next) return
            lastBeat = Date.now()
            if (reconnecting) log(Effect.logInfo("huddle-changes: the change feed is listening again; caches are on"))
            reconnecting = true
            dispatcher.setLive(true)
            ping = setInterval(() => {
              if (Date.now() - lastBeat > 3 * pingMs) return drop(next)
              next.query("SELECT pg_notify($1, $2)", [channel, `${heartbeat}${Date.now()}`]).catch(() => drop(next))
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
      // Between two pings, a silent connection is caught when a cache asks.
      return {
        ...dispatcher.service,
        live: () => {
          if (!dispatcher.service.live()) return false
          if (Date.now() - lastBeat <= 3 * pingMs) return true
          if (client !== undefined) drop(client)
          return false
        }
      }
    })
  )
