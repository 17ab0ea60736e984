import { Accounts, Operator, Orgs, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

describe("organizations over HTTP", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  it("creates an org from a web session: the creator is its admin, the slug is URL-safe and unique", async () => {
    const user = await Accounts.signupAndLogin(server)
    const first = await server.request("POST", "/v1/orgs", { token: user.session, body: { name: "  Ünïcode & Co. Labs!  " } })
    expect(first.status).toBe(201)
    expect(first.body).toEqual({ id: expect.stringMatching(/^org_/), name: "Ünïcode & Co. Labs!", slug: "unicode-co-labs", created_at: expect.any(String) })
    const second = await server.request("POST", "/v1/orgs", { token: user.session, body: { name: "Unicode Co Labs" } })
    expect(second.status).toBe(201)
    expect(second.body.slug).toMatch(/^unicode-co-labs-[a-z0-9]+$/)
    expect(second.body.slug).not.toBe(first.body.slug)

    const list = await server.request("GET", "/v1/orgs", { token: user.session })
    expect(list.status).toBe(200)
    expect(list.body).toEqual({
      data: [
        { id: first.body.id, name: first.body.name, slug: first.body.slug, role: "admin" },
        { id: second.body.id, name: second.body.name, slug: second.body.slug, role: "admin" }
      ],
      next_cursor: null
    })
    const me = await server.request("GET", "/v1/me", { token: user.session })
    expect(me.body.orgs.map((o: { id: string }) => o.id)).toEqual([first.body.id, second.body.id])
  })

  it("refuses to create an org with an API key (403 SESSION_REQUIRED) or without a name (400)", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    const viaKey = await server.request("POST", "/v1/orgs", { token: key, body: { name: "Nope" } })
    expect(viaKey.status).toBe(403)
    expect(viaKey.body.error).toBe("SESSION_REQUIRED")
    for (const body of [{}, { name: "" }, { name: "   " }, { name: "x".repeat(101) }]) {
      const res = await server.request("POST", "/v1/orgs", { token: user.session, body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.message).toContain("name")
    }
    expect((await server.request("GET", "/v1/orgs", { token: user.session })).body.data).toEqual([])
  })

  it("invites by email: pending until the user logs in, then a member; re-inviting is a conflict", async () => {
    const org = await Orgs.createOrg(server)
    const invitee = await Accounts.signupAndLogin(server, "invitee")
    const invite = await server.request("POST", `/v1/orgs/${org.id}/admin/members/invite`, {
      token: org.admin.session,
      body: { email: invitee.email.toUpperCase() }
    })
    expect(invite.status).toBe(201)
    expect(invite.body).toMatchObject({ email: invitee.email, role: "member", status: "pending", user_id: null })
    expect((await server.request("GET", "/v1/orgs", { token: invitee.session })).body.data).toEqual([])

    const again = await server.request("POST", `/v1/orgs/${org.id}/admin/members/invite`, {
      token: org.admin.session,
      body: { email: invitee.email, role: "admin" }
    })
    expect(again.status).toBe(409)
    expect(again.body.error).toBe("CONFLICT")

    await server.request("POST", "/v1/auth/login", { body: { email: invitee.email, password: invitee.password } })
    const orgs = await server.request("GET", "/v1/orgs", { token: invitee.session })
    expect(orgs.body.data).toEqual([{ id: org.id, name: "Acme Research", slug: org.slug, role: "member" }])

    const members = await server.request("GET", `/v1/orgs/${org.id}/admin/members`, { token: org.admin.session })
    expect(members.status).toBe(200)
    expect(members.body.data).toEqual(expect.arrayContaining([
      expect.objectContaining({ email: org.admin.email, role: "admin", status: "active", user_id: org.admin.id }),
      expect.objectContaining({ email: invitee.email, role: "member", status: "active", user_id: invitee.id })
    ]))
    expect(members.body.data).toHaveLength(2)

    const reinviteMember = await server.request("POST", `/v1/orgs/${org.id}/admin/members/invite`, {
      token: org.admin.session,
      body: { email: invitee.email }
    })
    expect(reinviteMember.status).toBe(409)
  })

  it("activates an invitation when the invited email signs up", async () => {
    const org = await Orgs.createOrg(server)
    const email = Accounts.uniqueEmail("newcomer")
    await server.request("POST", `/v1/orgs/${org.id}/admin/members/invite`, { token: org.admin.session, body: { email, role: "admin" } })
    const signup = await server.request("POST", "/v1/auth/signup", { body: { email, password: "a good password" } })
    const login = await server.request("POST", "/v1/auth/login", { body: { email, password: "a good password" } })
    const orgs = await server.request("GET", "/v1/orgs", { token: login.body.token })
    expect(orgs.body.data).toEqual([expect.objectContaining({ id: org.id, role: "admin" })])
    const member = await server.request("GET", `/v1/orgs/${org.id}/admin/members`, { token: org.admin.session })
    expect(member.body.data).toContainEqual(expect.objectContaining({ email, user_id: signup.body.user.id, status: "active" }))
  })

  it("keeps members out of admin operations (403) and outsiders out of everything (404)", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const outsider = await Accounts.signupAndLogin(server, "outsider")
    const asMember = await server.request("GET", `/v1/orgs/${org.id}/admin/members`, { token: member.session })
    expect(asMember.status).toBe(403)
    expect(asMember.body.error).toBe("FORBIDDEN")
    const asOutsider = await server.request("GET", `/v1/orgs/${org.id}/admin/members`, { token: outsider.session })
    expect(asOutsider.status).toBe(404)
    expect(asOutsider.body.error).toBe("NOT_FOUND")
    const unknown = await server.request("GET", `/v1/orgs/org_does_not_exist/admin/members`, { token: outsider.session })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual(asOutsider.body)
  })

  it("changes roles and removes members, but always keeps one admin", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const demoteLast = await server.request("PATCH", `/v1/orgs/${org.id}/admin/members/${org.admin.id}`, {
      token: org.admin.session,
      body: { role: "member" }
    })
    expect(demoteLast.status).toBe(409)
    const removeLast = await server.request("DELETE", `/v1/orgs/${org.id}/admin/members/${org.admin.id}`, { token: org.admin.session })
    expect(removeLast.status).toBe(409)
    const leaveLast = await server.request("POST", `/v1/orgs/${org.id}/leave`, { token: org.admin.session })
    expect(leaveLast.status).toBe(409)

    const promote = await server.request("PATCH", `/v1/orgs/${org.id}/admin/members/${member.id}`, {
      token: org.admin.session,
      body: { role: "admin" }
    })
    expect(promote.status).toBe(200)
    expect(promote.body).toMatchObject({ user_id: member.id, role: "admin" })
    // Now the creator may step down, and the new admin may remove them.
    expect((await server.request("PATCH", `/v1/orgs/${org.id}/admin/members/${org.admin.id}`, {
      token: org.admin.session,
      body: { role: "member" }
    })).status).toBe(200)
    expect((await server.request("DELETE", `/v1/orgs/${org.id}/admin/members/${org.admin.id}`, { token: member.session })).status).toBe(204)
    expect((await server.request("GET", "/v1/orgs", { token: org.admin.session })).body.data).toEqual([])
    expect((await server.request("GET", `/v1/orgs/${org.id}/policies`, { token: org.admin.session })).status).toBe(404)
  })

  it("lets a member leave", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    expect((await server.request("POST", `/v1/orgs/${org.id}/leave`, { token: member.session })).status).toBe(204)
    expect((await server.request("GET", "/v1/orgs", { token: member.session })).body.data).toEqual([])
    expect((await server.request("POST", `/v1/orgs/${org.id}/leave`, { token: member.session })).status).toBe(404)
  })

  it("revokes a member's keys bound to the org when they are removed or leave, and only those; invited back, the old key stays dead", async () => {
    const org = await Orgs.createOrg(server)
    const keyOf = async (member: Accounts.TestUser, orgId?: string) =>
      (await server.request("POST", "/v1/api-keys", { token: member.session, body: { name: "k", ...(orgId ? { org_id: orgId } : {}) } })).body.key as string
    const me = (key: string) => server.request("GET", "/v1/me", { token: key })

    const removed = await Orgs.addMember(server, org)
    const [bound, own] = [await keyOf(removed, org.id), await keyOf(removed)]
    expect((await me(bound)).status).toBe(200)
    expect((await server.request("DELETE", `/v1/orgs/${org.id}/admin/members/${removed.id}`, { token: org.admin.session })).status).toBe(204)
    expect((await me(bound)).status).toBe(401)
    expect((await me(own)).status).toBe(200)
    await server.request("POST", `/v1/orgs/${org.id}/admin/members/invite`, { token: org.admin.session, body: { email: removed.email, role: "member" } })
    expect((await server.request("POST", "/v1/auth/login", { body: { email: removed.email, password: removed.password } })).status).toBe(200)
    expect((await me(bound)).status).toBe(401)

    const leaving = await Orgs.addMember(server, org)
    const leavingKey = await keyOf(leaving, org.id)
    expect((await server.request("POST", `/v1/orgs/${org.id}/leave`, { token: leaving.session })).status).toBe(204)
    expect((await me(leavingKey)).status).toBe(401)

    const audit = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?event_type=api_key.revoked`, { token: org.admin.session })
    expect(audit.body.data.map((event: { actor_id: string; details: { by: string; user_id: string } }) => [event.actor_id, event.details.by, event.details.user_id]))
      .toEqual([[leaving.id, "member.left", leaving.id], [org.admin.id, "member.removed", removed.id]])
  })

  it("sets enforced policies and defaults; members read policies but cannot set them", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const policies = { model_tier: "economy", risk_tolerance: "low", auto_execute: false, credit_fallback: false }
    const put = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: policies })
    expect(put.status).toBe(200)
    expect(put.body).toEqual(policies)
    expect((await server.request("GET", `/v1/orgs/${org.id}/policies`, { token: member.session })).body).toEqual(policies)
    expect((await server.request("GET", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session })).body).toEqual(policies)
    const asMember = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: member.session, body: {} })
    expect(asMember.status).toBe(403)
    const invalid = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, {
      token: org.admin.session,
      body: { model_tier: "luxury" }
    })
    expect(invalid.status).toBe(400)
    expect(invalid.body.message).toContain("model_tier")
    expect((await server.request("GET", `/v1/orgs/${org.id}/policies`, { token: member.session })).body).toEqual(policies)

    const defaults = await server.request("PUT", `/v1/orgs/${org.id}/admin/preferences`, {
      token: org.admin.session,
      body: { model_tier: "standard", mode: "multi" }
    })
    expect(defaults.status).toBe(200)
    expect((await server.request("GET", `/v1/orgs/${org.id}/admin/preferences`, { token: org.admin.session })).body).toEqual({
      model_tier: "standard",
      mode: "multi"
    })
  })

  it("refuses an unknown field with 400 naming it, and keeps what was set", async () => {
    const org = await Orgs.createOrg(server)
    const policies = { model_tier: "economy", auto_execute: false }
    expect((await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: policies })).status).toBe(200)
    const defaults = { model_tier: "standard" }
    expect((await server.request("PUT", `/v1/orgs/${org.id}/admin/preferences`, { token: org.admin.session, body: defaults })).status).toBe(200)

    const credits = (await server.request("GET", `/v1/orgs/${org.id}/credits`, { token: org.admin.session })).body

    // `mode` is a preference, not a policy: a PUT of it alone used to erase every policy.
    const cases: ReadonlyArray<readonly [string, string, unknown, string]> = [
      ["PUT", `/v1/orgs/${org.id}/admin/policies`, { mode: "multi" }, "mode"],
      ["PUT", `/v1/orgs/${org.id}/admin/policies`, { model_tier: "economy", auto_exec: true }, "auto_exec"],
      ["PUT", `/v1/orgs/${org.id}/admin/preferences`, { model_tier: "premium", credit_fallback: false }, "credit_fallback"],
      ["PUT", `/v1/orgs/${org.id}/admin/members/${org.admin.id}/cap`, { amount: 5, period: "month", currency: "EUR" }, "currency"],
      ["POST", `/v1/orgs/${org.id}/admin/members/invite`, { email: Accounts.uniqueEmail(), rol: "admin" }, "rol"],
      ["POST", "/v1/orgs", { name: "Another", slug: "chosen" }, "slug"]
    ]
    for (const [method, path, body, field] of cases) {
      const res = await server.request(method, path, { token: org.admin.session, body })
      const label = `${method} ${path} ${JSON.stringify(body)}`
      expect(res.status, label).toBe(400)
      expect(res.body, label).toEqual({ error: "INVALID_REQUEST", message: expect.stringMatching(new RegExp(`^${field}: is unexpected`)) })
    }
    expect((await server.request("GET", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session })).body).toEqual(policies)
    expect((await server.request("GET", `/v1/orgs/${org.id}/admin/preferences`, { token: org.admin.session })).body).toEqual(defaults)
    expect((await server.request("GET", `/v1/orgs/${org.id}/credits`, { token: org.admin.session })).body).toEqual(credits)
    expect((await server.request("GET", `/v1/orgs/${org.id}/admin/members`, { token: org.admin.session })).body.data).toHaveLength(1)
    expect((await server.request("GET", "/v1/orgs", { token: org.admin.session })).body.data).toHaveLength(1)
  })

  it("members see the pool the operator granted and who pays for them; admins cannot mint", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    expect(await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 5000, "November plan")).toBe(5000)
    await Operator.grant(server, { org_id: org.id, balance: "addon" }, 250, "top-up")
    const view = await server.request("GET", `/v1/orgs/${org.id}/credits`, { token: member.session })
    expect(view.body).toEqual({
      subscription_balance: 5000,
      addon_balance: 250,
      personal_balance: 1000,
      credit_fallback: true,
      payment_order: ["personal", "subscription", "addon"],
      cap: null,
      spent: { month: 0, total: 0 }
    })
    await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { credit_fallback: false } })
    const gated = await server.request("GET", `/v1/orgs/${org.id}/credits`, { token: member.session })
    expect(gated.body).toMatchObject({ credit_fallback: false, payment_order: ["personal"] })

    // The admin grant of earlier versions is gone: no route mints for a user.
    for (const token of [org.admin.session, member.session]) {
      const res = await server.request("POST", `/v1/orgs/${org.id}/admin/credits`, {
        token,
        body: { balance: "addon", amount: 5, reason: "self-service" }
      })
      expect(res.status).toBe(404)
    }
    expect((await server.request("GET", `/v1/orgs/${org.id}/credits`, { token: member.session })).body.addon_balance).toBe(250)
  })

  it("records admin actions in the audit log, newest first, filterable and paged", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { risk_tolerance: "low" } })
    await Operator.grant(server, { org_id: org.id, balance: "addon" }, 10, "test")
    await server.request("POST", "/v1/auth/login", { body: { email: member.email, password: "not the password" } })

    // A failed login is recorded just after its answer (decision 0040): wait for it.
    const readLog = () => server.request("GET", `/v1/orgs/${org.id}/admin/audit-log`, { token: org.admin.session })
    let log = await readLog()
    for (let tries = 0; log.body.data?.[0]?.event_type !== "auth.login_failed" && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      log = await readLog()
    }
    expect(log.status).toBe(200)
    expect(log.body.data.map((e: { event_type: string }) => e.event_type)).toEqual([
      "auth.login_failed",
      "credits.granted",
      "policy.updated",
      "member.joined",
      "member.invited",
      "org.created"
    ])
    expect(log.body.data[2]).toMatchObject({
      actor_id: org.admin.id,
      actor_email: org.admin.email,
      org_id: org.id,
      details: { after: { risk_tolerance: "low" } }
    })
    // Each event names who acted by their email too; the operator's grant has no acting user.
    expect(log.body.data[3]).toMatchObject({ event_type: "member.joined", actor_id: member.id, actor_email: member.email })
    expect(log.body.data[1]).toMatchObject({ event_type: "credits.granted", actor_id: null, actor_email: null })

    const filtered = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?event_type=credits.granted`, { token: org.admin.session })
    expect(filtered.body.data).toHaveLength(1)
    expect(filtered.body.data[0]).toMatchObject({ actor_id: null, details: { by: "operator", via: "api", pool: "addon", amount: 10, reason: "test" } })

    const firstPage = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?limit=4`, { token: org.admin.session })
    expect(firstPage.body.data).toHaveLength(4)
    const secondPage = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?limit=4&cursor=${firstPage.body.next_cursor}`, {
      token: org.admin.session
    })
    expect(secondPage.body.data.map((e: { event_type: string }) => e.event_type)).toEqual(["member.invited", "org.created"])
    expect(secondPage.body.next_cursor).toBeNull()

    const future = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?start_at=2999-01-01`, { token: org.admin.session })
    expect(future.body.data).toEqual([])
    const past = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?start_at=2000-01-01T00:00:00Z&limit=1`, { token: org.admin.session })
    expect(past.body.data).toHaveLength(1)
    // An offset is honoured: 01:00 at +02:00 is 23:00 the day before, in UTC.
    const withOffset = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?start_at=${encodeURIComponent("2000-01-01T01:00:00+02:00")}&limit=1`, { token: org.admin.session })
    expect(withOffset.body.data).toHaveLength(1)
    for (const query of ["?start_at=yesterday", "?start_at=2026-02-30", "?start_at=2026-13-01", "?event_type=nope", "?limit=1000"]) {
      expect((await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log${query}`, { token: org.admin.session })).status, query).toBe(400)
    }
    expect((await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log`, { token: member.session })).status).toBe(403)
  })

  it("shows admins a dashboard of the org", async () => {
    const org = await Orgs.createOrg(server)
    await Orgs.addMember(server, org)
    await server.request("POST", `/v1/orgs/${org.id}/admin/members/invite`, { token: org.admin.session, body: { email: Accounts.uniqueEmail() } })
    await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 700, "plan")
    await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { model_tier: "economy" } })
    const dash = await server.request("GET", `/v1/orgs/${org.id}/admin`, { token: org.admin.session })
    expect(dash.status).toBe(200)
    expect(dash.body).toMatchObject({
      organization: { id: org.id, slug: org.slug },
      members: { active: 2, pending: 1 },
      credits: { subscription_balance: 700, addon_balance: 0 },
      usage: { credits_used: 0 },
      policies: { model_tier: "economy" }
    })
    expect(dash.body.recent_audit_events[0].event_type).toBe("policy.updated")
    expect(new Date(dash.body.usage.period_start).getUTCDate()).toBe(1)
  })

  it("deletes an org with its members and balances, and keeps a record of who deleted it", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    await Operator.grant(server, { org_id: org.id, balance: "addon" }, 99, "x")
    expect((await server.request("DELETE", `/v1/orgs/${org.id}`, { token: member.session })).status).toBe(403)
    expect((await server.request("DELETE", `/v1/orgs/${org.id}`, { token: org.admin.session })).status).toBe(204)
    expect((await server.request("GET", "/v1/orgs", { token: member.session })).body.data).toEqual([])
    expect((await server.request("GET", `/v1/orgs/${org.id}/credits`, { token: member.session })).status).toBe(404)
    expect((await server.request("GET", `/v1/orgs/${org.id}/admin`, { token: org.admin.session })).status).toBe(404)
    expect((await server.request("DELETE", `/v1/orgs/${org.id}`, { token: org.admin.session })).status).toBe(404)
    const trail = await server.request("GET", "/v1/me/audit-log", { token: org.admin.session })
    expect(trail.body.data[0]).toMatchObject({
      event_type: "org.deleted",
      org_id: null,
      actor_id: org.admin.id,
      target: org.id,
      details: { slug: org.slug }
    })
    // The member, who did not delete it, has no such record.
    const memberTrail = await server.request("GET", "/v1/me/audit-log", { token: member.session })
    expect(memberTrail.body.data.map((e: { event_type: string }) => e.event_type)).not.toContain("org.deleted")
  })
})
