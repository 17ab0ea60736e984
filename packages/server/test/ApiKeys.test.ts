import { Accounts, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

describe("API keys over HTTP", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  it("creates a key whose secret is shown once and never listed", async () => {
    const user = await Accounts.signupAndLogin(server)
    const created = await server.request("POST", "/v1/api-keys", { token: user.session, body: { name: "  laptop  " } })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: expect.stringMatching(/^key_/),
      name: "laptop",
      key: expect.stringMatching(/^hk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/),
      prefix: expect.stringMatching(/^hk_[0-9a-f]{12}$/),
      last_four: expect.any(String),
      org_id: null,
      created_at: expect.any(String)
    })
    expect(created.body.key.startsWith(created.body.prefix)).toBe(true)
    expect(created.body.key.endsWith(created.body.last_four)).toBe(true)

    const list = await server.request("GET", "/v1/api-keys", { token: user.session })
    expect(list.status).toBe(200)
    expect(list.body.next_cursor).toBeNull()
    expect(list.body.data).toEqual([{
      id: created.body.id,
      name: "laptop",
      prefix: created.body.prefix,
      last_four: created.body.last_four,
      org_id: null,
      created_at: created.body.created_at,
      last_used_at: null
    }])
    expect(list.text).not.toContain(created.body.key)
  })

  it("authenticates with the key and records when it was last used", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { id, key } = await Accounts.createApiKey(server, user)
    const me = await server.request("GET", "/v1/me", { token: key })
    expect(me.status).toBe(200)
    expect(me.body.user.id).toBe(user.id)
    const list = await server.request("GET", "/v1/api-keys", { token: user.session })
    const listed = list.body.data.find((k: { id: string }) => k.id === id)
    expect(Date.parse(listed.last_used_at)).toBeGreaterThan(Date.now() - 60_000)
  })

  it("refuses every key operation to an API key: 403 SESSION_REQUIRED", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { id, key } = await Accounts.createApiKey(server, user)
    const create = await server.request("POST", "/v1/api-keys", { token: key, body: { name: "escalation" } })
    expect(create.status).toBe(403)
    expect(create.body).toEqual({ error: "SESSION_REQUIRED", message: expect.any(String) })
    expect((await server.request("GET", "/v1/api-keys", { token: key })).status).toBe(403)
    expect((await server.request("DELETE", `/v1/api-keys/${id}`, { token: key })).status).toBe(403)
    // Still exactly one key, still working.
    const list = await server.request("GET", "/v1/api-keys", { token: user.session })
    expect(list.body.data).toHaveLength(1)
    expect((await server.request("GET", "/v1/me", { token: key })).status).toBe(200)
  })

  it("revokes a key: refused from the very next request", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { id, key } = await Accounts.createApiKey(server, user)
    expect((await server.request("GET", "/v1/me", { token: key })).status).toBe(200)
    expect((await server.request("DELETE", `/v1/api-keys/${id}`, { token: user.session })).status).toBe(204)
    const after = await server.request("GET", "/v1/me", { token: key })
    expect(after.status).toBe(401)
    expect(after.body.error).toBe("UNAUTHORIZED")
    const again = await server.request("DELETE", `/v1/api-keys/${id}`, { token: user.session })
    expect(again.status).toBe(404)
    expect(again.body.error).toBe("NOT_FOUND")
    expect((await server.request("GET", "/v1/api-keys", { token: user.session })).body.data).toEqual([])
  })

  it("does not let one user see or revoke another's key", async () => {
    const owner = await Accounts.signupAndLogin(server, "owner")
    const other = await Accounts.signupAndLogin(server, "other")
    const { id, key } = await Accounts.createApiKey(server, owner)
    const revoke = await server.request("DELETE", `/v1/api-keys/${id}`, { token: other.session })
    expect(revoke.status).toBe(404)
    expect((await server.request("GET", "/v1/api-keys", { token: other.session })).body.data).toEqual([])
    expect((await server.request("GET", "/v1/me", { token: key })).status).toBe(200)
  })

  it("pages through keys newest first with limit and cursor", async () => {
    const user = await Accounts.signupAndLogin(server)
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) ids.push((await Accounts.createApiKey(server, user, { name: `k${i}` })).id)
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const query: string = cursor === null ? "?limit=2" : `?limit=2&cursor=${encodeURIComponent(cursor)}`
      const page = await server.request("GET", `/v1/api-keys${query}`, { token: user.session })
      expect(page.status).toBe(200)
      expect(page.body.data.length).toBeLessThanOrEqual(2)
      seen.push(...page.body.data.map((k: { id: string }) => k.id))
      cursor = page.body.next_cursor
    } while (cursor !== null)
    expect(seen).toEqual([...ids].reverse())

    for (const limit of ["0", "101", "abc", "1.5"]) {
      const bad = await server.request("GET", `/v1/api-keys?limit=${limit}`, { token: user.session })
      expect(bad.status, limit).toBe(400)
      expect(bad.body.error).toBe("INVALID_REQUEST")
      expect(bad.body.message).toContain("limit")
    }
  })

  it("refuses to bind a key to an organization the caller is not in, as if it did not exist", async () => {
    const user = await Accounts.signupAndLogin(server)
    const res = await server.request("POST", "/v1/api-keys", { token: user.session, body: { name: "k", org_id: "org_nope" } })
    expect(res.status).toBe(404)
    expect(res.body.error).toBe("NOT_FOUND")
    expect((await server.request("GET", "/v1/api-keys", { token: user.session })).body.data).toEqual([])
  })

  it("validates the key name", async () => {
    const user = await Accounts.signupAndLogin(server)
    for (const body of [{}, { name: "" }, { name: "   " }, { name: "x".repeat(101) }, { name: 42 }]) {
      const res = await server.request("POST", "/v1/api-keys", { token: user.session, body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.message).toContain("name")
    }
  })
})
