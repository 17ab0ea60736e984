/**
 * The REAL built server (`node packages/server/dist/main.js`) as a child process, once per
 * engine of `TestDatabase.availableEngines()`: data survives a restart, SIGTERM drains open
 * requests and exits 0, and start-up stays quick. `npm test` builds the server first (`tsc -b`).
 *
 * The children are always killed in `afterEach`, so a failing test leaves no process behind.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Accounts, TestDatabase, TestServer } from "@huddle/testkit"
import { Redacted } from "effect"
import { afterAll, afterEach, describe, expect, it } from "vitest"

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..")
const mainJs = join(repoRoot, "packages/server/dist/main.js")

/** Environment variables of the server that the test process must not pass on. */
const serverVariables = [
  "HOST",
  "PORT",
  "DATABASE_URL",
  "HUDDLE_DATA_DIR",
  "HUDDLE_STARTER_CREDITS",
  "HUDDLE_SHUTDOWN_GRACE",
  "HUDDLE_SESSION_TTL",
  "HUDDLE_MAX_BODY_BYTES",
  "LOG_LEVEL",
  "REDIS_URL",
  "NODE_OPTIONS"
]

const starterCredits = 250

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

const freePort = () =>
  new Promise<number>((done, fail) => {
    const probe = net.createServer()
    probe.unref()
    probe.once("error", fail)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => (typeof address === "object" && address ? done(address.port) : fail(new Error("no port"))))
    })
  })

/** One GET over a new connection; resolves with the status, rejects on any error or timeout. */
const getStatus = (url: string, timeoutMs: number) =>
  new Promise<number>((done, fail) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume()
      res.once("end", () => done(res.statusCode ?? 0))
      res.once("error", fail)
    })
    req.once("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.once("error", fail)
  })

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

interface Running {
  readonly child: ChildProcess
  readonly url: string
  readonly port: number
  /** Milliseconds from spawn to the first 200 from /readyz. */
  readonly readyMs: number
  readonly output: () => string
  readonly exited: Promise<Exit>
  /** Sends SIGTERM and waits for the exit. */
  readonly stop: (timeoutMs?: number) => Promise<Exit>
}

const running = new Set<Running>()
const cleanups: Array<() => Promise<void> | void> = []

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string) => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Error(`${what}: no result within ${ms} ms`)), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

const startServer = async (storage: Record<string, string>, cwd: string, readyWithinMs = 30_000): Promise<Running> => {
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of serverVariables) delete env[name]
  Object.assign(env, {
    HOST: "127.0.0.1",
    PORT: String(port),
    HUDDLE_STARTER_CREDITS: String(starterCredits),
    HUDDLE_SHUTDOWN_GRACE: "5 seconds",
    LOG_LEVEL: "Info",
    ...storage
  })
  const started = performance.now()
  const child = spawn(process.execPath, [mainJs], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
  const chunks: Array<string> = []
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => chunks.push(chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => chunks.push(chunk))
  const output = () => chunks.join("")
  const exited = new Promise<Exit>((done) => {
    child.once("exit", (code, signal) => done({ code, signal }))
    child.once("error", (error) => {
      chunks.push(`spawn error: ${error.message}\n`)
      done({ code: null, signal: null })
    })
  })
  const url = `http://127.0.0.1:${port}`
  const server: Running = {
    child,
    url,
    port,
    readyMs: Number.NaN,
    output,
    exited,
    stop: (timeoutMs = 15_000) => {
      child.kill("SIGTERM")
      return withTimeout(exited, timeoutMs, `server exit after SIGTERM\n${output()}`)
    }
  }
  running.add(server)
  void exited.then(() => running.delete(server))

  // The server listens before its request handler is attached (the database comes up in
  // between), and a request made in that window is never answered: poll with a short timeout.
  let exit: Exit | undefined
  void exited.then((e) => (exit = e))
  const deadline = started + readyWithinMs
  for (;;) {
    if (exit) throw new Error(`server exited (code ${exit.code}, signal ${exit.signal}) before it was ready:\n${output()}`)
    if (performance.now() > deadline) throw new Error(`server not ready within ${readyWithinMs} ms:\n${output()}`)
    const status = await getStatus(`${url}/readyz`, 300).catch(() => 0)
    if (status === 200) break
    await sleep(20)
  }
  return { ...server, readyMs: Math.round(performance.now() - started) }
}

afterEach(async () => {
  const children = [...running]
  running.clear()
  for (const server of children) {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL")
  }
  await Promise.all(children.map((server) => withTimeout(server.exited, 5_000, "killed server exit").catch(() => undefined)))
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

afterAll(() => {
  // Belt and braces: nothing may outlive the file.
  for (const server of running) server.child.kill("SIGKILL")
})

/** Storage for one test: a fresh PGlite data directory, or a fresh PostgreSQL database. */
const freshStorage = async (engine: TestDatabase.EngineName) => {
  const dir = mkdtempSync(join(tmpdir(), "huddle-process-"))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  if (engine === "pglite") return { cwd: dir, env: { HUDDLE_DATA_DIR: join(dir, "data") } }
  const database = await TestDatabase.fresh("postgres")
  cleanups.push(() => database.drop())
  if (database.engine._tag !== "Postgres") throw new Error("expected a PostgreSQL database")
  return { cwd: dir, env: { DATABASE_URL: Redacted.value(database.engine.url) } }
}

const signup = (url: string, email: string, password: string) =>
  TestServer.request(url, "POST", "/v1/auth/signup", { body: { email, password } })
const login = (url: string, email: string, password: string) =>
  TestServer.request(url, "POST", "/v1/auth/login", { body: { email, password } })

it("finds the built server", () => {
  expect(existsSync(mainJs), `${mainJs} is missing: run tsc -b first`).toBe(true)
})

describe.each(TestDatabase.availableEngines())("the server process on %s", (engine) => {
  it("keeps users, passwords, API keys and credits across a restart", async () => {
    const storage = await freshStorage(engine)
    const first = await startServer(storage.env, storage.cwd)
    const email = Accounts.uniqueEmail("restart")
    const password = "a password that survives"
    const created = await signup(first.url, email, password)
    expect(created.status, created.text).toBe(201)
    const session = await login(first.url, email, password)
    expect(session.status, session.text).toBe(200)
    const key = await TestServer.request(first.url, "POST", "/v1/api-keys", { token: session.body.token, body: { name: "k" } })
    expect(key.status, key.text).toBe(201)
    expect(typeof key.body.key).toBe("string")
    const before = await TestServer.request(first.url, "GET", "/v1/me", { token: key.body.key })
    expect(before.status, before.text).toBe(200)
    expect(before.body.credits).toEqual({ balance: starterCredits })
    expect(await first.stop(), first.output()).toEqual({ code: 0, signal: null })

    const second = await startServer(storage.env, storage.cwd)
    console.log(`[${engine}] start-up: ${first.readyMs} ms on new storage, ${second.readyMs} ms after a restart`)
    const again = await login(second.url, email, password)
    expect(again.status, again.text).toBe(200)
    const after = await TestServer.request(second.url, "GET", "/v1/me", { token: key.body.key })
    expect(after.status, after.text).toBe(200)
    expect(after.body.user.id).toBe(created.body.user.id)
    expect(after.body.credits).toEqual(before.body.credits)
    expect(await second.stop(), second.output()).toEqual({ code: 0, signal: null })
  }, 50_000)

  it("on SIGTERM stops accepting, finishes the open request and exits 0", async () => {
    const storage = await freshStorage(engine)
    const server = await startServer(storage.env, storage.cwd)
    const body = JSON.stringify({ email: Accounts.uniqueEmail("drain"), password: "a long password" })
    const half = Math.floor(body.length / 2)

    let sendRest: () => void = () => {}
    const response = new Promise<{ status: number; text: string }>((done, fail) => {
      const req = http.request(`${server.url}/v1/auth/signup`, {
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
      }, (res) => {
        let text = ""
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
        res.once("end", () => done({ status: res.statusCode ?? 0, text }))
        res.once("error", fail)
      })
      req.once("error", fail)
      req.write(body.slice(0, half))
      // Sent on SIGTERM + 300 ms, below.
      sendRest = () => req.end(body.slice(half))
    })
    // Awaited below; until then a failure must not count as an unhandled rejection.
    response.catch(() => {})
    // Let the server take the request in (headers and the first half of the body) first.
    await sleep(300)

    server.child.kill("SIGTERM")
    await sleep(300)
    expect(server.child.exitCode, "the server exited with a request still open").toBeNull()
    // A new connection now must not be served.
    const probe = await getStatus(`${server.url}/healthz`, 1_000).then(
      (status) => `answered ${status}`,
      (error: NodeJS.ErrnoException) => `failed: ${error.code ?? error.message}`
    )
    console.log(`[${engine}] a new connection after SIGTERM: ${probe}`)
    expect(probe).toMatch(/^failed/)

    sendRest()
    const res = await withTimeout(response, 10_000, "the open sign-up request")
    expect(res.status, res.text).toBe(201)
    expect(await withTimeout(server.exited, 10_000, `server exit\n${server.output()}`), server.output()).toEqual({
      code: 0,
      signal: null
    })
  }, 40_000)

  // Start-up time is a promise of the embedded default; PostgreSQL's own start is not ours.
  if (engine === "pglite") it("starts, on new storage and again, and reports how long it took", async () => {
    const storage = await freshStorage(engine)
    const first = await startServer(storage.env, storage.cwd)
    expect(await first.stop(), first.output()).toEqual({ code: 0, signal: null })
    const second = await startServer(storage.env, storage.cwd)
    expect(await second.stop(), second.output()).toEqual({ code: 0, signal: null })
    console.log(`[${engine}] start-up to first 200 on /readyz: first run ${first.readyMs} ms, second run ${second.readyMs} ms`)
    // The figures are reported, not asserted (timings on a shared machine are noise; see
    // docs/performance.md); the bounds only catch a start that hangs.
    expect(first.readyMs).toBeLessThan(40_000)
    expect(second.readyMs).toBeLessThan(40_000)
  }, 90_000)
})
