import { SqlError } from "@effect/sql/SqlError"
import { onDefect } from "@huddle/server/rpc/RpcHttp"
import * as JsonRpc from "@huddle/server/rpc/JsonRpc"
import { Accounts, Orgs, TestServer } from "@huddle/testkit"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const call = (method: string, params?: unknown, id: string | number | null = 1) => ({
  jsonrpc: "2.0",
  method,
  ...(params === undefined ? {} : { params }),
  id
})

const notify = (method: string, params?: unknown) => ({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) })

const rpcError = (code: number, error: string) => ({
  code,
  message: expect.any(String),
  data: expect.objectContaining({ error, message: expect.any(String) })
})

describe("JSON-RPC over HTTP", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ maxBodyBytes: 64 * 1024 })
  })
  afterAll(() => server.stop())

  const rpc = (token: string, body: unknown, headers?: Record<string, string>) =>
    server.request("POST", "/v1/rpc", { token, body, ...(headers === undefined ? {} : { headers }) })

  const balance = async (token: string): Promise<number> => {
    const me = await server.request("GET", "/v1/me", { token })
    expect(me.status).toBe(200)
    return me.body.credits.balance
  }

  /** Calls one method and expects a result. */
  const result = async (token: string, method: string, params?: unknown, headers?: Record<string, string>) => {
    const res = await rpc(token, call(method, params), headers)
    if (res.status !== 200 || res.body?.result === undefined) {
      throw new Error(`${method}: expected a result, got ${res.status}: ${res.text}`)
    }
    return res.body.result
  }

  it("submits an intent end to end on the offline provider and charges exactly what it reports", async () => {
    const user = await Accounts.signupAndLogin(server)
    const before = await balance(user.session)
    const res = await rpc(user.session, call("intent.submit", { input: "Explain what a JSON-RPC batch is." }, "first"))
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
    expect(res.body).toEqual({ jsonrpc: "2.0", result: expect.any(Object), id: "first" })
    const intent = res.body.result
    expect(intent).toMatchObject({
      id: expect.stringMatching(/^int_/),
      status: "completed",
      input: "Explain what a JSON-RPC batch is.",
      mode: "single",
      org_id: null,
      error: null,
      settings: { model_tier: { value: "standard", decided_by: "service_default" } }
    })
    expect(intent.output).toMatch(/^\[offline\]/)
    expect(intent.usage.input_tokens).toBeGreaterThan(0)
    expect(intent.usage.output_tokens).toBeGreaterThan(0)
    expect(intent.credits_charged).toBeGreaterThan(0)
    expect(Number.isInteger(intent.credits_charged)).toBe(true)
    expect(typeof intent.created_at).toBe("string")
    expect(await balance(user.session)).toBe(before - intent.credits_charged)

    // Readable by id and listed (with who submitted it), over the same endpoint.
    expect(await result(user.session, "intent.get", { id: intent.id })).toEqual(intent)
    const list = await result(user.session, "intent.list", { limit: 10 })
    expect(list).toEqual({ data: [{ ...intent, submitted_by: { user_id: user.id, email: user.email } }], next_cursor: null })
    expect(await result(user.session, "intent.list", { status: "rejected" })).toEqual({ data: [], next_cursor: null })
  })

  it("works with an API key, and takes the org from the Huddle-Organization or OpenAI-Organization header", async () => {
    const org = await Orgs.createOrg(server)
    const key = await Accounts.createApiKey(server, org.admin)
    const viaHuddle = await result(key.key, "intent.submit", { input: "hello" }, { "huddle-organization": org.id })
    expect(viaHuddle.org_id).toBe(org.id)
    const viaOpenAi = await result(key.key, "intent.submit", { input: "hello" }, { "openai-organization": org.id })
    expect(viaOpenAi.org_id).toBe(org.id)
    expect((await result(key.key, "intent.submit", { input: "hello" })).org_id).toBeNull()
    // An org the caller is not a member of does not exist for them.
    const stranger = await Accounts.signupAndLogin(server)
    const res = await rpc(stranger.session, call("intent.submit", { input: "hello", org_id: org.id }))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32004, "NOT_FOUND"), id: 1 })
  })

  it("accepts the spec's bare {method, params} shape and answers it with id null", async () => {
    const user = await Accounts.signupAndLogin(server)
    const res = await rpc(user.session, { method: "intent.submit", params: { input: "Say hi." } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ jsonrpc: "2.0", result: expect.objectContaining({ status: "completed" }), id: null })
    expect(res.body.result.output).toMatch(/^\[offline\]/)
    // With an id, it is echoed.
    const withId = await rpc(user.session, { method: "intent.list", id: 9 })
    expect(withId.body).toEqual({
      jsonrpc: "2.0",
      result: { data: [{ ...res.body.result, submitted_by: { user_id: user.id, email: user.email } }], next_cursor: null },
      id: 9
    })
  })

  it("answers malformed JSON with a parse error (-32700), HTTP 200", async () => {
    const user = await Accounts.signupAndLogin(server)
    for (const body of ["{\"jsonrpc\": \"2.0\", \"method\": ", "[{\"method\": \"intent.list\"},", "{'a': 1}"]) {
      const res = await rpc(user.session, body)
      expect(res.status, body).toBe(200)
      expect(res.body, body).toEqual({ jsonrpc: "2.0", error: rpcError(-32700, "INVALID_REQUEST"), id: null })
      expect(res.body.error.message).toBe("Parse error")
    }
    const empty = await server.request("POST", "/v1/rpc", { token: user.session })
    expect(empty.status).toBe(200)
    expect(empty.body.error.code).toBe(-32700)
  })

  it("answers invalid requests with -32600, echoing the id when it could be read", async () => {
    const user = await Accounts.signupAndLogin(server)
    const cases: ReadonlyArray<readonly [unknown, string | number | null]> = [
      [42, null],
      // A JSON string (the test client sends strings as they are).
      ["\"intent.list\"", null],
      [{ foo: "boo" }, null],
      [{ jsonrpc: "2.0", method: 1, params: "bar", id: 5 }, 5],
      [{ jsonrpc: "1.0", method: "intent.list", id: "x" }, "x"],
      [{ jsonrpc: "2.0", method: "intent.list", params: "bar", id: 6 }, 6],
      [{ jsonrpc: "2.0", method: "intent.list", id: { nested: true } }, null]
    ]
    for (const [body, id] of cases) {
      const res = await rpc(user.session, body)
      expect(res.status, JSON.stringify(body)).toBe(200)
      expect(res.body, JSON.stringify(body)).toEqual({ jsonrpc: "2.0", error: rpcError(-32600, "INVALID_REQUEST"), id })
      expect(res.body.error.message).toBe("Invalid Request")
    }
  })

  it("answers an empty batch with a single -32600 error", async () => {
    const user = await Accounts.signupAndLogin(server)
    const res = await rpc(user.session, [])
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32600, "INVALID_REQUEST"), id: null })
    const invalidMembers = await rpc(user.session, [1, 2])
    expect(invalidMembers.body).toEqual([
      { jsonrpc: "2.0", error: rpcError(-32600, "INVALID_REQUEST"), id: null },
      { jsonrpc: "2.0", error: rpcError(-32600, "INVALID_REQUEST"), id: null }
    ])
  })

  it("answers an unknown method with -32601", async () => {
    const user = await Accounts.signupAndLogin(server)
    const res = await rpc(user.session, call("intent.delete", { id: "x" }, 3))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32601, "NOT_FOUND"), id: 3 })
    expect(res.body.error.message).toBe("Method not found")
    expect(res.body.error.data.message).toContain("intent.delete")
  })

  it("answers params that fail the method's schema with -32602 naming the field", async () => {
    const user = await Accounts.signupAndLogin(server)
    const cases: ReadonlyArray<readonly [string, unknown, string]> = [
      ["intent.submit", {}, "input"],
      ["intent.submit", undefined, "input"],
      ["intent.submit", { input: "" }, "input"],
      ["intent.submit", { input: "   " }, "input"],
      ["intent.submit", { input: "x".repeat(32_001) }, "input"],
      ["intent.submit", { input: 42 }, "input"],
      ["intent.submit", { input: "hi", model_tier: "ultra" }, "model_tier"],
      ["intent.get", { id: 7 }, "id"],
      ["intent.list", { limit: 0 }, "limit"],
      ["intent.list", { status: "done" }, "status"],
      ["intent.submit", { input: "\ud800" }, "input"],
      ["intent.submit", { input: "a\u0000b" }, "input"],
      ["intent.submit", { input: "hi", modle: "fake-premium" }, "modle"],
      ["intent.get", { id: "int_1", verbose: true }, "verbose"],
      ["intent.list", { cursor: "garbage" }, "cursor"],
      ["intent.list", { org_id: "" }, "org_id"],
      ["intent.list", { org_id: 42 }, "org_id"]
    ]
    for (const [method, params, field] of cases) {
      const res = await rpc(user.session, call(method, params))
      const what = `${method} ${JSON.stringify(params)?.slice(0, 40)}`
      expect(res.status, what).toBe(200)
      expect(res.body, what).toEqual({ jsonrpc: "2.0", error: rpcError(-32602, "INVALID_REQUEST"), id: 1 })
      expect(res.body.error.message).toBe("Invalid params")
      expect(res.body.error.data.field, what).toBe(field)
      expect(res.body.error.data.message, what).toMatch(new RegExp(`^${field}: `))
      expect(res.body.error.data.issues[0].field, what).toBe(field)
    }
    // Params by position are not supported: every method takes named params.
    const positional = await rpc(user.session, call("intent.get", ["int_1"]))
    expect(positional.body.error).toEqual(rpcError(-32602, "INVALID_REQUEST"))
    // Nothing ran, nothing was charged.
    expect(await result(user.session, "intent.list")).toEqual({ data: [], next_cursor: null })
  })

  it("answers a defect with -32603 and no internals (INTERNAL, SERVICE_UNAVAILABLE when storage is down; 500 and 503 in the bare shape)", async () => {
    const rpcOf = JsonRpc.make<null>([
      JsonRpc.method({
        name: "boom",
        summary: "dies",
        description: "dies",
        rateClass: "read",
        params: Schema.Struct({ storage: Schema.optional(Schema.Boolean) }),
        result: Schema.String,
        resultName: "nothing",
        errors: [],
        handler: ({ storage }) =>
          Effect.die(
            storage === true
              ? new SqlError({ message: "Failed to execute statement", cause: Object.assign(new Error("connect ECONNREFUSED 10.0.0.7:5432"), { code: "ECONNREFUSED" }) })
              : new Error("secret detail")
          )
      })
    ], { onDefect })
    const bug = await Effect.runPromise(rpcOf.answer(JSON.stringify(call("boom")), null))
    // A JSON-RPC 2.0 call: 200, the error object says it; kept for a retry as a 500 would be.
    expect(bug.status).toBe(200)
    expect(bug.restStatus).toBe(500)
    expect(bug.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32603, "INTERNAL"), id: 1 })
    expect(JSON.stringify(bug.body)).not.toContain("secret")
    const outage = await Effect.runPromise(rpcOf.answer(JSON.stringify(call("boom", { storage: true }, 2)), null))
    expect(outage.status).toBe(200)
    expect(outage.restStatus).toBe(503)
    expect(outage.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32603, "SERVICE_UNAVAILABLE"), id: 2 })
    expect(JSON.stringify(outage.body)).not.toContain("10.0.0.7")
    // The bare shape keeps the REST statuses.
    const bareBug = await Effect.runPromise(rpcOf.answer(JSON.stringify({ method: "boom", id: 3 }), null))
    expect(bareBug.status).toBe(500)
    expect(bareBug.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32603, "INTERNAL"), id: 3 })
    const bareOutage = await Effect.runPromise(rpcOf.answer(JSON.stringify({ method: "boom", params: { storage: true } }), null))
    expect(bareOutage.status).toBe(503)
    expect(bareOutage.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32603, "SERVICE_UNAVAILABLE"), id: null })
    // In a batch, the others are still answered and the status is 200.
    const batch = await Effect.runPromise(rpcOf.answer(JSON.stringify([call("boom", {}, 1), call("nope", {}, 2)]), null))
    expect(batch.status).toBe(200)
    expect(batch.body).toEqual([
      { jsonrpc: "2.0", error: rpcError(-32603, "INTERNAL"), id: 1 },
      { jsonrpc: "2.0", error: rpcError(-32601, "NOT_FOUND"), id: 2 }
    ])
  })

  it("answers a batch with one response per call, none for notifications, and runs the notifications", async () => {
    const user = await Accounts.signupAndLogin(server)
    const res = await rpc(user.session, [
      call("intent.submit", { input: "first" }, 1),
      notify("intent.submit", { input: "notified" }),
      call("intent.get", { id: "int_nope" }, "two"),
      { jsonrpc: "2.0", method: 99, id: 4 },
      "not a request",
      call("no.such.method", {}, 3),
      call("intent.submit", { input: "" }, 5)
    ])
    expect(res.status).toBe(200)
    expect(Array.isArray(res.body)).toBe(true)
    const byId = new Map<unknown, Array<any>>()
    for (const response of res.body) {
      expect(response.jsonrpc).toBe("2.0")
      byId.set(response.id, [...(byId.get(response.id) ?? []), response])
    }
    expect(res.body).toHaveLength(6)
    expect([...byId.keys()].sort()).toEqual([1, 3, 4, 5, "two", null].sort())
    for (const id of [1, 3, 4, 5, "two"]) expect(byId.get(id), String(id)).toHaveLength(1)
    expect(byId.get(1)![0].result).toMatchObject({ status: "completed", input: "first" })
    expect(byId.get("two")![0].error).toEqual(rpcError(-32004, "NOT_FOUND"))
    expect(byId.get(4)![0].error).toEqual(rpcError(-32600, "INVALID_REQUEST"))
    expect(byId.get(null)![0].error).toEqual(rpcError(-32600, "INVALID_REQUEST"))
    expect(byId.get(3)![0].error).toEqual(rpcError(-32601, "NOT_FOUND"))
    expect(byId.get(5)![0].error).toEqual(rpcError(-32602, "INVALID_REQUEST"))
    // The notification ran, though nothing answered it.
    const inputs = (await result(user.session, "intent.list")).data.map((intent: { input: string }) => intent.input)
    expect(inputs.sort()).toEqual(["first", "notified"])
  })

  it("answers only-notifications, batched or single, with 204 and no body", async () => {
    const user = await Accounts.signupAndLogin(server)
    const batch = await rpc(user.session, [notify("intent.list"), notify("intent.get", { id: "int_nope" }), notify("nothing.here")])
    expect(batch.status).toBe(204)
    expect(batch.text).toBe("")
    const single = await rpc(user.session, notify("intent.submit", { input: "fire and forget" }))
    expect(single.status).toBe(204)
    expect(single.text).toBe("")
    expect((await result(user.session, "intent.list")).data).toHaveLength(1)
  })

  it("maps domain errors to application codes with data {error, message}: HTTP 200 for JSON-RPC 2.0, the REST status in the bare shape", async () => {
    const user = await Accounts.signupAndLogin(server)
    const res = await rpc(user.session, call("intent.get", { id: "int_01HZZZZZZZZZZZZZZZZZZZZZZZ" }, 8))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      jsonrpc: "2.0",
      error: { code: -32004, message: "Intent not found", data: { error: "NOT_FOUND", message: "Intent not found" } },
      id: 8
    })
    // Someone else's intent does not exist for the caller.
    const mine = await result(user.session, "intent.submit", { input: "private" })
    const other = await Accounts.signupAndLogin(server)
    const hidden = await rpc(other.session, call("intent.get", { id: mine.id }))
    expect(hidden.status).toBe(200)
    expect(hidden.body.error).toEqual(rpcError(-32004, "NOT_FOUND"))
    // In the spec's bare {method, params} shape, the REST status.
    const bare = await rpc(other.session, { method: "intent.get", params: { id: mine.id } })
    expect(bare.status).toBe(404)
    expect(bare.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32004, "NOT_FOUND"), id: null })
    // An unknown model is not found, by the one rule every model call follows (as on /v1/chat/completions).
    const unknownModel = await rpc(user.session, call("intent.submit", { input: "hi", model: "gpt-17" }))
    expect(unknownModel.status).toBe(200)
    expect(unknownModel.body.error).toEqual(rpcError(-32004, "NOT_FOUND"))
    expect(unknownModel.body.error.message).toBe("The model `gpt-17` does not exist or you do not have access to it.")
    // Refused submissions leave no intent behind.
    expect((await result(user.session, "intent.list")).data.map((i: { id: string }) => i.id)).toEqual([mine.id])
    // In a batch, the same error is answered 200.
    const batched = await rpc(user.session, [call("intent.get", { id: "int_nope" }, 1)])
    expect(batched.status).toBe(200)
    expect(batched.body).toEqual([{ jsonrpc: "2.0", error: rpcError(-32004, "NOT_FOUND"), id: 1 }])
  })

  it("answers INSUFFICIENT_CREDITS when nothing can pay (HTTP 200; 402 in the bare shape), and calls no model", async () => {
    const broke = await TestServer.start({ starterCredits: 0 })
    try {
      const user = await Accounts.signupAndLogin(broke)
      const res = await broke.request("POST", "/v1/rpc", { token: user.session, body: call("intent.submit", { input: "hi" }, "p") })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32001, "INSUFFICIENT_CREDITS"), id: "p" })
      const bare = await broke.request("POST", "/v1/rpc", { token: user.session, body: { method: "intent.submit", params: { input: "hi" } } })
      expect(bare.status).toBe(402)
      expect(bare.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32001, "INSUFFICIENT_CREDITS"), id: null })
      // Refused before anything was written: no intent.
      const list = await broke.request("POST", "/v1/rpc", { token: user.session, body: call("intent.list") })
      expect(list.body.result).toEqual({ data: [], next_cursor: null })
    } finally {
      await broke.stop()
    }
  })

  it("stops at awaiting_review under auto_execute: false; approve executes and charges once, reject rejects", async () => {
    const org = await Orgs.createOrg(server)
    const admin = org.admin.session
    const put = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: admin, body: { auto_execute: false } })
    expect(put.status).toBe(200)
    const before = await balance(admin)

    const waiting = await result(admin, "intent.submit", { input: "Draft the release notes.", org_id: org.id })
    expect(waiting).toMatchObject({
      status: "awaiting_review",
      org_id: org.id,
      output: null,
      usage: null,
      credits_charged: 0,
      settings: { auto_execute: { value: false, decided_by: "org_policy" } }
    })
    expect(waiting.plan.worst_case_credits).toBeGreaterThan(0)
    // The stored model input (memories, history) never leaves the service.
    expect(waiting.plan).not.toHaveProperty("messages")
    expect(await balance(admin)).toBe(before)
    expect(await result(admin, "intent.list", { status: "awaiting_review" }))
      .toEqual({ data: [{ ...waiting, submitted_by: { user_id: org.admin.id, email: org.admin.email } }], next_cursor: null })

    const approved = await result(admin, "intent.approve", { id: waiting.id })
    expect(approved).toMatchObject({ id: waiting.id, status: "completed", error: null })
    expect(approved.output).toMatch(/^\[offline\]/)
    expect(approved.credits_charged).toBeGreaterThan(0)
    expect(await balance(admin)).toBe(before - approved.credits_charged)

    const again = await rpc(admin, call("intent.approve", { id: waiting.id }, 2))
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32005, "CONFLICT"), id: 2 })
    expect(await balance(admin)).toBe(before - approved.credits_charged)

    const second = await result(admin, "intent.submit", { input: "Delete the staging data.", org_id: org.id })
    expect(second.status).toBe("awaiting_review")
    const rejected = await result(admin, "intent.reject", { id: second.id })
    expect(rejected).toMatchObject({ id: second.id, status: "rejected", credits_charged: 0, output: null })
    expect((await rpc(admin, call("intent.reject", { id: second.id }))).body.error).toEqual(rpcError(-32005, "CONFLICT"))
    expect((await rpc(admin, call("intent.approve", { id: second.id }))).body.error).toEqual(rpcError(-32005, "CONFLICT"))
    expect((await rpc(admin, { method: "intent.approve", params: { id: second.id } })).status).toBe(409)
    expect(await balance(admin)).toBe(before - approved.credits_charged)

    // Another user cannot see, approve or reject it.
    const stranger = await Accounts.signupAndLogin(server)
    const third = await result(admin, "intent.submit", { input: "third", org_id: org.id })
    expect((await rpc(stranger.session, call("intent.approve", { id: third.id }))).body.error).toEqual(rpcError(-32004, "NOT_FOUND"))
    expect((await rpc(stranger.session, call("intent.reject", { id: third.id }))).body.error).toEqual(rpcError(-32004, "NOT_FOUND"))
  })

  it("lists a member's intents in an org only while they are in it, as intent.get shows them", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const inOrg = await result(member.session, "intent.submit", { input: "Summarise the meeting.", org_id: org.id })
    const personal = await result(member.session, "intent.submit", { input: "Summarise my notes." })
    const ids = async () => (await result(member.session, "intent.list", { limit: 10 })).data.map((intent: { id: string }) => intent.id)
    expect(await ids()).toEqual([personal.id, inOrg.id])

    expect((await server.request("DELETE", `/v1/orgs/${org.id}/admin/members/${member.id}`, { token: org.admin.session })).status).toBe(204)
    expect(await ids()).toEqual([personal.id])
    const get = await rpc(member.session, call("intent.get", { id: inOrg.id }))
    expect(get.body.error.data.error).toBe("NOT_FOUND")
    // The org's admins still see it in the org's list.
    const queue = await result(org.admin.session, "intent.list", { org_id: org.id })
    expect(queue.data.map((intent: { id: string }) => intent.id)).toContain(inOrg.id)
  })

  it("applies an enforced model tier over the request, and refuses a forbidden named model with POLICY_VIOLATION", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const put = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { model_tier: "economy" } })
    expect(put.status).toBe(200)

    const intent = await result(member.session, "intent.submit", { input: "Summarise our plan.", org_id: org.id, model_tier: "premium" })
    expect(intent.status).toBe("completed")
    expect(intent.settings.model_tier).toEqual({ value: "economy", decided_by: "org_policy" })
    expect(intent.models).toEqual(["offline-economy"])

    const named = await rpc(member.session, call("intent.submit", { input: "Summarise our plan.", org_id: org.id, model: "offline-premium" }, 7))
    expect(named.status).toBe(200)
    expect(named.body).toEqual({ jsonrpc: "2.0", error: rpcError(-32002, "POLICY_VIOLATION"), id: 7 })
    // A refused submission leaves no intent behind.
    expect((await result(member.session, "intent.list")).data.map((i: { id: string }) => i.id)).toEqual([intent.id])

    // Outside the org, the request's tier applies.
    const personal = await result(member.session, "intent.submit", { input: "Summarise our plan.", model_tier: "premium" })
    expect(personal.settings.model_tier).toEqual({ value: "premium", decided_by: "request" })
  })

  it("flags risky requests for review under a low risk tolerance, naming the category and what matched", async () => {
    const user = await Accounts.signupAndLogin(server)
    const put = await server.request("PUT", "/v1/me/preferences", { token: user.session, body: { risk_tolerance: "low" } })
    expect(put.status, put.text).toBe(200)
    const flagsOf = async (input: string) => (await result(user.session, "intent.submit", { input })).plan.flags
    expect(await flagsOf("Drop the users table")).toEqual([{ category: "destructive", match: "Drop the users table" }])
    expect(await flagsOf("Delete all customer records")).toEqual([{ category: "destructive", match: "Delete all customer records" }])
    expect(await flagsOf("Wire $4,000 to this IBAN and deploy to prod")).toEqual([
      { category: "production", match: "deploy to prod" },
      { category: "money_movement", match: "Wire $4,000" }
    ])
    expect(await flagsOf("How do I drop a pin on the map?")).toEqual([])
  })

  it("describes every method with rpc.discover: an OpenRPC document generated from the schemas", async () => {
    const user = await Accounts.signupAndLogin(server)
    const doc = await result(user.session, "rpc.discover")
    expect(doc.openrpc).toMatch(/^1\.2\./)
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) })
    const names = doc.methods.map((m: { name: string }) => m.name)
    expect(names.sort()).toEqual(["intent.approve", "intent.get", "intent.list", "intent.reject", "intent.submit", "rpc.discover"])
    const submit = doc.methods.find((m: { name: string }) => m.name === "intent.submit")
    expect(submit.paramStructure).toBe("by-name")
    expect(submit.params.map((p: { name: string }) => p.name)).toEqual(["input", "mode", "model_tier", "model", "org_id", "workspace_id"])
    expect(submit.params[0]).toMatchObject({ name: "input", required: true, schema: { type: "string", minLength: 1, maxLength: 32000 } })
    expect(submit.params[1]).toMatchObject({ name: "mode", required: false, schema: { enum: ["single", "multi", "auto"] } })
    expect(submit.params[2]).toMatchObject({ name: "model_tier", required: false, schema: { enum: ["economy", "standard", "premium"] } })
    expect(submit.description).toContain("consensus")
    expect(submit.result).toEqual({ name: "intent", schema: { $ref: "#/components/schemas/Intent" } })
    expect(submit.errors.map((e: { code: number }) => e.code)).toEqual(expect.arrayContaining([-32001, -32002, -32004]))
    expect(submit.errors.find((e: { code: number }) => e.code === -32001).data).toEqual({ error: "INSUFFICIENT_CREDITS" })
    const intentSchema = doc.components.schemas.Intent
    expect(intentSchema.type).toBe("object")
    expect(intentSchema.required).toEqual(expect.arrayContaining(["id", "status", "output", "usage", "credits_charged", "settings"]))
    expect(intentSchema.properties.status.enum).toContain("awaiting_review")
    const list = doc.methods.find((m: { name: string }) => m.name === "intent.list")
    expect(list.result.schema.properties.data.items).toEqual({ $ref: "#/components/schemas/ListedIntent" })
    expect(doc.components.schemas.ListedIntent.required).toEqual(expect.arrayContaining(["id", "status", "submitted_by"]))
    expect(list.params.map((p: { name: string }) => p.name)).toEqual(["limit", "cursor", "status", "org_id"])
    expect(list.params.every((p: { required: boolean }) => !p.required)).toBe(true)
    // FORBIDDEN and NOT_FOUND for org_id; every method may be rate limited.
    expect(list.errors.map((e: { code: number }) => e.code)).toEqual(expect.arrayContaining([-32003, -32004]))
    const discover = doc.methods.find((m: { name: string }) => m.name === "rpc.discover")
    expect(discover.params).toEqual([])
    // Every reference resolves inside the document.
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? []
    for (const ref of refs) {
      const name = ref.slice('"$ref":"#/components/schemas/'.length, -1)
      expect(doc.components.schemas[name], ref).toBeDefined()
    }
  })

  it("answers transport failures before dispatch as plain HTTP errors", async () => {
    const missing = await server.request("POST", "/v1/rpc", { body: call("intent.list") })
    expect(missing.status).toBe(401)
    expect(missing.body).toEqual({ error: "UNAUTHORIZED", message: expect.any(String) })
    const invalid = await rpc("hk_not_a_real_key", call("intent.list"))
    expect(invalid.status).toBe(401)
    expect(invalid.body).toEqual({ error: "UNAUTHORIZED", message: expect.any(String) })
    // Unauthenticated garbage is still a 401, not a parse error.
    expect((await server.request("POST", "/v1/rpc", { body: "{nope" })).status).toBe(401)

    const user = await Accounts.signupAndLogin(server)
    const tooLarge = await rpc(user.session, call("intent.submit", { input: "x".repeat(70 * 1024) }))
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.body).toEqual({ error: "PAYLOAD_TOO_LARGE", message: expect.any(String) })
    const notJson = await rpc(user.session, JSON.stringify(call("intent.list")), { "content-type": "text/plain" })
    expect(notJson.status).toBe(400)
    expect(notJson.body).toEqual({ error: "INVALID_REQUEST", message: expect.stringContaining("Content-Type") })
  })

  it("is in the OpenAPI document", async () => {
    const doc = await server.request("GET", "/v1/openapi.json")
    expect(doc.status).toBe(200)
    expect(doc.body.paths["/v1/rpc"].post).toBeDefined()
  })
})
