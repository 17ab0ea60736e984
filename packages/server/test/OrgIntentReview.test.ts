/**
 * Who reviews an org's intents held for review, over HTTP (decision 0015, "An approval decides
 * again"; the console's review queue): the member who submitted one and the org's admins. Another
 * plain member of the same org neither reads it (`intent.get`, the org's queue, the session it was
 * asked in) nor approves or rejects it: to them it does not exist (404), and nothing is run or
 * charged. An admin reads every member's, finds them in the queue, and approves or rejects them.
 */
import { Accounts, Orgs, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

describe("an org's intents held for review, across its members", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  const rpc = (token: string, method: string, params: unknown) =>
    server.request("POST", "/v1/rpc", { token, body: { jsonrpc: "2.0", method, params, id: 1 } })
  const balance = async (token: string) => (await server.request("GET", "/v1/me", { token })).body.credits.balance as number

  /** An org that reviews before running; a member's message held, another plain member, and a second admin. */
  const heldIntent = async () => {
    const org = await Orgs.createOrg(server)
    const submitter = await Orgs.addMember(server, org)
    const other = await Orgs.addMember(server, org)
    const admin = await Orgs.addMember(server, org, "admin")
    expect((await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { auto_execute: false } })).status).toBe(200)
    const held = await server.request("POST", "/v1/huddle", { token: submitter.session, body: { input: "Plan the migration.", org_id: org.id } })
    expect(held.status, held.text).toBe(200)
    expect(held.body.status).toBe("awaiting_review")
    return { org, submitter, other, admin, intentId: held.body.intent_id as string, sessionId: held.body.session_id as string }
  }

  const statusOf = async (token: string, id: string) => (await rpc(token, "intent.get", { id })).body.result.status as string

  it("a plain member can neither read, approve nor reject another member's intent", async () => {
    const { intentId, org, other, sessionId, submitter } = await heldIntent()
    const before = await balance(submitter.session)
    for (const method of ["intent.get", "intent.approve", "intent.reject"]) {
      const res = await rpc(other.session, method, { id: intentId })
      expect(res.body.error?.data, method).toMatchObject({ error: "NOT_FOUND" })
    }
    // Nor through a key of theirs bound to the org.
    const { key } = await Accounts.createApiKey(server, other, { org_id: org.id })
    for (const method of ["intent.get", "intent.approve", "intent.reject"]) {
      expect((await rpc(key, method, { id: intentId })).body.error?.data.error, `${method}, bound key`).toBe("NOT_FOUND")
    }
    // Not in their list, the org's queue is the admins', and the session it was asked in is not theirs.
    expect((await rpc(other.session, "intent.list", {})).body.result.data).toEqual([])
    expect((await rpc(other.session, "intent.list", { org_id: org.id })).body.error?.data.error).toBe("FORBIDDEN")
    expect((await server.request("GET", `/v1/huddle/sessions/${sessionId}`, { token: other.session })).status).toBe(404)
    // Still held, nothing run or charged.
    expect(await statusOf(submitter.session, intentId)).toBe("awaiting_review")
    expect(await balance(submitter.session)).toBe(before)
  })

  it("an admin reads every member's, finds them in the queue, and approves one", async () => {
    const { admin, intentId, org, submitter } = await heldIntent()
    for (const reviewer of [org.admin, admin]) {
      const got = await rpc(reviewer.session, "intent.get", { id: intentId })
      expect(got.body.result).toMatchObject({ id: intentId, status: "awaiting_review", org_id: org.id })
      const queue = await rpc(reviewer.session, "intent.list", { org_id: org.id, status: "awaiting_review" })
      expect(queue.body.result.data).toEqual([expect.objectContaining({ id: intentId, submitted_by: expect.objectContaining({ user_id: submitter.id }) })])
    }
    const before = await balance(submitter.session)
    const approved = await rpc(admin.session, "intent.approve", { id: intentId })
    expect(approved.body.result?.status, approved.text).toBe("completed")
    expect(await statusOf(submitter.session, intentId)).toBe("completed")
    // Run for the submitter: charged to them.
    expect(await balance(submitter.session)).toBeLessThan(before)
  })

  it("an admin rejects one", async () => {
    const { admin, intentId, submitter } = await heldIntent()
    const before = await balance(submitter.session)
    const rejected = await rpc(admin.session, "intent.reject", { id: intentId })
    expect(rejected.body.result?.status, rejected.text).toBe("rejected")
    expect(await statusOf(submitter.session, intentId)).toBe("rejected")
    expect(await balance(submitter.session)).toBe(before)
  })
})
