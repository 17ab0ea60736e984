/**
 * The huddle against a real (fake) OpenAI-compatible upstream on loopback: event order, exact
 * usage and credits, retries and fallback, broken streams and disconnects.
 */
import { Accounts, FakeOpenAi, SseClient, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import { beforeEach, describe, expect, it } from "vitest"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.pricing: one credit per input token, two per output token.
const models = [
  WithFakeUpstream.model("fake-primary", "standard", { upstream_model: "primary-v1" }),
  WithFakeUpstream.model("fake-secondary", "standard", { upstream_model: "secondary-v1" }),
  WithFakeUpstream.model("fake-economy", "economy"),
  WithFakeUpstream.model("fake-premium", "premium")
]

describe("huddle against an OpenAI-compatible upstream", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  fakeUpstreamSuite(models, (started) => ({ fake, server } = started))
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
  })

  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
  /** The messages of the user's one session, as [role, content]. */
  const onlySessionMessages = async () => {
    const sessions = (await server.request("GET", "/v1/huddle/sessions", { token: user.session })).body.data
    expect(sessions).toHaveLength(1)
    const session = (await server.request("GET", `/v1/huddle/sessions/${sessions[0].id}`, { token: user.session })).body
    return session.messages.map((m: { role: string; content: string }) => [m.role, m.content])
  }

  it("streams the upstream's tokens in order and charges exactly its token counts", async () => {
    fake.enqueue({ answer: "The build is green on main.", chunks: 5, usage: { prompt_tokens: 321, completion_tokens: 17 } })
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, { token: user.session, body: { input: "Is the build green?" } })
    const tokens = stream.events.filter((e) => e.event === "token")
    expect(tokens).toHaveLength(5)
    expect(tokens.map((e) => e.data.text).join("")).toBe("The build is green on main.")
    const names = stream.events.map((e) => e.event)
    expect(names.indexOf("token")).toBeGreaterThan(names.indexOf("stage"))
    expect(names.slice(-2)).toEqual(["metadata", "done"])
    const metadata = stream.events.find((e) => e.event === "metadata")!.data
    expect(metadata).toMatchObject({
      output: "The build is green on main.",
      usage: { input_tokens: 321, output_tokens: 17 },
      credits_charged: 321 + 2 * 17,
      models: ["fake-primary"],
      offline: false
    })
    expect(await balance()).toBe(100_000 - (321 + 34))
    const sent = fake.requests[0]!
    expect(sent.headers.authorization).toBe("Bearer sk-upstream-secret")
    expect(sent.body).toMatchObject({ model: "primary-v1", stream: true })
  })

  it("sends a session's earlier turns with its next question, oldest first", async () => {
    fake.enqueue({ answer: "Main is green.", usage: { prompt_tokens: 10, completion_tokens: 3 } })
    const first = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Is main green?" } })
    expect(first.status, first.text).toBe(200)
    fake.enqueue({ answer: "Since this morning.", usage: { prompt_tokens: 20, completion_tokens: 3 } })
    const next = await server.request("POST", `/v1/huddle/sessions/${first.body.session_id}/messages`, {
      token: user.session,
      body: { content: "Since when?" }
    })
    expect(next.status, next.text).toBe(200)
    const sent = (fake.requests[1]!.body as { messages: ReadonlyArray<{ role: string; content: string }> }).messages
    expect(sent.slice(-3).map((m) => [m.role, m.content])).toEqual([
      ["user", "Is main green?"],
      ["assistant", "Main is green."],
      ["user", "Since when?"]
    ])
  })

  it("finishes a turn whose session is deleted while it answers, and charges what it used", async () => {
    fake.enqueue({ answer: "first", usage: { prompt_tokens: 10, completion_tokens: 1 } })
    const first = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Start" } })
    expect(first.status, first.text).toBe(200)
    const sessionId = first.body.session_id as string
    const before = await balance()
    fake.enqueue({ answer: "one two three four five six", chunks: 6, chunkDelayMs: 80, usage: { prompt_tokens: 40, completion_tokens: 6 } })
    const streaming = SseClient.post(`${server.url}/v1/huddle/sessions/${sessionId}/messages?stream=true`, {
      token: user.session,
      body: { content: "A slow answer" }
    })
    await fake.waitForRequests(2, 5_000)
    const deleted = await server.request("DELETE", `/v1/huddle/sessions/${sessionId}`, { token: user.session })
    expect(deleted.status, deleted.text).toBe(204)
    const stream = await streaming
    expect(stream.events.filter((e) => e.event === "error"), JSON.stringify(stream.events)).toEqual([])
    expect(stream.events.at(-1)).toEqual({ event: "done", data: { status: "completed" } })
    // No message was written: the reply names none.
    expect(stream.events.find((e) => e.event === "metadata")!.data).toMatchObject({ status: "completed", message_id: null })
    expect(before - (await balance())).toBe(40 + 2 * 6)
    expect((await server.request("GET", `/v1/huddle/sessions/${sessionId}`, { token: user.session })).status).toBe(404)
  })

  it("reads usage whichever chunk carries it", async () => {
    fake.enqueue({ answer: "A", usage: { prompt_tokens: 10, completion_tokens: 3 }, usagePlacement: "last-content-chunk" })
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "x" } })
    expect(res.body.usage).toEqual({ input_tokens: 10, output_tokens: 3 })
    expect(res.body.credits_charged).toBe(16)
  })

  it("retries a rate-limited model, honouring Retry-After", async () => {
    fake.enqueue(FakeOpenAi.rateLimited("1"), { answer: "after the wait", usage: { prompt_tokens: 5, completion_tokens: 3 } })
    const started = Date.now()
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "x" } })
    expect(res.status).toBe(200)
    expect(res.body.output).toBe("after the wait")
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    expect(fake.requests.map((r) => (r.body as { model: string }).model)).toEqual(["primary-v1", "primary-v1"])
  })

  it("falls back to the next model of the tier when one keeps failing", async () => {
    fake.enqueue(FakeOpenAi.serverError(), FakeOpenAi.serverError(), FakeOpenAi.serverError(), {
      answer: "from the second model",
      usage: { prompt_tokens: 7, completion_tokens: 4 }
    })
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "x" } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ output: "from the second model", models: ["fake-secondary"], credits_charged: 15 })
    expect(fake.requests.map((r) => (r.body as { model: string }).model)).toEqual([
      "primary-v1",
      "primary-v1",
      "primary-v1",
      "secondary-v1"
    ])
  })

  it("answers 502 when every model fails, and charges nothing", async () => {
    fake.setDefault(FakeOpenAi.badRequest("nope"))
    try {
      const before = await balance()
      const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "x" } })
      expect(res.status).toBe(502)
      expect(res.body.error).toBe("UPSTREAM_UNAVAILABLE")
      expect(res.text).not.toContain("sk-upstream-secret")
      expect(await balance()).toBe(before)
    } finally {
      fake.setDefault({})
    }
  })

  it("ends a broken stream with an error event and a settled ledger", async () => {
    const before = await balance()
    fake.enqueue({ answer: "one two three four five six", chunks: 6, malformedAfterChunks: 3 })
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, { token: user.session, body: { input: "x" } })
    const names = stream.events.map((e) => e.event)
    expect(names.filter((n) => n === "token")).toHaveLength(3)
    expect(names.slice(-2)).toEqual(["error", "done"])
    expect(stream.events.at(-2)!.data.error).toBe("UPSTREAM_UNAVAILABLE")
    expect(stream.events.at(-1)!.data).toEqual({ status: "failed" })
    // Charged for what was produced, not the reserved worst case (input + 200 output tokens).
    const spent = before - (await balance())
    expect(spent).toBeGreaterThan(0)
    expect(spent).toBeLessThan(200 * 2)
    // A failed answer is not the session's: it keeps the question alone.
    expect(await onlySessionMessages()).toEqual([["user", "x"]])
  })

  it("cancels the upstream call when the client goes away, and settles for what was used", async () => {
    const before = await balance()
    fake.enqueue({ answer: Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "), chunks: 40, chunkDelayMs: 100 })
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, {
      token: user.session,
      body: { input: "a long answer please" },
      until: (_event, events) => events.filter((e) => e.event === "token").length >= 2
    })
    expect(stream.events.filter((e) => e.event === "token")).toHaveLength(2)
    const disconnects = await fake.waitForDisconnects(1, 1500)
    expect(disconnects[0]!.chunksWritten).toBeLessThan(40)
    // The reservation is settled (not held) shortly after.
    let spent = 0
    for (let i = 0; i < 20 && spent === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      spent = before - (await balance())
    }
    expect(spent).toBeGreaterThan(0)
    expect(spent).toBeLessThan(200 * 2)
    expect(await onlySessionMessages()).toEqual([["user", "a long answer please"]])
  })
})
