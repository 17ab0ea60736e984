/**
 * A configured model provider that cannot be reached (`OPENAI_API_KEY` set, `OPENAI_BASE_URL` at
 * a dead loopback port, the default catalog): every entry point answers 502
 * `UPSTREAM_UNAVAILABLE` naming the model tried and why, charges nothing, logs a warning without
 * the key, and `/readyz` reports the provider failing while staying ready. With
 * `HUDDLE_OFFLINE_FALLBACK=on` the offline model answers instead, and says which configured model
 * failed, in its text and in the response's metadata (decision 0034).
 */
import { createServer } from "node:net"
import { Accounts, SseClient, TestServer } from "@huddle/testkit"
import { Redacted } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"

const secret = "sk-dead-upstream-secret"

/** A loopback port nothing listens on: taken, then closed again. */
const deadPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const startDead = async (offlineFallback: boolean) =>
  TestServer.start({
    starterCredits: 10_000,
    providers: { openai: { apiKey: Redacted.make(secret), baseUrl: `http://127.0.0.1:${await deadPort()}/v1` } },
    catalog: { openai: true, offlineFallback }
  })

const balance = async (server: TestServer.TestServer, user: Accounts.TestUser) =>
  (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number

/** The user's ledger rows other than the starter grant. */
const spending = async (server: TestServer.TestServer, user: Accounts.TestUser) =>
  ((await server.request("GET", "/v1/me/credits/ledger", { token: user.session })).body.data as ReadonlyArray<{ kind: string; delta: number }>)
    .filter((row) => row.kind !== "grant")

/** The standard tier's one configured model, tried three times (connection failures are retried). */
const namesTheAttempts = (message: string) => {
  expect(message).toContain("gpt-4o: connection")
  expect(message).toContain("3 attempts")
  expect(message).not.toContain("offline")
  expect(message).not.toContain(secret)
}

describe("a configured provider that is down, without the offline fallback", () => {
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  beforeAll(async () => {
    server = await startDead(false)
  }, 60_000)
  afterAll(() => server.stop())
  beforeEach(async () => {
    user = await Accounts.signupAndLogin(server)
  })

  /** Nothing charged, nothing reserved left: the balance and the ledger as they were. */
  const unchanged = async () => {
    expect(await balance(server, user)).toBe(10_000)
    const rows = await spending(server, user)
    // A released reservation nets to zero; nothing was settled.
    expect(rows.filter((row) => row.kind === "settle")).toEqual([])
    expect(rows.reduce((sum, row) => sum + row.delta, 0)).toBe(0)
  }

  it("answers a huddle message with 502 UPSTREAM_UNAVAILABLE naming the model and why, and charges nothing", async () => {
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Is the build green?" } })
    expect(res.status, res.text).toBe(502)
    expect(res.body.error).toBe("UPSTREAM_UNAVAILABLE")
    namesTheAttempts(res.body.message)
    await unchanged()
  })

  it("answers a streamed huddle message with 502 before any event, and charges nothing", async () => {
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, { token: user.session, body: { input: "Is the build green?" } })
    expect(stream.status).toBe(502)
    await unchanged()
  })

  it("ends a streamed council whose seats all fail with an UPSTREAM_UNAVAILABLE error event", async () => {
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, {
      token: user.session,
      body: { input: "Should we ship on Friday?", mode: "multi" }
    })
    // The stream begins with the council's first round, once its credits are held: a failure is then an event.
    expect(stream.status).toBe(200)
    const error = stream.events.find((event) => event.event === "error")
    expect(error?.data.error).toBe("UPSTREAM_UNAVAILABLE")
    expect(error?.data.message).not.toContain("offline")
    expect(stream.events.at(-1)).toMatchObject({ event: "done", data: { status: "failed" } })
    expect(stream.events.some((event) => event.event === "token")).toBe(false)
    await unchanged()
  })

  it("answers JSON-RPC intent.submit with the UPSTREAM_UNAVAILABLE error (502 for the bare shape), and charges nothing", async () => {
    // JSON-RPC 2.0 clients read failures from the body: 200 (decision 0008).
    const res = await server.request("POST", "/v1/rpc", {
      token: user.session,
      body: { jsonrpc: "2.0", id: 1, method: "intent.submit", params: { input: "Is the build green?" } }
    })
    expect(res.status, res.text).toBe(200)
    expect(res.body.error).toMatchObject({ code: -32006, data: { error: "UPSTREAM_UNAVAILABLE" } })
    namesTheAttempts(res.body.error.message)
    const bare = await server.request("POST", "/v1/rpc", {
      token: user.session,
      body: { method: "intent.submit", params: { input: "Is the build green?" } }
    })
    expect(bare.status, bare.text).toBe(502)
    expect(bare.body.error).toMatchObject({ code: -32006, data: { error: "UPSTREAM_UNAVAILABLE" } })
    await unchanged()
  })

  it("answers a chat completion for a tier with 502 in OpenAI's envelope, streamed or not, and charges nothing", async () => {
    const body = { model: "standard", messages: [{ role: "user", content: "Is the build green?" }] }
    const res = await server.request("POST", "/v1/chat/completions", { token: user.session, body })
    expect(res.status, res.text).toBe(502)
    expect(res.body.error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", type: "server_error" })
    namesTheAttempts(res.body.error.message)

    const streamed = await server.request("POST", "/v1/chat/completions", { token: user.session, body: { ...body, stream: true } })
    expect(streamed.status, streamed.text).toBe(502)
    expect(streamed.body.error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE" })
    await unchanged()
  })

  it("answers a response for a tier with 502 in OpenAI's envelope, and charges nothing", async () => {
    const res = await server.request("POST", "/v1/responses", { token: user.session, body: { model: "standard", input: "Is the build green?" } })
    expect(res.status, res.text).toBe(502)
    expect(res.body.error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE" })
    namesTheAttempts(res.body.error.message)
    await unchanged()
  })

  it("logs each failed attempt as a warning at the default level: provider, model, reason; no key, no stack", async () => {
    const before = server.logs.length
    const res = await server.request("POST", "/v1/chat/completions", {
      token: user.session,
      body: { model: "economy", messages: [{ role: "user", content: "Hello" }] }
    })
    expect(res.status).toBe(502)
    const warnings = server.logs.slice(before).map((line) => JSON.parse(line)).filter((line) =>
      line.logLevel === "WARN" && String(line.message).includes("model provider openai failed")
    )
    expect(warnings).toHaveLength(3)
    expect(warnings[0].annotations).toMatchObject({ provider: "openai", model: "gpt-4o-mini", reason: "connection", attempt: 1, will_retry: true })
    expect(warnings[2].annotations).toMatchObject({ attempt: 3, will_retry: false })
    for (const line of server.logs.slice(before)) {
      expect(line).not.toContain(secret)
      expect(line).not.toMatch(/\n\s+at /)
    }
  })

  it("reports the failing provider on /readyz, and stays ready", async () => {
    await server.request("POST", "/v1/chat/completions", {
      token: user.session,
      body: { model: "economy", messages: [{ role: "user", content: "Hello" }] }
    })
    const res = await server.request("GET", "/readyz")
    expect(res.status).toBe(200)
    expect(res.body.status).toBe("ready")
    const providers = res.body.providers as ReadonlyArray<{ name: string; consecutive_failures: number; last_failure_at: string }>
    const openai = providers.find((provider) => provider.name === "openai")
    expect(openai).toMatchObject({ state: "failing", last_failure: "connection", last_success_at: null })
    expect(openai!.consecutive_failures).toBeGreaterThanOrEqual(3)
    expect(Date.parse(openai!.last_failure_at)).toBeGreaterThan(Date.now() - 60_000)
    expect(res.text).not.toContain(secret)
  })
})

describe("a configured provider that is down, with HUDDLE_OFFLINE_FALLBACK=on", () => {
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  beforeAll(async () => {
    server = await startDead(true)
  }, 60_000)
  afterAll(() => server.stop())
  beforeEach(async () => {
    user = await Accounts.signupAndLogin(server)
  })

  const failedFirst = /^\[offline\] .*offline model \(offline-standard\).*the configured model failed \(gpt-4o: connection\)/

  it("answers a huddle message with the offline model, which says the configured model failed and why", async () => {
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Is the build green?" } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.output).toMatch(failedFirst)
    expect(res.body.output).not.toContain("no model provider was called")
    expect(res.body).toMatchObject({ offline: true, models: ["offline-standard"], offline_fallback: [{ model: "gpt-4o", reason: "connection" }] })
    expect(res.headers.get("huddle-offline-fallback")).toBe(`gpt-4o; reason="connection"`)
    // Charged as the offline model's answer, as any answer is.
    expect(await balance(server, user)).toBe(10_000 - res.body.credits_charged)
  })

  it("says so in a streamed huddle's metadata", async () => {
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, { token: user.session, body: { input: "Is the build green?" } })
    expect(stream.status).toBe(200)
    const metadata = stream.events.find((event) => event.event === "metadata")!.data
    expect(metadata).toMatchObject({ offline: true, offline_fallback: [{ model: "gpt-4o", reason: "connection" }] })
    expect(metadata.output).toMatch(failedFirst)
    // Said before the answer's first token too, and in the response's headers.
    const said = stream.events.findIndex((event) => event.event === "stage" && event.data.offline_fallback !== undefined)
    expect(stream.events[said]?.data).toMatchObject({ stage: "execution", status: "started", model: "offline-standard" })
    expect(said).toBeLessThan(stream.events.findIndex((event) => event.event === "token"))
    expect(stream.headers.get("huddle-offline-fallback")).toBe(`gpt-4o; reason="connection"`)
  })

  it("says so in a chat completion's text and headers, streamed or not", async () => {
    const body = { model: "standard", messages: [{ role: "user", content: "Is the build green?" }] }
    const res = await server.request("POST", "/v1/chat/completions", { token: user.session, body })
    expect(res.status, res.text).toBe(200)
    expect(res.body.model).toBe("offline-standard")
    expect(res.body.choices[0].message.content).toMatch(failedFirst)
    expect(res.headers.get("huddle-offline-fallback")).toBe(`gpt-4o; reason="connection"`)

    const streamed = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.session}`, "content-type": "application/json" },
      body: JSON.stringify({ ...body, stream: true })
    })
    expect(streamed.status).toBe(200)
    expect(streamed.headers.get("huddle-offline-fallback")).toBe(`gpt-4o; reason="connection"`)
    const text = (await streamed.text()).split("\n").filter((line) => line.startsWith("data: {")).map((line) => JSON.parse(line.slice(6)))
      .map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("")
    expect(text).toMatch(failedFirst)
  })

  it("says so in a response's text and headers", async () => {
    const res = await server.request("POST", "/v1/responses", { token: user.session, body: { model: "standard", input: "Is the build green?" } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.model).toBe("offline-standard")
    expect(res.headers.get("huddle-offline-fallback")).toBe(`gpt-4o; reason="connection"`)
  })

  it("answers as before, with no fallback header, when a client names the offline model itself", async () => {
    const res = await server.request("POST", "/v1/chat/completions", {
      token: user.session,
      body: { model: "offline-economy", messages: [{ role: "user", content: "Hello" }] }
    })
    expect(res.status).toBe(200)
    expect(res.body.choices[0].message.content).toContain("no model provider was called")
    expect(res.headers.get("huddle-offline-fallback")).toBeNull()
  })
})
