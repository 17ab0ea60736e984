/**
 * `/v1/rpc` with the third-party tools JSON-RPC users have, against the real server: the
 * `json-rpc-2.0` client over fetch exactly as its README documents it (a non-200 answer is a
 * transport error, which the client reports as code 0 with the HTTP status text), the OpenRPC validator of `@open-rpc/schema-utils-js`, and ajv for the
 * schemas of `rpc.discover`. An admin's queue of an org's held intents (`intent.list` with
 * `org_id`) is read through the same client.
 */
import { Accounts, type FakeOpenAi, Orgs, TestServer, WithFakeUpstream } from "@huddle/testkit"
import { Ajv } from "ajv"
import { JSONRPCClient, JSONRPCErrorException, type JSONRPCResponse } from "json-rpc-2.0"
import { createRequire } from "node:module"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { answerCouncil, consensusText, dissent } from "./councilUpstream.js"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Loaded untyped: its types reach `@open-rpc/spec-types`, which ships `.ts` sources beside its
// `.d.ts` that `tsc -b` would then compile under our strict settings (and fail on).
const { validateOpenRPCDocument } = createRequire(import.meta.url)("@open-rpc/schema-utils-js") as {
  readonly validateOpenRPCDocument: (document: unknown) => true | Error
}

/** The README's client, plus the HTTP statuses it saw (for the assertions, not for the client). */
const clientFor = (server: TestServer.TestServer, token: string) => {
  const statuses: Array<number> = []
  const client: JSONRPCClient = new JSONRPCClient((jsonRPCRequest) =>
    fetch(`${server.url}/v1/rpc`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(jsonRPCRequest)
    }).then((response) => {
      statuses.push(response.status)
      if (response.status === 200) {
        return response.json().then((jsonRPCResponse) => client.receive(jsonRPCResponse as JSONRPCResponse))
      } else if (jsonRPCRequest.id !== undefined) {
        return Promise.reject(new Error(response.statusText))
      }
    })
  )
  return { client, statuses }
}

const rejection = async (promise: PromiseLike<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}

describe("JSON-RPC clients against /v1/rpc", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  it("json-rpc-2.0: a result resolves, an application error rejects with the JSON-RPC error object, not a transport error", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { client, statuses } = clientFor(server, user.session)
    const intent = await client.request("intent.submit", { input: "Say hi." })
    expect(intent).toMatchObject({ id: expect.stringMatching(/^int_/), status: "completed", input: "Say hi." })
    expect(await client.request("intent.get", { id: intent.id })).toEqual(intent)

    const missing = await rejection(client.request("intent.get", { id: "int_01HZZZZZZZZZZZZZZZZZZZZZZZ" }))
    expect(missing).toBeInstanceOf(JSONRPCErrorException)
    const error = missing as JSONRPCErrorException
    expect(error.code).toBe(-32004)
    expect(error.message).toBe("Intent not found")
    expect(error.data).toEqual({ error: "NOT_FOUND", message: "Intent not found" })

    const unknownMethod = await rejection(client.request("intent.delete", { id: intent.id }))
    expect(unknownMethod).toBeInstanceOf(JSONRPCErrorException)
    expect((unknownMethod as JSONRPCErrorException).code).toBe(-32601)
    expect(statuses).toEqual([200, 200, 200, 200])
  })

  it("json-rpc-2.0: insufficient credits arrive as -32001 INSUFFICIENT_CREDITS", async () => {
    const broke = await TestServer.start({ starterCredits: 0 })
    try {
      const user = await Accounts.signupAndLogin(broke)
      const { client, statuses } = clientFor(broke, user.session)
      const refused = await rejection(client.request("intent.submit", { input: "hi" }))
      expect(refused).toBeInstanceOf(JSONRPCErrorException)
      expect((refused as JSONRPCErrorException).code).toBe(-32001)
      expect((refused as JSONRPCErrorException).data).toMatchObject({ error: "INSUFFICIENT_CREDITS" })
      expect(statuses).toEqual([200])
      // Refused before anything was written.
      expect(await client.request("intent.list", {})).toEqual({ data: [], next_cursor: null })
    } finally {
      await broke.stop()
    }
  })

  it("json-rpc-2.0: a missing or invalid key is still an HTTP 401, which the client reports as a transport error", async () => {
    for (const token of ["", "hk_not_a_real_key"]) {
      const { client, statuses } = clientFor(server, token)
      const refused = await rejection(client.request("intent.list", {}))
      // The client turns any failed send into code 0 (its DefaultErrorCode) with the status text.
      expect(refused, token).toBeInstanceOf(JSONRPCErrorException)
      expect((refused as JSONRPCErrorException).code, token).toBe(0)
      expect((refused as JSONRPCErrorException).message, token).toBe("Unauthorized")
      expect((refused as JSONRPCErrorException).data, token).toBeUndefined()
      expect(statuses).toEqual([401])
    }
  })

  it("json-rpc-2.0: intent.list with org_id gives an admin the org's intents, every member's, a page at a time; a member is refused, an outsider told it does not exist", async () => {
    const org = await Orgs.createOrg(server)
    expect((await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { auto_execute: false } })).status).toBe(200)
    const [ann, bob] = [await Orgs.addMember(server, org), await Orgs.addMember(server, org)]
    const admin = clientFor(server, org.admin.session).client
    const annClient = clientFor(server, ann.session).client
    const bobClient = clientFor(server, bob.session).client
    /** In the org unless told otherwise (`null`: personal). */
    const submit = async (client: JSONRPCClient, input: string, orgId: string | null = org.id) =>
      (await client.request("intent.submit", { input, ...(orgId === null ? {} : { org_id: orgId }) })) as { id: string; status: string }

    // Held under the org's policy: Ann's two, Bob's one, the admin's own; Ann's personal one runs.
    const held = [
      await submit(annClient, "Draft the launch email"),
      await submit(bobClient, "Summarise the incident report"),
      await submit(annClient, "Plan the offsite"),
      await submit(admin, "Review the budget")
    ]
    expect(held.map((intent) => intent.status)).toEqual(["awaiting_review", "awaiting_review", "awaiting_review", "awaiting_review"])
    expect((await submit(annClient, "Something personal", null)).status).toBe("completed")
    // Another org the admin runs: its intents are not this org's.
    const other = await Orgs.createOrg(server, org.admin, "Other Co")
    await submit(admin, "In the other org", other.id)

    type Listed = { id: string; input: string; status: string; org_id: string; submitted_by: { user_id: string; email: string } }
    type ListPage = { data: ReadonlyArray<Listed>; next_cursor: string | null }
    const list = (client: JSONRPCClient, params: object) => client.request("intent.list", params) as Promise<ListPage>

    // Newest first, two at a time, each with its submitter.
    const first = await list(admin, { org_id: org.id, status: "awaiting_review", limit: 2 })
    expect(first.data.map((intent) => [intent.input, intent.submitted_by.email])).toEqual([
      ["Review the budget", org.admin.email],
      ["Plan the offsite", ann.email]
    ])
    expect(first.next_cursor).toEqual(expect.any(String))
    const second = await list(admin, { org_id: org.id, status: "awaiting_review", limit: 2, cursor: first.next_cursor })
    expect(second.data.map((intent) => [intent.input, intent.submitted_by.user_id])).toEqual([
      ["Summarise the incident report", bob.id],
      ["Draft the launch email", ann.id]
    ])
    expect(second.next_cursor).toBeNull()
    expect([...first.data, ...second.data].every((intent) => intent.org_id === org.id)).toBe(true)

    // The admin approves Bob's: it leaves the queue, and the unfiltered list shows it completed.
    expect(await admin.request("intent.approve", { id: held[1]!.id })).toMatchObject({ status: "completed" })
    expect((await list(admin, { org_id: org.id, status: "awaiting_review" })).data.map((intent) => intent.id))
      .toEqual([held[3]!.id, held[2]!.id, held[0]!.id])
    expect((await list(admin, { org_id: org.id })).data.map((intent) => [intent.id, intent.status])).toEqual([
      [held[3]!.id, "awaiting_review"],
      [held[2]!.id, "awaiting_review"],
      [held[1]!.id, "completed"],
      [held[0]!.id, "awaiting_review"]
    ])

    // A member is refused the org's list; their own still lists only theirs.
    const refused = await rejection(list(annClient, { org_id: org.id }))
    expect(refused).toBeInstanceOf(JSONRPCErrorException)
    expect((refused as JSONRPCErrorException).code).toBe(-32003)
    expect((refused as JSONRPCErrorException).data).toEqual({ error: "FORBIDDEN", message: "Only organization admins may do this" })
    expect((await list(annClient, {})).data.map((intent) => [intent.input, intent.submitted_by.email])).toEqual([
      ["Something personal", ann.email],
      ["Plan the offsite", ann.email],
      ["Draft the launch email", ann.email]
    ])

    // Someone outside the org, and the admin's key bound to the other org, are told it does not exist.
    const outsider = await Accounts.signupAndLogin(server)
    const key = await Accounts.createApiKey(server, org.admin, { org_id: other.id })
    for (const client of [clientFor(server, outsider.session).client, clientFor(server, key.key).client]) {
      const missing = await rejection(list(client, { org_id: org.id }))
      expect((missing as JSONRPCErrorException).code).toBe(-32004)
      expect((missing as JSONRPCErrorException).data).toEqual({ error: "NOT_FOUND", message: "Organization not found" })
    }
  })

  it("rpc.discover: the document passes the OpenRPC validator, its schemas compile with ajv, its server URL is absolute", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { client } = clientFor(server, user.session)
    const doc = await client.request("rpc.discover", {})
    const valid = validateOpenRPCDocument(doc)
    expect(valid === true ? true : valid.message).toBe(true)

    expect(doc.servers).toHaveLength(1)
    expect(doc.servers[0].url).toBe(`${server.url}/v1/rpc`)
    expect(new URL(doc.servers[0].url).protocol).toBe("http:")
    // Behind a TLS-terminating proxy, the scheme it reports.
    const proxied = await server.request("POST", "/v1/rpc", {
      token: user.session,
      body: { jsonrpc: "2.0", method: "rpc.discover", id: 1 },
      headers: { "x-forwarded-proto": "https" }
    })
    expect(proxied.body.result.servers).toEqual([{ name: "huddle", url: `${server.url.replace(/^http:/, "https:")}/v1/rpc` }])

    // One ajv instance holds every schema, as a validator of the whole document would. Not strict:
    // strict mode refuses the wrapper's `components` keyword and Effect's `allOf` refinements
    // (`maximum` without `type` beside it), both valid JSON Schema.
    const ajv = new Ajv({ strict: false })
    ajv.addSchema({ components: doc.components }, "openrpc")
    const compiled: Array<string> = []
    for (const method of doc.methods) {
      const schemas = [
        ...method.params.map((p: { name: string; schema: object }) => [`${method.name} ${p.name}`, p.schema] as const),
        [`${method.name} result`, method.result.schema] as const
      ]
      for (const [what, schema] of schemas) {
        // `#/components/...` refs resolve against the document, registered above.
        const rebased = JSON.parse(JSON.stringify(schema).replaceAll("\"#/components/", "\"openrpc#/components/"))
        expect(() => ajv.compile(rebased), what).not.toThrow()
        compiled.push(what)
      }
    }
    expect(compiled).toContain("intent.submit input")
    expect(compiled).toContain("rpc.discover result")

    // The compiled result schema accepts a real answer and refuses a broken one.
    const intentSchema = ajv.getSchema("openrpc#/components/schemas/Intent")
    expect(intentSchema).toBeDefined()
    const intent = await client.request("intent.submit", { input: "Validate me." })
    expect(intentSchema!(intent), JSON.stringify(intentSchema!.errors)).toBe(true)
    expect(intentSchema!({ ...intent, status: "nope" })).toBe(false)
    const discoverResult = ajv.getSchema("openrpc#/components/schemas/OpenRpcDocument")
    expect(discoverResult!(doc), JSON.stringify(discoverResult!.errors)).toBe(true)
  })
})

describe("JSON-RPC clients: intent.submit in multi mode", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  // The standard tier (the service's default) with two models; std-b dissents at the ratification.
  fakeUpstreamSuite(
    [
      WithFakeUpstream.model("fake-standard-a", "standard", { upstream_model: "std-a" }),
      WithFakeUpstream.model("fake-standard-b", "standard", { upstream_model: "std-b" })
    ],
    (started) => ({ fake, server } = started)
  )
  beforeEach(() => {
    fake.reset()
    answerCouncil(fake, { dissenter: "std-b" })
  })

  it("json-rpc-2.0: mode multi answers with the council's consensus, its report kept on the intent for intent.get", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { client, statuses } = clientFor(server, user.session)
    const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
    const before = await balance()

    const intent = await client.request("intent.submit", { input: "Where should the ledger live?", mode: "multi" })
    expect(intent).toMatchObject({
      status: "completed",
      mode: "multi",
      output: consensusText,
      settings: { mode: { value: "multi", decided_by: "request" } },
      models: ["fake-standard-a", "fake-standard-b"]
    })
    expect(intent.consensus).toMatchObject({ text: consensusText, rounds: 4, dropped: [] })
    expect(intent.consensus.participants.map((p: { model: string; vote: string }) => [p.model, p.vote])).toEqual([
      ["fake-standard-a", "endorse"],
      ["fake-standard-b", "dissent"],
      ["fake-standard-a", "endorse"]
    ])
    expect(intent.consensus.dissents).toEqual([{ seat: 2, model: "fake-standard-b", ...dissent }])
    const charged = intent.consensus.participants.reduce((sum: number, p: { credits: number }) => sum + p.credits, 0)
    expect(intent.credits_charged).toBe(charged)
    expect(await balance()).toBe(before - charged)
    expect(fake.requests).toHaveLength(10)

    const later = await client.request("intent.get", { id: intent.id })
    expect(later).toMatchObject({ id: intent.id, mode: "multi", output: consensusText })
    expect(later.consensus).toEqual(intent.consensus)

    // single is one model's answer, with no report.
    fake.respondWith(undefined)
    fake.enqueue({ answer: "One model's answer", usage: { prompt_tokens: 10, completion_tokens: 3 } })
    const single = await client.request("intent.submit", { input: "Where should the ledger live?", mode: "single" })
    expect(single).toMatchObject({ mode: "single", output: "One model's answer", models: ["fake-standard-a"] })
    expect(single.consensus).toBeUndefined()
    expect(statuses).toEqual([200, 200, 200])
  })

  it("json-rpc-2.0: mode multi beside a named model is refused as invalid params of the request", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { client } = clientFor(server, user.session)
    const refused = await rejection(client.request("intent.submit", { input: "Where should the ledger live?", mode: "multi", model: "fake-standard-a" }))
    expect(refused).toBeInstanceOf(JSONRPCErrorException)
    expect((refused as JSONRPCErrorException).data).toMatchObject({ error: "INVALID_REQUEST", message: expect.stringContaining("mode") })
    const unknown = await rejection(client.request("intent.submit", { input: "x", mode: "committee" }))
    expect((unknown as JSONRPCErrorException).code).toBe(-32602)
    expect(fake.requests).toHaveLength(0)
  })
})
