/**
 * The REAL built server (`node packages/server/dist/main.js`) as child processes, for the suites
 * that run it as a process (Process, Faults, Instances). `killAll` in `afterEach` leaves no
 * process behind.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { TestServer } from "@huddle/testkit"

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..")
export const mainJs = join(repoRoot, "packages/server/dist/main.js")

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
  "HUDDLE_RATE_INTENT",
  "HUDDLE_RATE_CHAT",
  "HUDDLE_RATE_READ",
  "HUDDLE_RATE_LIMIT_PREFIX",
  "HUDDLE_RATE_LIMIT_ON_STORE_ERROR",
  "HUDDLE_SIGNIN_WINDOW",
  "HUDDLE_SIGNIN_FAILURES_PER_ACCOUNT",
  "HUDDLE_SIGNIN_FAILURES_PER_ADDRESS",
  "HUDDLE_SIGNUPS_PER_ADDRESS",
  "HUDDLE_TRUST_PROXY",
  "LOG_LEVEL",
  "REDIS_URL",
  "HUDDLE_OPERATOR_TOKEN",
  "HUDDLE_METRICS_TOKEN",
  "HUDDLE_METRICS",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_SERVICE_NAME",
  "HUDDLE_HEARTBEAT_INTERVAL",
  "HUDDLE_INSTANCE_STALE_AFTER",
  "HUDDLE_REPO_ROOTS",
  "HUDDLE_REPO_GIT_SCHEMES",
  "HUDDLE_REPO_DIR",
  "HUDDLE_REPO_GIT_TIMEOUT",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "ANTHROPIC_API_KEY",
  "NODE_OPTIONS"
]

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

export const freePort = () =>
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
export const getStatus = (url: string, timeoutMs: number) =>
  new Promise<number>((done, fail) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume()
      res.once("end", () => done(res.statusCode ?? 0))
      res.once("error", fail)
    })
    req.once("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.once("error", fail)
  })

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface Running {
  readonly child: ChildProcess
  readonly url: string
  readonly port: number
  /** Milliseconds from spawn to the first 200 from /readyz. */
  readonly readyMs: number
  readonly output: () => string
  readonly exited: Promise<Exit>
  /** Sends SIGTERM and waits for the exit. */
  readonly stop: (timeoutMs?: number) => Promise<Exit>
  /** The process seen as a `TestServer` (for the testkit's Accounts shortcuts). */
  readonly api: TestServer.TestServer
}

// Registered at spawn, before `readyMs` is known, so that `killAll` also reaches a server that never got ready.
const running = new Set<Pick<Running, "child" | "exited">>()
const cleanups: Array<() => Promise<void> | void> = []

export const onCleanup = (cleanup: () => Promise<void> | void) => {
  cleanups.push(cleanup)
}

export const withTimeout = <A>(promise: Promise<A>, ms: number, what: string) => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Error(`${what}: no result within ${ms} ms`)), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

/** A scratch working directory, removed by `killAll`. */
export const scratchDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "huddle-instances-"))
  onCleanup(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface StartOptions {
  /** The child's working directory; by default a new `scratchDir()` (pass one to restart on the same). */
  readonly cwd?: string
  readonly readyWithinMs?: number
}

/** A server process just spawned: not necessarily listening, or ever ready. */
export type Spawned = Omit<Running, "readyMs">

/** Spawns the server with `env` (on a free port unless `env.PORT` says otherwise), without waiting for anything. */
export const spawnServer = async (env: Record<string, string>, options: StartOptions = {}): Promise<Spawned> => {
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT)
  const childEnv: Record<string, string | undefined> = { ...process.env }
  for (const name of serverVariables) delete childEnv[name]
  Object.assign(childEnv, { HOST: "127.0.0.1", PORT: String(port), HUDDLE_SHUTDOWN_GRACE: "5 seconds", LOG_LEVEL: "Info", ...env })
  const child = spawn(process.execPath, [mainJs], { cwd: options.cwd ?? scratchDir(), env: childEnv, stdio: ["ignore", "pipe", "pipe"] })
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
  const stop = (timeoutMs = 15_000) => {
    child.kill("SIGTERM")
    return withTimeout(exited, timeoutMs, `server exit after SIGTERM\n${output()}`)
  }
  const api: TestServer.TestServer = {
    url,
    engine: "postgres",
    logs: [],
    operatorToken: env.HUDDLE_OPERATOR_TOKEN ?? null,
    request: (method, path, options) => TestServer.request(url, method, path, options),
    stop: async () => {
      await stop()
    }
  }
  const entry = { child, exited }
  running.add(entry)
  void exited.then(() => running.delete(entry))
  return { child, url, port, output, exited, stop, api }
}

/** Starts the server with `env` and waits for its first 200 from /readyz. */
export const startServer = async (env: Record<string, string>, options: StartOptions = {}): Promise<Running> => {
  const readyWithinMs = options.readyWithinMs ?? 30_000
  const started = performance.now()
  const spawned = await spawnServer(env, options)
  let exit: Exit | undefined
  void spawned.exited.then((e) => (exit = e))
  // The server listens before its request handler is attached (the database comes up in
  // between), and a request made in that window is never answered: poll with a short timeout.
  const deadline = started + readyWithinMs
  for (;;) {
    if (exit) throw new Error(`server exited (code ${exit.code}, signal ${exit.signal}) before it was ready:\n${spawned.output()}`)
    if (performance.now() > deadline) throw new Error(`server not ready within ${readyWithinMs} ms:\n${spawned.output()}`)
    const status = await getStatus(`${spawned.url}/readyz`, 300).catch(() => 0)
    if (status === 200) break
    await sleep(20)
  }
  return { ...spawned, readyMs: Math.round(performance.now() - started) }
}

/** Kills every server still running and runs the registered cleanups (for `afterEach`). */
export const killAll = async () => {
  const children = [...running]
  running.clear()
  for (const server of children) {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL")
  }
  await Promise.all(children.map((server) => withTimeout(server.exited, 5_000, "killed server exit").catch(() => undefined)))
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
}

/**
 * A TCP proxy in front of `host:port` that a test can cut (every open connection destroyed, new
 * ones refused) and restore on the same port.
 */
export const tcpProxy = async (host: string, port: number) => {
  const sockets = new Set<net.Socket>()
  let server: net.Server | undefined
  const listen = (on: number) =>
    new Promise<number>((done, fail) => {
      const next = net.createServer((client) => {
        const upstream = net.connect(port, host)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
          socket.on("error", () => {
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream).pipe(client)
      })
      next.once("error", fail)
      next.listen(on, "127.0.0.1", () => {
        server = next
        const address = next.address()
        done(typeof address === "object" && address !== null ? address.port : on)
      })
    })
  const proxyPort = await listen(0)
  let up = true
  const cut = () =>
    new Promise<void>((done) => {
      if (!up || !server) return done()
      up = false
      for (const socket of sockets) socket.destroy()
      server.close(() => done())
    })
  const restore = async () => {
    if (up) return
    await listen(proxyPort)
    up = true
  }
  return { port: proxyPort, cut, restore }
}

/**
 * A sign-up whose body is half sent: the server has taken the request in and waits for the rest,
 * which `sendRest` sends (a request in flight, for the shutdown tests). `response` is the
 * answer's status and text; it is already caught, so a failure before it is awaited is not an
 * unhandled rejection.
 */
export const halfSentSignup = (url: string, email: string) => {
  const body = JSON.stringify({ email, password: "a long password" })
  const half = Math.floor(body.length / 2)
  let sendRest: () => void = () => {}
  const response = new Promise<{ status: number; text: string }>((done, fail) => {
    const req = http.request(`${url}/v1/auth/signup`, {
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
    sendRest = () => req.end(body.slice(half))
  })
  response.catch(() => {})
  return { response, sendRest: () => sendRest() }
}
