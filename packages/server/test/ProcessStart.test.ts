/**
 * The server as an operator runs and stops it: `npm start` from the repository's root, stopped
 * by a signal to npm's process (a supervisor's `kill <pid>`) or to its process group (Ctrl-C at a
 * terminal); shutdown not held by connections no request is using; the `huddle ready` line with
 * every address a person opens first. `npm test` builds the server first (`tsc -b`).
 */
import { execFileSync, spawn } from "node:child_process"
import * as net from "node:net"
import { join } from "node:path"
import { banner } from "@huddle/server/Ready"
import { Accounts } from "@huddle/testkit"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { type Exit, freePort, getStatus, halfSentSignup, killAll, onCleanup, repoRoot, scratchDir, sleep, spawnServer, startServer, withTimeout } from "./serverProcesses.js"

afterEach(killAll)
afterAll(killAll)

/** `npm start` in the repository's root, as its README says, on a free port and fresh storage. */
const npmStart = async (options: { readonly ownGroup?: boolean } = {}) => {
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env, NODE_OPTIONS: undefined, DATABASE_URL: undefined, LOG_LEVEL: "Info" }
  Object.assign(env, { HOST: "127.0.0.1", PORT: String(port), HUDDLE_DATA_DIR: join(scratchDir(), "data"), HUDDLE_SHUTDOWN_GRACE: "10 seconds" })
  const npm = spawn("npm", ["start"], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"], detached: options.ownGroup === true })
  const chunks: Array<string> = []
  npm.stdout!.setEncoding("utf8").on("data", (chunk: string) => chunks.push(chunk))
  npm.stderr!.setEncoding("utf8").on("data", (chunk: string) => chunks.push(chunk))
  const output = () => chunks.join("")
  const exited = new Promise<Exit>((done) => npm.once("exit", (code, signal) => done({ code, signal })))
  // Whatever happens, neither npm nor the server it started outlives the test.
  let server: number | undefined
  onCleanup(async () => {
    for (const pid of [npm.pid, server]) {
      try {
        if (pid !== undefined) process.kill(pid, "SIGKILL")
      } catch {
        // Gone already.
      }
    }
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = performance.now() + 60_000
  while ((await getStatus(`${url}/readyz`, 500).catch(() => 0)) !== 200) {
    if (npm.exitCode !== null || performance.now() > deadline) throw new Error(`npm start did not get ready:\n${output()}`)
    await sleep(50)
  }
  // The process npm started for the script, which `exec` made the server itself.
  const children = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(npm.pid)], { encoding: "utf8" }).trim().split("\n")
  server = Number(children[0]?.trim().split(/\s+/)[0])
  return { npm, url, port, output, exited, server, children }
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("npm start", () => {
  it("runs the server as npm's own child (the script execs node), so that kill <npm's pid> stops it: port freed, exit 0, within the grace", async () => {
    const started = await npmStart()
    expect(started.children, started.output()).toHaveLength(1)
    expect(started.children[0]).toMatch(/\bnode\b.*packages\/server\/dist\/main\.js/)
    const signalled = performance.now()
    started.npm.kill("SIGTERM")
    expect(await withTimeout(started.exited, 15_000, `npm exit\n${started.output()}`), started.output()).toEqual({ code: 0, signal: null })
    const stoppedMs = Math.round(performance.now() - signalled)
    console.log(`npm start: kill <npm's pid> to npm's exit: ${stoppedMs} ms`)
    expect(stoppedMs).toBeLessThan(10_000)
    expect(isRunning(started.server), "the server outlived npm").toBe(false)
    expect(await getStatus(`${started.url}/healthz`, 1_000).then(String, (error: NodeJS.ErrnoException) => error.code)).toBe("ECONNREFUSED")
    expect(started.output()).toMatch(/"message":"stopped"/)
  }, 90_000)

  it("drains and exits 0 on Ctrl-C at a terminal (SIGINT to npm's process group: the server gets npm's copy too)", async () => {
    const started = await npmStart({ ownGroup: true })
    process.kill(-started.npm.pid!, "SIGINT")
    expect(await withTimeout(started.exited, 15_000, `npm exit\n${started.output()}`), started.output()).toEqual({ code: 0, signal: null })
    expect(isRunning(started.server)).toBe(false)
    expect(started.output().match(/"message":"(shutting down|stopped)"/g)).toEqual(['"message":"shutting down"', '"message":"stopped"'])
  }, 90_000)
})

describe("shutdown", () => {
  it("is not cut short by a second signal while it drains: the open request is finished and the exit is 0", async () => {
    const server = await startServer({ HUDDLE_DATA_DIR: join(scratchDir(), "data") })
    const { response, sendRest } = halfSentSignup(server.url, Accounts.uniqueEmail("twice"))
    await sleep(300)
    server.child.kill("SIGTERM")
    await sleep(300)
    server.child.kill("SIGTERM")
    server.child.kill("SIGINT")
    await sleep(300)
    expect(server.child.exitCode, "the second signal ended the process").toBeNull()
    expect(server.child.signalCode, server.output()).toBeNull()
    sendRest()
    expect((await withTimeout(response, 10_000, "the open request")).status).toBe(201)
    expect(await withTimeout(server.exited, 10_000, `server exit\n${server.output()}`), server.output()).toEqual({ code: 0, signal: null })
  }, 60_000)

  it("closes at once the connections no request is using (a browser's spare one, an idle keep-alive one): they do not hold it for the grace", async () => {
    const server = await startServer({ HUDDLE_DATA_DIR: join(scratchDir(), "data"), HUDDLE_SHUTDOWN_GRACE: "30 seconds" })
    const connect = () =>
      new Promise<net.Socket>((done, fail) => {
        const socket = net.connect(server.port, "127.0.0.1", () => done(socket))
        socket.once("error", fail)
      })
    // Opened and never used, as a browser opens one ahead of the requests it may make.
    const spare = await connect()
    // One answer, then kept open for the next request.
    const kept = await connect()
    kept.write("GET /healthz HTTP/1.1\r\nHost: huddle\r\nConnection: keep-alive\r\n\r\n")
    await new Promise((done) => kept.once("data", done))
    const closed = [spare, kept].map((socket) => new Promise<void>((done) => socket.once("close", () => done())))
    for (const socket of [spare, kept]) socket.on("error", () => {})
    await sleep(200)

    const signalled = performance.now()
    const exit = await server.stop(30_000)
    const stoppedMs = Math.round(performance.now() - signalled)
    console.log(`shutdown with a spare and an idle keep-alive connection open: ${stoppedMs} ms (grace 30 s)`)
    expect(exit, server.output()).toEqual({ code: 0, signal: null })
    await withTimeout(Promise.all(closed), 1_000, "the connections closed")
    // Well below the grace: without closing them, shutdown waited for all of it.
    expect(stoppedMs).toBeLessThan(8_000)
    expect(server.output()).not.toContain("requests still running at shutdown")
  }, 60_000)
})

describe("ready", () => {
  it("logs the addresses a person opens first: the web console, the API reference, the OpenAPI document", async () => {
    const server = await spawnServer({ HUDDLE_DATA_DIR: join(scratchDir(), "data") })
    const deadline = performance.now() + 60_000
    while (!server.output().includes("huddle ready") && performance.now() < deadline) await sleep(50)
    const ready = server.output().split("\n").find((line) => line.includes("\"huddle ready\""))
    expect(ready, server.output()).toBeDefined()
    expect(JSON.parse(ready!).annotations).toMatchObject({
      url: server.url,
      console: `${server.url}/`,
      docs: `${server.url}/docs`,
      openapi: `${server.url}/v1/openapi.json`
    })
    expect((await getStatus(`${server.url}/`, 5_000))).toBe(200)
  }, 90_000)

  it("prints the same addresses in the banner for a terminal", () => {
    expect(banner("http://127.0.0.1:8080", "pglite (.huddle)").split("\n")).toEqual([
      "",
      "Huddle is ready at http://127.0.0.1:8080 (storage: pglite (.huddle))",
      "  Web console:   http://127.0.0.1:8080/",
      "  API reference: http://127.0.0.1:8080/docs",
      "  OpenAPI:       http://127.0.0.1:8080/v1/openapi.json",
      "  Health:        http://127.0.0.1:8080/healthz  http://127.0.0.1:8080/readyz",
      ""
    ])
  })
})
