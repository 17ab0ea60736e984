/**
 * Multi and auto mode over HTTP as a new user meets them: no provider configured, the offline
 * participants differ where the question names options, and every credit of the council is in
 * the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Accounts, FakeOpenAi, Operator, Orgs, SseClient, TestServer, WithFakeUpstream } from "@huddle/testkit"
import { answerCouncil, roundOfRequest, usagePerCall } from "./councilUpstream.js"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

const choice = "Should we use PostgreSQL or MySQL for our analytics workload?"

describe("multi mode (the council) on the offline provider", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  const balance = async (token: string) => (await server.request("GET", "/v1/me", { token })).body.credits.balance as number
  const ledger = async (userId: string) =>
    (await server.request("GET", `/v1/operator/credits/ledger?user_id=${userId}&limit=100`, { token: server.operatorToken! })).body
      .data as ReadonlyArray<{ delta: number; reason: string; kind: string }>

  it("answers with a consensus report: positions, agreement, the dissent in the dissenter's words, and credits equal to the ledger", async () => {
    const user = await Accounts.signupAndLogin(server)
    const before = await balance(user.session)
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: choice, mode: "multi" } })
    expect(res.status).toBe(200)
    const reply = res.body
    expect(reply).toMatchObject({ status: "completed", mode: "multi", requested_mode: "multi", offline: true })
    const report = reply.consensus
    expect(report.participants).toHaveLength(3)
    expect(report.rounds).toBe(4)
    expect(report.degraded).toBe(false)
    expect(report.dropped).toEqual([])
    // Seat 1 takes the option named first, seat 2 the last: they disagree, and the majority wins.
    expect(report.participants.map((p: { initial_position: string }) => p.initial_position)).toEqual([
      "PostgreSQL is the better choice.",
      "MySQL is the better choice.",
      expect.any(String)
    ])
    const dissenters = report.participants.filter((p: { vote: string }) => p.vote === "dissent")
    expect(report.dissents.map((d: { seat: number }) => d.seat)).toEqual(dissenters.map((p: { seat: number }) => p.seat))
    for (const dissent of report.dissents) {
      const who = report.participants.find((p: { seat: number }) => p.seat === dissent.seat)
      expect(dissent.claim).toBe(who.position)
      expect(dissent.claim).not.toBe(report.position)
      expect(dissent.rationale).toContain("[offline]")
    }
    const endorsed = report.participants.filter((p: { endorsed: boolean | null }) => p.endorsed === true).length
    expect(report.agreement_ratio).toBeCloseTo(endorsed / (endorsed + dissenters.length))
    expect(reply.output).toBe(report.text)
    // Money: the report's credits are what the balance lost and what the ledger says.
    const credits = report.participants.reduce((sum: number, p: { credits: number }) => sum + p.credits, 0)
    expect(credits).toBe(reply.credits_charged)
    expect(credits).toBeGreaterThan(0)
    expect(await balance(user.session)).toBe(before - credits)
    const rows = (await ledger(user.id)).filter((row) => row.reason === `intent ${reply.intent_id}`)
    expect(rows.reduce((sum, row) => sum + row.delta, 0)).toBe(-credits)
    // Kept with the session's message.
    const session = (await server.request("GET", `/v1/huddle/sessions/${reply.session_id}`, { token: user.session })).body
    expect(session.messages.at(-1).consensus).toEqual(report)
  })

  it("streams every round's stages in protocol order, no text before the consensus, then the report", async () => {
    const user = await Accounts.signupAndLogin(server)
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, { token: user.session, body: { input: choice, mode: "multi" } })
    expect(stream.status).toBe(200)
    const events = stream.events
    const rounds = events
      .filter((e) => e.event === "stage" && ["proposals", "critique", "synthesis", "ratification"].includes(e.data.stage))
      .filter((e) => e.data.status !== "progress")
      .map((e) => `${e.data.stage}:${e.data.status}`)
    expect(rounds).toEqual([
      "proposals:started",
      "proposals:completed",
      "critique:started",
      "critique:completed",
      "synthesis:started",
      "synthesis:completed",
      "ratification:started",
      "ratification:completed"
    ])
    const finished = events.filter((e) => e.event === "stage" && e.data.status === "progress" && e.data.stage === "critique")
    expect(finished.map((e) => e.data.seat).sort()).toEqual([1, 2, 3])
    const firstToken = events.findIndex((e) => e.event === "token")
    const ratified = events.findIndex((e) => e.event === "stage" && e.data.stage === "ratification" && e.data.status === "completed")
    expect(firstToken).toBeGreaterThan(ratified)
    const metadata = events.find((e) => e.event === "metadata")!.data
    expect(events.filter((e) => e.event === "token").map((e) => e.data.text).join("")).toBe(metadata.consensus.text)
    expect(metadata.consensus.participants).toHaveLength(3)
    expect(events.at(-1)).toMatchObject({ event: "done", data: { status: "completed" } })
  })

  it("switches modes from message to message within a session", async () => {
    const user = await Accounts.signupAndLogin(server)
    const first = (await server.request("POST", "/v1/huddle", { token: user.session, body: { input: choice, mode: "multi" } })).body
    const second = await server.request("POST", `/v1/huddle/sessions/${first.session_id}/messages`, {
      token: user.session,
      body: { content: "And for the reporting side?", mode: "single" }
    })
    expect(second.status).toBe(200)
    expect(second.body.mode).toBe("single")
    expect(second.body.consensus).toBeUndefined()
    const session = (await server.request("GET", `/v1/huddle/sessions/${first.session_id}`, { token: user.session })).body
    expect(session.messages.map((m: { role: string; mode: string; consensus?: unknown }) => [m.role, m.mode, m.consensus !== undefined]))
      .toEqual([["user", "multi", false], ["assistant", "multi", true], ["user", "single", false], ["assistant", "single", false]])
  })

  it("auto mode answers alone when two independent answers agree, convenes the council when they differ, and says why", async () => {
    const user = await Accounts.signupAndLogin(server)
    const ask = async (input: string) => (await server.request("POST", "/v1/huddle", { token: user.session, body: { input, mode: "auto" } })).body
    const open = await ask("Explain how a B-tree index speeds up a range query.")
    expect(open).toMatchObject({ mode: "single", requested_mode: "auto", mode_reason: "two independent answers agreed" })
    expect(open.consensus).toBeUndefined()
    const contested = await ask(choice)
    expect(contested).toMatchObject({ mode: "multi", requested_mode: "auto", mode_reason: "two independent answers disagreed" })
    expect(contested.consensus.dissents.length).toBeGreaterThan(0)
    const light = await ask("thanks!")
    expect(light).toMatchObject({ mode: "single", requested_mode: "auto" })
    expect(light.mode_reason).toMatch(/greeting/)
    // The cheap path costs less than the council.
    expect(open.credits_charged).toBeLessThan(contested.credits_charged)
  })

  it("refuses a council the balance cannot cover with 402 before any call, and auto mode then answers alone", async () => {
    const poor = await TestServer.start({ starterCredits: 40 })
    try {
      const user = await Accounts.signupAndLogin(poor)
      const refused = await poor.request("POST", "/v1/huddle", { token: user.session, body: { input: choice, mode: "multi" } })
      expect(refused.status).toBe(402)
      expect(refused.body.error).toBe("INSUFFICIENT_CREDITS")
      expect((await poor.request("GET", "/v1/me", { token: user.session })).body.credits.balance).toBe(40)
      expect((await poor.request("GET", "/v1/huddle/sessions", { token: user.session })).body.data).toEqual([])
      const auto = await poor.request("POST", "/v1/huddle", { token: user.session, body: { input: choice, mode: "auto" } })
      expect(auto.status).toBe(200)
      expect(auto.body).toMatchObject({ mode: "single", requested_mode: "auto" })
      expect(auto.body.mode_reason).toMatch(/credits/)
    } finally {
      await poor.stop()
    }
  })

  it("holds a council for review when the org requires it, and runs it as planned once approved", async () => {
    const org = await Orgs.createOrg(server)
    await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { auto_execute: false } })
    const member = await Orgs.addMember(server, org)
    const before = await balance(member.session)
    const held = await server.request("POST", "/v1/huddle", { token: member.session, body: { input: choice, mode: "multi", org_id: org.id } })
    expect(held.status, held.text).toBe(200)
    expect(held.body).toMatchObject({ status: "awaiting_review", mode: "multi", credits_charged: 0 })
    const rpc = (token: string, method: string, params: unknown) =>
      server.request("POST", "/v1/rpc", { token, body: { jsonrpc: "2.0", id: 1, method, params } })
    const pending = (await rpc(member.session, "intent.get", { id: held.body.intent_id })).body.result
    expect(pending.plan.council.seats).toHaveLength(3)
    expect(pending.plan.worst_case_credits).toBe(pending.plan.council.worst_case_credits)
    expect(await balance(member.session)).toBe(before)

    const approved = await rpc(org.admin.session, "intent.approve", { id: held.body.intent_id })
    expect(approved.body.error, approved.text).toBeUndefined()
    const intent = approved.body.result
    expect(intent).toMatchObject({ status: "completed", mode: "multi" })
    expect(intent.consensus.participants).toHaveLength(3)
    expect(intent.credits_charged).toBe(intent.consensus.participants.reduce((sum: number, p: { credits: number }) => sum + p.credits, 0))
    const session = (await server.request("GET", `/v1/huddle/sessions/${held.body.session_id}`, { token: member.session })).body
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", mode: "multi", consensus: intent.consensus })
  })
})

describe("multi mode against a model upstream", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  fakeUpstreamSuite(
    [
      WithFakeUpstream.model("fake-economy-a", "economy", { upstream_model: "econ-a" }),
      WithFakeUpstream.model("fake-economy-b", "economy", { upstream_model: "econ-b" })
    ],
    (started) => ({ fake, server } = started)
  )
  const balance = async (token: string) => (await server.request("GET", "/v1/me", { token })).body.credits.balance as number

  it("cancels every call in flight when the client goes away mid-council, and charges only the calls that ended", async () => {
    const user = await Accounts.signupAndLogin(server)
    await Operator.grant(server, { user_id: user.id }, 99_000)
    const before = await balance(user.session)
    fake.reset()
    // The critiques take long: the client leaves while all three are in flight.
    answerCouncil(fake, { slow: { critique: 5_000 } })
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, {
      token: user.session,
      body: { input: "Where should the ledger live?", mode: "multi", model_tier: "economy" },
      until: (event) => event.event === "stage" && event.data.stage === "critique" && event.data.status === "started"
    })
    expect(stream.status).toBe(200)
    const disconnects = await fake.waitForDisconnects(3, 3_000)
    const critiques = disconnects.filter((d) => roundOfRequest(fake.requests[d.request]!) === "critique")
    expect(critiques).toHaveLength(3)
    // The three proposals were answered and charged; the cut critiques produced nothing and cost nothing.
    // One credit per input token and two per output token (WithFakeUpstream.pricing).
    const proposal = usagePerCall.prompt_tokens + 2 * usagePerCall.completion_tokens
    let spent = -1
    for (let i = 0; i < 30; i++) {
      spent = before - (await balance(user.session))
      if (spent === 3 * proposal) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(spent).toBe(3 * proposal)
    // The intent records the cancellation and what it cost.
    const intents = await server.request("POST", "/v1/rpc", { token: user.session, body: { jsonrpc: "2.0", id: 1, method: "intent.list" } })
    expect(intents.body.result.data[0]).toMatchObject({ status: "failed", mode: "multi", credits_charged: spent, error: { error: "CANCELLED" } })
  })
})
