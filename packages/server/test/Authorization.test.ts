/**
 * Every organization endpoint × every kind of caller → the status the design demands:
 * 401 without valid credentials, 404 for anything in an org the caller is not in, 403 for a
 * member calling an admin operation or an API key creating an org, 2xx otherwise.
 */
import { Accounts, Orgs, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

type Persona = "anonymous" | "wrongKey" | "member" | "admin" | "adminKey" | "otherAdmin"
const personas: ReadonlyArray<Persona> = ["anonymous", "wrongKey", "member", "admin", "adminKey", "otherAdmin"]

interface Fixture {
  readonly org: Orgs.TestOrg
  readonly member: Accounts.TestUser
  /** A second member, for operations on a member. */
  readonly target: Accounts.TestUser
  readonly adminKey: string
  readonly otherAdmin: Accounts.TestUser
}

interface Row {
  readonly name: string
  readonly method: string
  readonly path: (f: Fixture) => string
  readonly body?: (f: Fixture) => unknown
  /** Changes the fixture so that a later row would see another state: run on a fresh one. */
  readonly destructive?: boolean
  readonly expect: Record<Persona, number>
}

const admin = (ok: number): Record<Persona, number> =>
  ({ anonymous: 401, wrongKey: 401, member: 403, admin: ok, adminKey: ok, otherAdmin: 404 })
const member = (ok: number): Record<Persona, number> =>
  ({ anonymous: 401, wrongKey: 401, member: ok, admin: ok, adminKey: ok, otherAdmin: 404 })

const rows: ReadonlyArray<Row> = [
  {
    name: "create org",
    method: "POST",
    path: () => "/v1/orgs",
    body: () => ({ name: "Another" }),
    expect: { anonymous: 401, wrongKey: 401, member: 201, admin: 201, adminKey: 403, otherAdmin: 201 }
  },
  {
    name: "list orgs",
    method: "GET",
    path: () => "/v1/orgs",
    expect: { anonymous: 401, wrongKey: 401, member: 200, admin: 200, adminKey: 200, otherAdmin: 200 }
  },
  { name: "delete org", method: "DELETE", path: (f) => `/v1/orgs/${f.org.id}`, destructive: true, expect: admin(204) },
  {
    name: "invite",
    method: "POST",
    path: (f) => `/v1/orgs/${f.org.id}/admin/members/invite`,
    body: () => ({ email: Accounts.uniqueEmail("invited") }),
    expect: admin(201)
  },
  { name: "list members", method: "GET", path: (f) => `/v1/orgs/${f.org.id}/admin/members`, expect: admin(200) },
  { name: "dashboard", method: "GET", path: (f) => `/v1/orgs/${f.org.id}/admin`, expect: admin(200) },
  { name: "audit log", method: "GET", path: (f) => `/v1/orgs/${f.org.id}/admin/audit-log?limit=5`, expect: admin(200) },
  {
    name: "change role",
    method: "PATCH",
    path: (f) => `/v1/orgs/${f.org.id}/admin/members/${f.target.id}`,
    body: () => ({ role: "admin" }),
    destructive: true,
    expect: admin(200)
  },
  {
    name: "remove member",
    method: "DELETE",
    path: (f) => `/v1/orgs/${f.org.id}/admin/members/${f.target.id}`,
    destructive: true,
    expect: admin(204)
  },
  {
    name: "leave",
    method: "POST",
    path: (f) => `/v1/orgs/${f.org.id}/leave`,
    destructive: true,
    // The admin is the org's only admin, so may not leave.
    expect: { anonymous: 401, wrongKey: 401, member: 204, admin: 409, adminKey: 409, otherAdmin: 404 }
  },
  { name: "read policies (member)", method: "GET", path: (f) => `/v1/orgs/${f.org.id}/policies`, expect: member(200) },
  { name: "read policies (admin)", method: "GET", path: (f) => `/v1/orgs/${f.org.id}/admin/policies`, expect: admin(200) },
  {
    name: "set policies",
    method: "PUT",
    path: (f) => `/v1/orgs/${f.org.id}/admin/policies`,
    body: () => ({ model_tier: "standard" }),
    expect: admin(200)
  },
  { name: "read defaults", method: "GET", path: (f) => `/v1/orgs/${f.org.id}/admin/preferences`, expect: admin(200) },
  {
    name: "set defaults",
    method: "PUT",
    path: (f) => `/v1/orgs/${f.org.id}/admin/preferences`,
    body: () => ({ mode: "single" }),
    expect: admin(200)
  },
  { name: "read credits", method: "GET", path: (f) => `/v1/orgs/${f.org.id}/credits`, expect: member(200) },
  {
    name: "cap a member's spending",
    method: "PUT",
    path: (f) => `/v1/orgs/${f.org.id}/admin/members/${f.target.id}/cap`,
    body: () => ({ amount: 100, period: "month" }),
    expect: admin(200)
  },
  {
    // Admins allocate the pool; they never add to it. The path is gone for everyone.
    name: "grant credits (removed: only the operator mints)",
    method: "POST",
    path: (f) => `/v1/orgs/${f.org.id}/admin/credits`,
    body: () => ({ balance: "addon", amount: 1, reason: "table" }),
    expect: { anonymous: 404, wrongKey: 404, member: 404, admin: 404, adminKey: 404, otherAdmin: 404 }
  }
]

describe("authorization of organization endpoints", () => {
  let server: TestServer.TestServer
  let shared: Fixture

  const fixture = async (): Promise<Fixture> => {
    const org = await Orgs.createOrg(server)
    const [memberUser, target, otherOrg] = await Promise.all([
      Orgs.addMember(server, org),
      Orgs.addMember(server, org),
      Orgs.createOrg(server)
    ])
    const { key } = await Accounts.createApiKey(server, org.admin)
    return { org, member: memberUser, target, adminKey: key, otherAdmin: otherOrg.admin }
  }

  const tokenOf = (f: Fixture, persona: Persona): string | undefined => {
    switch (persona) {
      case "anonymous":
        return undefined
      case "wrongKey":
        return "hk_0123456789ab_" + "A".repeat(43)
      case "member":
        return f.member.session
      case "admin":
        return f.org.admin.session
      case "adminKey":
        return f.adminKey
      case "otherAdmin":
        return f.otherAdmin.session
    }
  }

  beforeAll(async () => {
    server = await TestServer.start()
    shared = await fixture()
  }, 120_000)
  afterAll(() => server.stop())

  for (const row of rows) {
    it(`${row.method} ${row.name}`, async () => {
      for (const persona of personas) {
        const f = row.destructive ? await fixture() : shared
        const token = tokenOf(f, persona)
        const res = await server.request(row.method, row.path(f), {
          ...(token === undefined ? {} : { token }),
          ...(row.body ? { body: row.body(f) } : {})
        })
        expect(res.status, `${persona}: ${res.text}`).toBe(row.expect[persona])
        if (res.status >= 400) expect(res.body, persona).toEqual({ error: expect.any(String), message: expect.any(String) })
      }
    }, 60_000)
  }

  it("an API key bound to one org sees nothing of another org it is a member of", async () => {
    const first = await Orgs.createOrg(server)
    const second = await Orgs.createOrg(server, first.admin, "Second Org")
    const { key } = await Accounts.createApiKey(server, first.admin, { org_id: first.id })
    expect((await server.request("GET", `/v1/orgs/${first.id}/admin`, { token: key })).status).toBe(200)
    expect((await server.request("GET", `/v1/orgs/${second.id}/admin`, { token: key })).status).toBe(404)
    const listed = await server.request("GET", "/v1/orgs", { token: key })
    expect(listed.body.data.map((o: { id: string }) => o.id)).toEqual([first.id])
  })
})
