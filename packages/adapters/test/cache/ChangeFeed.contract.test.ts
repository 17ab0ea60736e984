/**
 * The change feed. On every engine: the triggers of migration 0006 notify the key of a changed
 * row, and the feed hands it to the table's subscribers. Over a real PostgreSQL (`npm run
 * test:postgres`): a listening connection that stalls (a TCP proxy stops forwarding, as a hung
 * network would) or breaks (its backend terminated) takes the feed down, so caches stop serving,
 * within the heartbeat bound; and it comes back by itself.
 */
import { type Socket, createServer, connect } from "node:net"
import { SqlClient } from "@effect/sql"
import { ChangeFeed, Database, PostgresChangeFeed } from "@huddle/adapters"
import { TestDatabase } from "@huddle/testkit"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const waitFor = async (what: string, condition: () => boolean, withinMs: number) => {
  const started = Date.now()
  while (!condition()) {
    if (Date.now() - started > withinMs) throw new Error(`not ${what} within ${withinMs} ms`)
    await new Promise((done) => setTimeout(done, 20))
  }
  return Date.now() - started
}

/**
 * A TCP proxy whose traffic can be held (connections stay open, nothing flows) and let go. With
 * `slowing`, its link slows down without ever stopping: what the server sends on a connection
 * reaches the client later and later (half a millisecond more per millisecond the connection has
 * been open), as over a link whose queue keeps growing.
 */
const proxyTo = async (target: URL, options: { readonly slowing?: boolean } = {}) => {
  const sockets = new Set<Socket>()
  const pumps = new Set<NodeJS.Timeout>()
  let held = false
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      if (held) socket.pause()
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream)
    if (!options.slowing) {
      upstream.pipe(client)
      return
    }
    const opened = Date.now()
    const queue: Array<{ readonly at: number; readonly chunk: Buffer }> = []
    // One queue per connection, written in order.
    const pump = setInterval(() => {
      while (queue.length > 0 && queue[0]!.at <= Date.now()) client.write(queue.shift()!.chunk)
    }, 5)
    pumps.add(pump)
    upstream.on("close", () => {
      clearInterval(pump)
      pumps.delete(pump)
    })
    upstream.on("data", (chunk: Buffer) => queue.push({ at: Date.now() + (Date.now() - opened) / 2, chunk }))
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const address = server.address()
  const url = new URL(target)
  url.host = `127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  return {
    url: url.toString(),
    hold: () => {
      held = true
      for (const socket of sockets) socket.pause()
    },
    release: () => {
      held = false
      for (const socket of sockets) socket.resume()
    },
    close: () => {
      for (const pump of pumps) clearInterval(pump)
      for (const socket of sockets) socket.destroy()
      server.close()
    }
  }
}

describe.each(TestDatabase.availableEngines())("change notifications on %s", (engine) => {
  it("sends the key of each changed row of a cached table, at commit, to its subscribers", async () => {
    const database = await TestDatabase.fresh(engine)
    const program = Effect.gen(function*() {
      const feed = yield* ChangeFeed.ChangeFeed
      const sql = yield* SqlClient.SqlClient
      const seen: Array<string> = []
      feed.subscribe("user_preferences", { changed: (key) => seen.push(key), reset: () => {} })
      yield* sql`INSERT INTO users (id, email, password_hash, created_at) VALUES ('usr_feed', 'feed@example.com', 'x', now())`
      yield* sql`INSERT INTO user_preferences (user_id, preferences, updated_at) VALUES ('usr_feed', '{}', now())`
      yield* sql`UPDATE user_preferences SET preferences = '{"mode":"single"}' WHERE user_id = 'usr_feed'`
      // Notifications arrive after their commit; give them a moment on PostgreSQL.
      yield* Effect.promise(() => waitFor("two notifications", () => seen.length >= 2, 2_000))
      return { live: feed.live(), seen }
    })
    try {
      const outcome = await Effect.runPromise(Effect.scoped(Effect.provide(program, Database.layer(database.engine))))
      expect(outcome.live).toBe(true)
      expect(outcome.seen).toEqual(["usr_feed", "usr_feed"])
    } finally {
      await database.drop()
    }
  }, 30_000)
})

describe.each(TestDatabase.availableEngines().filter((engine) => engine === "postgres"))("the change feed on %s", () => {
  let database: TestDatabase.FreshDatabase
  let proxy: Awaited<ReturnType<typeof proxyTo>>
  let scope: Scope.CloseableScope
  let feed: ChangeFeed.ChangeFeed["Type"]
  let direct: pg.Client
  const changed: Array<string> = []
  let resets = 0

  beforeAll(async () => {
    database = await TestDatabase.fresh("postgres")
    if (database.engine._tag !== "Postgres") throw new Error("expected PostgreSQL")
    const url = Redacted.value(database.engine.url)
    proxy = await proxyTo(new URL(url))
    direct = new pg.Client({ connectionString: url })
    await direct.connect()
    scope = Effect.runSync(Scope.make())
    const layer = PostgresChangeFeed.layer({ url: Redacted.make(proxy.url), pingEvery: "100 millis" })
    feed = await Effect.runPromise(
      Layer.buildWithScope(layer, scope).pipe(Effect.map((context) => Context.get(context, ChangeFeed.ChangeFeed)))
    )
    feed.subscribe("things", { changed: (key) => changed.push(key), reset: () => resets++ })
    await waitFor("live at start", () => feed.live(), 5_000)
  }, 30_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await direct.end()
    proxy.close()
    await database.drop()
  })

  const notify = (payload: string) => direct.query("SELECT pg_notify($1, $2)", [ChangeFeed.channel, payload])

  it("delivers the keys of changed rows to the table's subscribers", async () => {
    await notify("things:a/b")
    await notify("other:c")
    await waitFor("delivered", () => changed.includes("a/b"), 2_000)
    expect(changed).not.toContain("c")
  })

  it("goes down within three heartbeats when its connection stalls, and comes back when it flows again", async () => {
    const resetsBefore = resets
    proxy.hold()
    const downAfter = await waitFor("down after the stall", () => !feed.live(), 2_000)
    expect(downAfter).toBeLessThan(1_000)
    expect(resets).toBeGreaterThan(resetsBefore)
    proxy.release()
    await waitFor("live again", () => feed.live(), 10_000)
    await notify("things:after-stall")
    await waitFor("delivered after the stall", () => changed.includes("after-stall"), 2_000)
  }, 20_000)

  it("goes down at once when its backend is terminated, and comes back", async () => {
    await direct.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'huddle-changes' AND datname = current_database()")
    await waitFor("down after the termination", () => !feed.live(), 1_000)
    await waitFor("live again", () => feed.live(), 10_000)
    await notify("things:after-restart")
    await waitFor("delivered after the restart", () => changed.includes("after-restart"), 2_000)
  }, 20_000)
})

describe.each(TestDatabase.availableEngines().filter((engine) => engine === "postgres"))("the change feed's bound on %s", () => {
  it("while live, has delivered every change committed more than three heartbeats ago, however slow its link gets", async () => {
    const pingMs = 100
    const boundMs = 3 * pingMs
    const database = await TestDatabase.fresh("postgres")
    if (database.engine._tag !== "Postgres") throw new Error("expected PostgreSQL")
    const url = Redacted.value(database.engine.url)
    // Heartbeats keep coming back, each later than the one before: the link never stalls.
    const proxy = await proxyTo(new URL(url), { slowing: true })
    const direct = new pg.Client({ connectionString: url })
    await direct.connect()
    const scope = Effect.runSync(Scope.make())
    try {
      const feed = await Effect.runPromise(
        Layer.buildWithScope(PostgresChangeFeed.layer({ url: Redacted.make(proxy.url), pingEvery: `${pingMs} millis` }), scope).pipe(
          Effect.map((context) => Context.get(context, ChangeFeed.ChangeFeed))
        )
      )
      const delivered = new Set<string>()
      // Changes committed before the feed last (re)started are not its to deliver: caches start empty then.
      let startedAt = Date.now()
      feed.subscribe("things", { changed: (key) => delivered.add(key), reset: () => (startedAt = Date.now()) })
      /** Each change: when it was sent (before its commit) and when its commit was confirmed (after it). */
      const committed: Array<{ readonly key: string; readonly sent: number; readonly at: number }> = []
      const stale = new Set<string>()
      let liveChecks = 0
      const until = Date.now() + 4_000
      for (let i = 0; Date.now() < until; i++) {
        const sent = Date.now()
        await direct.query("SELECT pg_notify($1, $2)", [ChangeFeed.channel, `things:k${i}`])
        committed.push({ key: `k${i}`, sent, at: Date.now() })
        await new Promise((done) => setTimeout(done, 20))
        const now = Date.now()
        if (!feed.live()) continue
        liveChecks++
        for (const change of committed) {
          if (change.sent > startedAt && change.at < now - boundMs && !delivered.has(change.key)) stale.add(change.key)
        }
      }
      expect([...stale], `live while changes older than ${boundMs} ms were undelivered`).toEqual([])
      // It was live at times (before its first late heartbeat), so the checks above did check.
      expect(liveChecks).toBeGreaterThan(0)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await direct.end()
      proxy.close()
      await database.drop()
    }
  }, 30_000)
})
