import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type DecidedBy, type EffectiveSettings, OrgPolicies, serviceDefaults, tierRank } from "@huddle/domain/settings/Policy"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { StartRequest } from "@huddle/server/huddle/HuddleApi"
import { Accounts, Orgs, SseClient, TestServer } from "@huddle/testkit"
import { Effect, Schema } from "effect"

type Setting = keyof EffectiveSettings

/**
 * What decides each setting: the highest-precedence source that sets it (enforced org policy →
 * request → personal preference → org default → service default). The tier policy is a ceiling:
 * it decides only when what the others chose is above it.
 */
const expectedSettings = (run: {
  readonly policies: OrgPolicies
  readonly request: Partial<Preferences>
  readonly personal: Preferences
  readonly orgDefaults: Preferences
}) => {
  const chosen = <K extends Setting>(key: K) => {
    const layers: ReadonlyArray<readonly [DecidedBy, Partial<Record<Setting, unknown>>]> = [
      ["request", run.request],
      ["personal", run.personal],
      ["org_default", run.orgDefaults]
    ]
    const first = layers.find(([, layer]) => layer[key] !== undefined)
    return first === undefined
      ? { value: serviceDefaults[key], decided_by: "service_default" }
      : { value: first[1][key], decided_by: first[0] }
  }
  const enforced = <K extends keyof OrgPolicies & Setting>(key: K) =>
    run.policies[key] === undefined ? chosen(key) : { value: run.policies[key], decided_by: "org_policy" }
  const wanted = chosen("model_tier") as { value: keyof typeof tierRank; decided_by: DecidedBy }
  const ceiling = run.policies.model_tier
  return {
    model_tier: ceiling !== undefined && tierRank[wanted.value] > tierRank[ceiling] ? { value: ceiling, decided_by: "org_policy" } : wanted,
    risk_tolerance: enforced("risk_tolerance"),
    auto_execute: enforced("auto_execute"),
    mode: chosen("mode"),
    credit_fallback: run.policies.credit_fallback === undefined
      ? { value: serviceDefaults.credit_fallback, decided_by: "service_default" }
      : { value: run.policies.credit_fallback, decided_by: "org_policy" }
  }
}

describe("huddle on the offline provider", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  const balance = async (token: string) => (await server.request("GET", "/v1/me", { token })).body.credits.balance as number
  const sessions = async (token: string) => (await server.request("GET", "/v1/huddle/sessions", { token })).body.data
  const intents = async (token: string) =>
    (await server.request("POST", "/v1/rpc", { token, body: { jsonrpc: "2.0", method: "intent.list", id: 1 } })).body.result.data

  it("answers a first message, charges what it used, and keeps the session", async () => {
    const user = await Accounts.signupAndLogin(server)
    await server.request("POST", "/v1/memories", { token: user.session, body: { scope: "personal", content: "Our staging cluster is called kestrel." } })
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Which cluster is staging?" } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      session_id: expect.stringMatching(/^hud_/),
      message_id: expect.stringMatching(/^msg_/),
      intent_id: expect.stringMatching(/^int_/),
      status: "completed",
      mode: "single",
      requested_mode: "single",
      references: [],
      models: ["offline-standard"],
      offline: true,
      policy: { model_tier: { value: "standard", decided_by: "service_default" } }
    })
    expect(res.body.output).toMatch(/^\[offline\]/)
    // The memory reached the model.
    expect(res.body.output).toContain("kestrel")
    expect(res.body.usage.input_tokens).toBeGreaterThan(0)
    expect(res.body.usage.output_tokens).toBeGreaterThan(0)
    expect(res.body.credits_charged).toBeGreaterThan(0)
    expect(await balance(user.session)).toBe(1000 - res.body.credits_charged)

    const next = await server.request("POST", `/v1/huddle/sessions/${res.body.session_id}/messages`, {
      token: user.session,
      body: { content: "And production?", mode: "auto" }
    })
    expect(next.status).toBe(200)
    expect(next.body).toMatchObject({ session_id: res.body.session_id, mode: "single", requested_mode: "auto" })

    const session = await server.request("GET", `/v1/huddle/sessions/${res.body.session_id}`, { token: user.session })
    expect(session.status).toBe(200)
    expect(session.body.title).toBe("Which cluster is staging?")
    expect(session.body.messages.map((m: { role: string; content: string }) => [m.role, m.content.slice(0, 15)])).toEqual([
      ["user", "Which cluster i"],
      ["assistant", "[offline] This "],
      ["user", "And production?"],
      ["assistant", "[offline] This "]
    ])
    expect(session.body.messages[1]).toMatchObject({ intent_id: res.body.intent_id, credits_charged: res.body.credits_charged })
  })

  it("lists, renames and deletes sessions, and keeps them private", async () => {
    const user = await Accounts.signupAndLogin(server)
    const other = await Accounts.signupAndLogin(server, "other")
    const first = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "one" } })
    const second = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "two" } })
    const list = await server.request("GET", "/v1/huddle/sessions", { token: user.session })
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([second.body.session_id, first.body.session_id])
    const renamed = await server.request("PATCH", `/v1/huddle/sessions/${first.body.session_id}`, { token: user.session, body: { title: "Renamed" } })
    expect(renamed.body.title).toBe("Renamed")
    for (const [method, path, body] of [
      ["GET", `/v1/huddle/sessions/${first.body.session_id}`, undefined],
      ["PATCH", `/v1/huddle/sessions/${first.body.session_id}`, { title: "mine now" }],
      ["DELETE", `/v1/huddle/sessions/${first.body.session_id}`, undefined],
      ["POST", `/v1/huddle/sessions/${first.body.session_id}/messages`, { content: "hi" }]
    ] as const) {
      const res = await server.request(method, path, { token: other.session, ...(body ? { body } : {}) })
      expect(res.status, `${method} ${path}`).toBe(404)
    }
    expect((await server.request("GET", "/v1/huddle/sessions", { token: other.session })).body.data).toEqual([])
    expect((await server.request("DELETE", `/v1/huddle/sessions/${first.body.session_id}`, { token: user.session })).status).toBe(204)
    expect((await server.request("GET", `/v1/huddle/sessions/${first.body.session_id}`, { token: user.session })).status).toBe(404)
  })

  it("streams stage, token, metadata and done events in order", async () => {
    const user = await Accounts.signupAndLogin(server)
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, { token: user.session, body: { input: "Stream me an answer" } })
    expect(stream.status).toBe(200)
    expect(stream.headers.get("content-type")).toContain("text/event-stream")
    const names = stream.events.map((e) => e.event)
    expect(names[0]).toBe("stage")
    expect(names.slice(-2)).toEqual(["metadata", "done"])
    const firstToken = names.indexOf("token")
    expect(firstToken).toBeGreaterThan(0)
    expect(names.slice(firstToken, names.lastIndexOf("token") + 1).every((n) => n === "token")).toBe(true)
    expect(stream.events.filter((e) => e.event === "stage").map((e) => `${e.data.stage}:${e.data.status}`)).toEqual([
      "context:started",
      "context:completed",
      "planning:started",
      "planning:completed",
      "review:skipped",
      "execution:started",
      "execution:completed",
      "completion:completed"
    ])
    const text = stream.events.filter((e) => e.event === "token").map((e) => e.data.text).join("")
    const metadata = stream.events.find((e) => e.event === "metadata")!.data
    expect(text).toBe(metadata.output)
    expect(stream.events.at(-1)!.data).toEqual({ status: "completed" })
    expect(await balance(user.session)).toBe(1000 - metadata.credits_charged)
  })

  it("refuses bad input without charging", async () => {
    const user = await Accounts.signupAndLogin(server)
    for (const body of [{}, { input: "" }, { input: "   " }, { input: "x".repeat(32_001) }, { input: "hi", mode: "solo" }, { input: "hi", model_tier: "gold" }]) {
      const res = await server.request("POST", "/v1/huddle", { token: user.session, body })
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400)
    }
    expect(await balance(user.session)).toBe(1000)
    expect(await sessions(user.session)).toEqual([])
    expect(await intents(user.session)).toEqual([])
  })

  it("leaves no session, message or intent behind when it refuses a first message", async () => {
    const user = await Accounts.signupAndLogin(server)
    const org = await Orgs.createOrg(server)
    const refusals: ReadonlyArray<readonly [number, Record<string, unknown>, Record<string, string>?]> = [
      [400, { input: "hi", mode: "council" }],
      [404, { input: "hi", workspace_id: "wsp_01HZZZZZZZZZZZZZZZZZZZZZZZ" }],
      [404, { input: "hi", org_id: org.id }],
      [404, { input: "hi" }, { "openai-organization": org.id }]
    ]
    for (const [status, body, headers] of refusals) {
      const res = await server.request("POST", "/v1/huddle", { token: user.session, body, ...(headers ? { headers } : {}) })
      expect(res.status, JSON.stringify(body)).toBe(status)
      expect(res.body).toEqual({ error: expect.any(String), message: expect.any(String) })
    }
    expect(await sessions(user.session)).toEqual([])
    expect(await intents(user.session)).toEqual([])
    expect(await balance(user.session)).toBe(1000)
  })

  it("adds nothing to a session when it refuses a message", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const first = await server.request("POST", "/v1/huddle", { token: member.session, body: { input: "Plan the offsite", org_id: org.id } })
    expect(first.status, first.text).toBe(200)
    const messagesOf = async () => {
      const res = await server.request("GET", `/v1/huddle/sessions/${first.body.session_id}`, { token: member.session })
      expect(res.status, res.text).toBe(200)
      return res.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])
    }
    const before = await messagesOf()
    expect(before).toEqual([["user", "Plan the offsite"], ["assistant", first.body.output]])

    const invalid = await server.request("POST", `/v1/huddle/sessions/${first.body.session_id}/messages`, {
      token: member.session,
      body: { content: "Now with the council", mode: "council" }
    })
    expect(invalid.status, invalid.text).toBe(400)
    // Removed from the session's org, the member may no longer run in it.
    const removed = await server.request("DELETE", `/v1/orgs/${org.id}/admin/members/${member.id}`, { token: org.admin.session })
    expect(removed.status, removed.text).toBe(204)
    const outside = await server.request("POST", `/v1/huddle/sessions/${first.body.session_id}/messages`, {
      token: member.session,
      body: { content: "Still here?" }
    })
    expect(outside.status, outside.text).toBe(404)
    // Nor read, rename, list or delete what they said in it: it is the org's context.
    const sessionPath = `/v1/huddle/sessions/${first.body.session_id}`
    expect((await server.request("GET", sessionPath, { token: member.session })).status).toBe(404)
    expect((await server.request("PATCH", sessionPath, { token: member.session, body: { title: "mine" } })).status).toBe(404)
    expect((await server.request("DELETE", sessionPath, { token: member.session })).status).toBe(404)
    const listed = await server.request("GET", "/v1/huddle/sessions", { token: member.session })
    expect(listed.body.data.map((session: { id: string }) => session.id)).not.toContain(first.body.session_id)

    // The org's intents, as its admins see them (the member, gone, no longer lists them).
    const orgIntents = await server.request("POST", "/v1/rpc", {
      token: org.admin.session,
      body: { jsonrpc: "2.0", method: "intent.list", params: { org_id: org.id }, id: 1 }
    })
    expect(orgIntents.body.result.data.map((intent: { id: string }) => intent.id)).toEqual([first.body.intent_id])
    expect(await intents(member.session)).toEqual([])

    // Invited back, they see it again, as it was: the refused message added nothing.
    const invite = await server.request("POST", `/v1/orgs/${org.id}/admin/members/invite`, { token: org.admin.session, body: { email: member.email, role: "member" } })
    expect(invite.status, invite.text).toBe(201)
    expect((await server.request("POST", "/v1/auth/login", { body: { email: member.email, password: member.password } })).status).toBe(200)
    expect(await messagesOf()).toEqual(before)
    // A key of the member's bound to another org does not reach it.
    const other = await Orgs.createOrg(server, member, "Elsewhere")
    const bound = (await server.request("POST", "/v1/api-keys", { token: member.session, body: { name: "elsewhere", org_id: other.id } })).body.key
    expect((await server.request("GET", sessionPath, { token: bound })).status).toBe(404)
    const boundList = await server.request("GET", "/v1/huddle/sessions", { token: bound })
    expect(boundList.body.data.map((session: { id: string }) => session.id)).not.toContain(first.body.session_id)
    // Nor the member's personal sessions: a key bound to an org has no personal context (it
    // would have gone on in that org, under its policies and on its pool).
    const mine = await server.request("POST", "/v1/huddle", { token: member.session, body: { input: "Just for me" } })
    expect(mine.status, mine.text).toBe(200)
    const minePath = `/v1/huddle/sessions/${mine.body.session_id}`
    expect((await server.request("GET", minePath, { token: bound })).status).toBe(404)
    const goOn = await server.request("POST", `${minePath}/messages`, { token: bound, body: { content: "And more" } })
    expect(goOn.status, goOn.text).toBe(404)
    const boundAgain = await server.request("GET", "/v1/huddle/sessions", { token: bound })
    expect(boundAgain.body.data.map((session: { id: string }) => session.id)).not.toContain(mine.body.session_id)
    expect((await server.request("GET", minePath, { token: member.session })).body.messages).toHaveLength(2)
  })

  it("cannot escape an org's enforced economy tier by any request parameter", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { model_tier: "economy" } })
    await server.request("PUT", "/v1/me/preferences", { token: member.session, body: { model_tier: "premium" } })
    for (const tier of ["premium", "standard", undefined]) {
      const res = await server.request("POST", "/v1/huddle", {
        token: member.session,
        body: { input: "hello", org_id: org.id, ...(tier ? { model_tier: tier } : {}) }
      })
      expect(res.status).toBe(200)
      expect(res.body.models).toEqual(["offline-economy"])
      expect(res.body.policy.model_tier).toEqual({ value: "economy", decided_by: "org_policy" })
    }
    // The same through the OpenAI-Organization header.
    const viaHeader = await server.request("POST", "/v1/huddle", {
      token: member.session,
      body: { input: "hello", model_tier: "premium" },
      headers: { "openai-organization": org.id }
    })
    expect(viaHeader.body.models).toEqual(["offline-economy"])
    expect(viaHeader.headers.get("huddle-organization")).toBe(org.id)
    // Outside the org, the member's own preference applies; an OpenAI org id in that header is not read.
    const personal = await server.request("POST", "/v1/huddle", {
      token: member.session,
      body: { input: "hello" },
      headers: { "openai-organization": "org-AbCdEf0123456789abcdEFGH" }
    })
    expect(personal.status).toBe(200)
    expect(personal.headers.get("huddle-organization")).toBe("personal")
    expect(personal.body.models).toEqual(["offline-premium"])
    expect(personal.body.policy.model_tier.decided_by).toBe("personal")
    const outsider = await Accounts.signupAndLogin(server)
    expect((await server.request("POST", "/v1/huddle", { token: outsider.session, body: { input: "x", org_id: org.id } })).status).toBe(404)
  })

  describe("settings", () => {
    let org: Orgs.TestOrg
    let member: Accounts.TestUser
    beforeAll(async () => {
      org = await Orgs.createOrg(server)
      member = await Orgs.addMember(server, org)
    })

    it.live.prop(
      "for every setting, policy.decided_by names the highest-precedence source that set it",
      {
        policies: OrgPolicies,
        request: StartRequest.pipe(Schema.pick("mode", "model_tier")),
        personal: Preferences,
        orgDefaults: Preferences
      },
      (run) =>
        Effect.promise(async () => {
          const put = async (path: string, token: string, body: unknown) => {
            const res = await server.request("PUT", path, { token, body })
            expect(res.status, `${path}: ${res.text}`).toBe(200)
          }
          await put(`/v1/orgs/${org.id}/admin/policies`, org.admin.session, run.policies)
          await put(`/v1/orgs/${org.id}/admin/preferences`, org.admin.session, run.orgDefaults)
          await put("/v1/me/preferences", member.session, run.personal)
          const res = await server.request("POST", "/v1/huddle", {
            token: member.session,
            body: { input: "Plan the week", org_id: org.id, ...run.request }
          })
          const expected = expectedSettings(run)
          expect(res.status, res.text).toBe(200)
          expect(res.body.policy).toEqual(expected)
          expect(res.body.requested_mode).toBe(expected.mode.value)
        }),
      { timeout: 120_000, fastCheck: { numRuns: 25 } }
    )
  })

  it("stops at review when the org disables auto-execution, charging nothing", async () => {
    const org = await Orgs.createOrg(server)
    await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { auto_execute: false } })
    const before = await balance(org.admin.session)
    const res = await server.request("POST", "/v1/huddle", { token: org.admin.session, body: { input: "Drop the users table in production", org_id: org.id } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ status: "awaiting_review", output: null, message_id: null, credits_charged: 0 })
    expect(res.body.policy.auto_execute).toEqual({ value: false, decided_by: "org_policy" })
    expect(await balance(org.admin.session)).toBe(before)
    // Approved, it runs, and its answer joins the session with the completed intent.
    const approved = await server.request("POST", "/v1/rpc", {
      token: org.admin.session,
      body: { jsonrpc: "2.0", id: 1, method: "intent.approve", params: { id: res.body.intent_id } }
    })
    expect(approved.body.result, approved.text).toMatchObject({ status: "completed" })
    const session = (await server.request("GET", `/v1/huddle/sessions/${res.body.session_id}`, { token: org.admin.session })).body
    expect(session.messages.map((m: { role: string; intent_id: string | null; content: string }) => [m.role, m.intent_id, m.content])).toEqual([
      ["user", null, "Drop the users table in production"],
      ["assistant", res.body.intent_id, approved.body.result.output]
    ])
    expect(session.updated_at).toBe(session.messages[1].created_at)
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, { token: org.admin.session, body: { input: "again", org_id: org.id } })
    expect(stream.events.some((e) => e.event === "token")).toBe(false)
    expect(stream.events.find((e) => e.event === "stage" && e.data.stage === "review")!.data).toMatchObject({ status: "started", awaiting: "approval" })
    expect(stream.events.at(-1)).toEqual({ event: "done", data: { status: "awaiting_review" } })
  })
})

describe("huddle without credits", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ starterCredits: 0 })
  })
  afterAll(() => server.stop())

  it("answers 402 before any model is called, streamed or not", async () => {
    const user = await Accounts.signupAndLogin(server)
    const plain = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "hello" } })
    expect(plain.status).toBe(402)
    expect(plain.body).toEqual({ error: "INSUFFICIENT_CREDITS", message: expect.any(String) })
    const streamed = await SseClient.post(`${server.url}/v1/huddle?stream=true`, { token: user.session, body: { input: "hello" } })
    expect(streamed.status).toBe(402)
    expect(streamed.events).toEqual([{ event: "body", data: { error: "INSUFFICIENT_CREDITS", message: expect.any(String) } }])
    // Refused before anything was written: no session, message or intent.
    expect((await server.request("GET", "/v1/huddle/sessions", { token: user.session })).body.data).toEqual([])
    const intents = await server.request("POST", "/v1/rpc", { token: user.session, body: { jsonrpc: "2.0", method: "intent.list", id: 1 } })
    expect(intents.body.result.data).toEqual([])
  })

  it("adds nothing to a session when a message cannot be paid for", async () => {
    const user = await Accounts.signupAndLogin(server)
    // Awaiting review, the first message costs nothing yet; the second would run at once.
    await server.request("PUT", "/v1/me/preferences", { token: user.session, body: { auto_execute: false } })
    const first = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Draft the agenda" } })
    expect(first.status, first.text).toBe(200)
    expect(first.body.status).toBe("awaiting_review")
    await server.request("PUT", "/v1/me/preferences", { token: user.session, body: { auto_execute: true } })
    const next = await server.request("POST", `/v1/huddle/sessions/${first.body.session_id}/messages`, {
      token: user.session,
      body: { content: "And the minutes" }
    })
    expect(next.status, next.text).toBe(402)
    const session = await server.request("GET", `/v1/huddle/sessions/${first.body.session_id}`, { token: user.session })
    expect(session.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([["user", "Draft the agenda"]])
    const intents = await server.request("POST", "/v1/rpc", { token: user.session, body: { jsonrpc: "2.0", method: "intent.list", id: 1 } })
    expect(intents.body.result.data.map((intent: { id: string }) => intent.id)).toEqual([first.body.intent_id])
  })
})
