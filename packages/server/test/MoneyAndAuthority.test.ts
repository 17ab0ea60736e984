/**
 * Money and authority over HTTP: only the operator mints; admins allocate the pool with caps;
 * an approval decides again everything a submission decided. Every user here starts with no
 * personal credits, so whatever a request spends comes from a pool the operator funded.
 */
import { Accounts, Operator, Orgs, TestServer } from "@huddle/testkit"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const call = (method: string, params: unknown, id = 1) => ({ jsonrpc: "2.0", method, params, id })

describe("money and authority", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ starterCredits: 0 })
  })
  afterAll(() => server.stop())

  const rpc = (token: string, method: string, params: unknown) => server.request("POST", "/v1/rpc", { token, body: call(method, params) })
  const pool = async (orgId: string, token: string) => (await server.request("GET", `/v1/orgs/${orgId}/credits`, { token })).body
  const huddle = (token: string, body: Record<string, unknown>) => server.request("POST", "/v1/huddle", { token, body })

  describe("the operator API", () => {
    it("mints to a user or an org balance with a reason, and shows the ledger with running balances", async () => {
      const user = await Accounts.signupAndLogin(server)
      const org = await Orgs.createOrg(server)
      expect(await Operator.grant(server, { user_id: user.id }, 40, "support credit")).toBe(40)
      expect(await Operator.grant(server, { user_id: user.id }, 2, "again")).toBe(42)
      expect(await Operator.grant(server, { org_id: org.id, balance: "addon" }, 500, "invoice 17")).toBe(500)

      const me = await server.request("GET", "/v1/me", { token: user.session })
      expect(me.body.credits.balance).toBe(42)
      const ledger = await Operator.ledger(server, { user_id: user.id })
      expect(ledger.balance).toBe(42)
      expect(ledger.data.map((row) => [row.kind, row.delta, row.balance_after, row.reason])).toEqual([
        ["grant", 2, 42, "again"],
        ["grant", 40, 40, "support credit"]
      ])
      expect((await pool(org.id, org.admin.session)).addon_balance).toBe(500)
      const audit = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?event_type=credits.granted`, { token: org.admin.session })
      expect(audit.body.data).toEqual([
        expect.objectContaining({ actor_id: null, target: org.id, details: { by: "operator", via: "api", pool: "addon", amount: 500, reason: "invoice 17" } })
      ])
    })

    it("mints to the user an email names (in any case), not to an account of that email", async () => {
      const user = await Accounts.signupAndLogin(server)
      const res = await server.request("POST", "/v1/operator/credits/grants", {
        token: server.operatorToken!,
        body: { user_id: user.email.toUpperCase(), amount: 7, reason: "by email" }
      })
      expect(res.status).toBe(201)
      expect(res.body.account).toEqual({ owner_type: "user", owner_id: user.id, pool: "personal" })
      expect((await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance).toBe(7)
      // The ledger by email is the user's too.
      const byEmail = await server.request("GET", `/v1/operator/credits/ledger?user_id=${encodeURIComponent(user.email)}`, { token: server.operatorToken! })
      expect(byEmail.body.balance).toBe(7)
      expect(byEmail.body.data.map((row: { delta: number; reason: string }) => [row.delta, row.reason])).toEqual([[7, "by email"]])
    })

    it("refuses users' credentials, wrong tokens and bad grants, and changes nothing", async () => {
      const user = await Accounts.signupAndLogin(server)
      const { key } = await Accounts.createApiKey(server, user)
      const body = { user_id: user.id, amount: 1_000_000, reason: "please" }
      for (const token of [user.session, key, `${server.operatorToken}x`, "x".repeat(64)]) {
        const res = await server.request("POST", "/v1/operator/credits/grants", { token, body })
        expect(res.status).toBe(401)
        expect(res.body).toEqual({ error: "UNAUTHORIZED", message: expect.any(String) })
      }
      expect((await server.request("POST", "/v1/operator/credits/grants", { body })).status).toBe(401)
      // Only the Bearer scheme carries the token.
      for (const authorization of [`Basic ${server.operatorToken}`, `Bearer:${server.operatorToken}`, `XXXXXXX${server.operatorToken}`]) {
        const res = await server.request("POST", "/v1/operator/credits/grants", { headers: { authorization }, body })
        expect(res.status, authorization.slice(0, 8)).toBe(401)
      }
      const bad = [
        { amount: 5, reason: "no target" },
        { user_id: user.id, org_id: "org_x", balance: "addon", amount: 5, reason: "two targets" },
        { org_id: "org_x", amount: 5, reason: "no balance" },
        { user_id: user.id, amount: 0, reason: "zero" },
        { user_id: user.id, amount: -5, reason: "negative" },
        { user_id: user.id, amount: 1.5, reason: "fraction" },
        { user_id: user.id, amount: 5, reason: " " },
        { user_id: user.id, amount: 5, reason: "extra", currency: "EUR" },
        { user_id: user.id, amount: 5, reason: "bad\u0000text" }
      ]
      for (const grant of bad) {
        const res = await server.request("POST", "/v1/operator/credits/grants", { token: server.operatorToken!, body: grant })
        expect(res.status, JSON.stringify(grant)).toBe(400)
        expect(res.body.error).toBe("INVALID_REQUEST")
      }
      const unknown = await server.request("POST", "/v1/operator/credits/grants", {
        token: server.operatorToken!,
        body: { user_id: "usr_nobody", amount: 5, reason: "ghost" }
      })
      expect(unknown.status).toBe(404)
      expect((await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance).toBe(0)
    })

    it("revokes every key of a user at once", async () => {
      const user = await Accounts.signupAndLogin(server)
      const keys = await Promise.all([Accounts.createApiKey(server, user), Accounts.createApiKey(server, user)])
      const res = await server.request("POST", `/v1/operator/users/${encodeURIComponent(user.email)}/revoke-keys`, { token: server.operatorToken! })
      expect(res.body).toEqual({ revoked: 2 })
      for (const { key } of keys) expect((await server.request("GET", "/v1/me", { token: key })).status).toBe(401)
      // The web session is not a key: it still works.
      expect((await server.request("GET", "/v1/me", { token: user.session })).status).toBe(200)
    })

    it("is off without an operator token: every path answers 404", async () => {
      const off = await TestServer.start({ operatorToken: null })
      try {
        const res = await off.request("POST", "/v1/operator/credits/grants", { token: "x".repeat(64), body: { user_id: "usr_x", amount: 5, reason: "r" } })
        expect(res.status).toBe(404)
        expect(res.body.error).toBe("NOT_FOUND")
      } finally {
        await off.stop()
      }
    })
  })

  it("a user cannot obtain a credit the operator did not grant: a new org's pool is empty and admins cannot fill it", async () => {
    const founder = await Accounts.signupAndLogin(server)
    const org = await Orgs.createOrg(server, founder)
    const grant = await server.request("POST", `/v1/orgs/${org.id}/admin/credits`, {
      token: founder.session,
      body: { balance: "subscription", amount: 1_000_000_000_000, reason: "free money" }
    })
    expect(grant.status).toBe(404)
    const { key } = await Accounts.createApiKey(server, founder)
    for (const body of [{ input: "hello" }, { input: "hello", org_id: org.id }]) {
      const res = await huddle(key, body)
      expect(res.status, JSON.stringify(body)).toBe(402)
      expect(res.body.error).toBe("INSUFFICIENT_CREDITS")
    }
    expect(await pool(org.id, founder.session)).toMatchObject({ subscription_balance: 0, addon_balance: 0, personal_balance: 0 })
  })

  describe("spending caps", () => {
    it("caps what a member takes from the pool, reports it in the member list and the 402, and lifts", async () => {
      const org = await Orgs.createOrg(server)
      const member = await Orgs.addMember(server, org)
      await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 1000, "plan")
      const setCap = (cap: unknown) =>
        server.request("PUT", `/v1/orgs/${org.id}/admin/members/${member.id}/cap`, { token: org.admin.session, body: cap })

      // One economy request reserves a few credits at worst: a cap of 6 lets one run at a time.
      const capped = await setCap({ amount: 6, period: "month" })
      expect(capped.status).toBe(200)
      expect(capped.body).toMatchObject({ user_id: member.id, cap: { amount: 6, period: "month" }, spent: { month: 0, total: 0 } })

      const ask = () => huddle(member.session, { input: "Summarise our week.", org_id: org.id, model_tier: "economy" })
      const first = await ask()
      expect(first.status).toBe(200)
      const charged = first.body.credits_charged as number
      expect(charged).toBeGreaterThan(0)
      const spent = async () => {
        const list = await server.request("GET", `/v1/orgs/${org.id}/admin/members`, { token: org.admin.session })
        return list.body.data.find((m: { user_id: string | null }) => m.user_id === member.id)
      }
      expect(await spent()).toMatchObject({ cap: { amount: 6, period: "month" }, spent: { month: charged, total: charged } })
      // The member sees their own cap and spending beside the pool.
      expect(await pool(org.id, member.session)).toMatchObject({ cap: { amount: 6, period: "month" }, spent: { month: charged, total: charged } })

      // Ask until the cap refuses; every answer is charged to the pool, never past the cap.
      let refused: TestServer.Response | undefined
      for (let i = 0; i < 10 && refused === undefined; i++) {
        const res = await ask()
        if (res.status === 402) refused = res
        else expect(res.status).toBe(200)
      }
      expect(refused?.body).toEqual({ error: "INSUFFICIENT_CREDITS", message: expect.stringMatching(/spending cap .*6 credits a month.* leaves \d+/) })
      const after = await spent()
      expect(after.spent.month).toBeLessThanOrEqual(6)
      expect(1000 - (await pool(org.id, org.admin.session)).subscription_balance).toBe(after.spent.month)

      // Lifting the cap lets the member spend again; the change is audited both times.
      expect((await setCap(null)).body).toMatchObject({ cap: null })
      expect((await ask()).status).toBe(200)
      const audit = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?event_type=credits.cap_changed`, { token: org.admin.session })
      expect(audit.body.data.map((e: { details: unknown }) => e.details)).toEqual([
        { email: member.email, from: { amount: 6, period: "month" }, to: null },
        { email: member.email, from: null, to: { amount: 6, period: "month" } }
      ])
    })

    it("holds under concurrent requests: never more in flight than the cap", async () => {
      const org = await Orgs.createOrg(server)
      const member = await Orgs.addMember(server, org)
      await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 1000, "plan")
      const { key } = await Accounts.createApiKey(server, member, { org_id: org.id })
      await server.request("PUT", `/v1/orgs/${org.id}/admin/members/${member.id}/cap`, { token: org.admin.session, body: { amount: 8, period: "total" } })
      const results = await Promise.all(
        Array.from({ length: 12 }, () => huddle(key, { input: "Quick check.", model_tier: "economy" }))
      )
      const statuses = results.map((res) => res.status)
      expect(statuses.every((status) => status === 200 || status === 402), statuses.join()).toBe(true)
      expect(statuses.filter((status) => status === 402).length).toBeGreaterThan(0)
      const charged = results.filter((res) => res.status === 200).reduce((sum, res) => sum + (res.body.credits_charged as number), 0)
      const left = (await pool(org.id, org.admin.session)).subscription_balance
      expect(1000 - left).toBe(charged)
      expect(charged).toBeLessThanOrEqual(8)
    })

    it("answers 400 for a bad cap, 404 for a pending invitation, and 403 for a member", async () => {
      const org = await Orgs.createOrg(server)
      const member = await Orgs.addMember(server, org)
      const path = `/v1/orgs/${org.id}/admin/members/${member.id}/cap`
      for (const body of [{ amount: -1, period: "month" }, { amount: 5, period: "week" }, { amount: 2.5, period: "total" }, { period: "month" }]) {
        expect((await server.request("PUT", path, { token: org.admin.session, body })).status, JSON.stringify(body)).toBe(400)
      }
      const email = Accounts.uniqueEmail()
      await server.request("POST", `/v1/orgs/${org.id}/admin/members/invite`, { token: org.admin.session, body: { email } })
      const pending = await server.request("PUT", `/v1/orgs/${org.id}/admin/members/${email}/cap`, {
        token: org.admin.session,
        body: { amount: 5, period: "month" }
      })
      expect(pending.status).toBe(404)
      expect((await server.request("PUT", path, { token: member.session, body: { amount: 5, period: "month" } })).status).toBe(403)
    })
  })

  describe("approving an intent decides again what the submission decided", () => {
    /** An org that reviews before running, with a funded pool, and a member with no credits of their own. */
    const reviewedOrg = async () => {
      const org = await Orgs.createOrg(server)
      const member = await Orgs.addMember(server, org)
      await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 500, "plan")
      await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { auto_execute: false } })
      const submitted = await huddle(member.session, { input: "Plan the migration.", org_id: org.id })
      expect(submitted.status).toBe(200)
      expect(submitted.body.status).toBe("awaiting_review")
      return { org, member, intentId: submitted.body.intent_id as string }
    }

    it("(a) a pool the policy closed since does not pay", async () => {
      const { intentId, member, org } = await reviewedOrg()
      await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, {
        token: org.admin.session,
        body: { auto_execute: false, credit_fallback: false }
      })
      const approved = await rpc(member.session, "intent.approve", { id: intentId })
      expect(approved.body.error.data.error).toBe("INSUFFICIENT_CREDITS")
      expect((await pool(org.id, org.admin.session)).subscription_balance).toBe(500)
    })

    it("(b) a member removed since can neither approve nor be run for", async () => {
      const { intentId, member, org } = await reviewedOrg()
      expect((await server.request("DELETE", `/v1/orgs/${org.id}/admin/members/${member.id}`, { token: org.admin.session })).status).toBe(204)
      const byMember = await rpc(member.session, "intent.approve", { id: intentId })
      expect(byMember.body.error.data.error).toBe("NOT_FOUND")
      const byAdmin = await rpc(org.admin.session, "intent.approve", { id: intentId })
      expect(byAdmin.body.error.data.error).toBe("CONFLICT")
      expect((await pool(org.id, org.admin.session)).subscription_balance).toBe(500)
      // The admin may still reject it.
      expect((await rpc(org.admin.session, "intent.reject", { id: intentId })).body.result.status).toBe("rejected")
    })

    it("(c) a key bound to another org sees nothing of it", async () => {
      const { intentId, member, org } = await reviewedOrg()
      const other = await Orgs.createOrg(server)
      const invite = await server.request("POST", `/v1/orgs/${other.id}/admin/members/invite`, {
        token: other.admin.session,
        body: { email: member.email }
      })
      expect(invite.status).toBe(201)
      await server.request("POST", "/v1/auth/login", { body: { email: member.email, password: member.password } })
      const { key } = await Accounts.createApiKey(server, member, { org_id: other.id })
      for (const method of ["intent.get", "intent.approve", "intent.reject"]) {
        const res = await rpc(key, method, { id: intentId })
        expect(res.body.error?.data.error, method).toBe("NOT_FOUND")
      }
      expect((await rpc(key, "intent.list", {})).body.result.data).toEqual([])
      expect((await pool(org.id, org.admin.session)).subscription_balance).toBe(500)
    })

    it("(d) a plan above a ceiling lowered since is re-planned within it", async () => {
      const org = await Orgs.createOrg(server)
      const member = await Orgs.addMember(server, org)
      await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 500, "plan")
      await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { auto_execute: false } })
      const submitted = await huddle(member.session, { input: "Plan the migration.", org_id: org.id, model_tier: "premium" })
      const planned = await rpc(member.session, "intent.get", { id: submitted.body.intent_id })
      expect(planned.body.result.plan.models).toEqual(["offline-premium"])
      await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, {
        token: org.admin.session,
        body: { auto_execute: false, model_tier: "economy" }
      })
      const approved = await rpc(org.admin.session, "intent.approve", { id: submitted.body.intent_id })
      expect(approved.body.result).toMatchObject({
        status: "completed",
        models: ["offline-economy"],
        settings: { model_tier: { value: "economy", decided_by: "org_policy" } }
      })
    })

    it("(d) a named model the policy forbids since is refused with 403, and can still be rejected", async () => {
      const org = await Orgs.createOrg(server)
      const member = await Orgs.addMember(server, org)
      await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 500, "plan")
      await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { auto_execute: false } })
      const submitted = await rpc(member.session, "intent.submit", { input: "Plan it.", org_id: org.id, model: "offline-premium" })
      expect(submitted.body.result.status).toBe("awaiting_review")
      await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, {
        token: org.admin.session,
        body: { auto_execute: false, model_tier: "standard" }
      })
      const approved = await rpc(org.admin.session, "intent.approve", { id: submitted.body.result.id })
      expect(approved.body.error.data.error).toBe("POLICY_VIOLATION")
      expect((await pool(org.id, org.admin.session)).subscription_balance).toBe(500)
      expect((await rpc(org.admin.session, "intent.reject", { id: submitted.body.result.id })).body.result.status).toBe("rejected")
    })
  })
})

describe("what members spent, when the instance writes its credits only now and then", () => {
  // A batch every half minute: what is spent stays in this instance's memory unless a read writes it.
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ starterCredits: 0, creditLeases: { tick: Duration.seconds(30) } })
  })
  afterAll(() => server.stop())

  it("shows an admin every charge at once: the member list, the member's own view and the pool agree", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 1000, "plan")
    const { key } = await Accounts.createApiKey(server, member, { org_id: org.id })
    let charged = 0
    const tokens = { input_tokens: 0, output_tokens: 0 }
    for (let i = 0; i < 3; i++) {
      const res = await server.request("POST", "/v1/huddle", { token: key, body: { input: "Quick check.", model_tier: "economy" } })
      expect(res.status).toBe(200)
      charged += res.body.credits_charged as number
      tokens.input_tokens += res.body.usage.input_tokens as number
      tokens.output_tokens += res.body.usage.output_tokens as number
    }
    expect(charged).toBeGreaterThan(0)
    // First the spend report, read from the ledger (each read below writes what is in memory).
    const range = `from=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}&to=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}`
    const spend = await server.request("GET", `/v1/orgs/${org.id}/admin/spend?${range}&group_by=member`, { token: org.admin.session })
    expect(spend.status).toBe(200)
    expect(tokens.input_tokens).toBeGreaterThan(0)
    expect(spend.body.totals).toEqual({ credits: charged, calls: 3, ...tokens })
    const list = await server.request("GET", `/v1/orgs/${org.id}/admin/members`, { token: org.admin.session })
    const listed = list.body.data.find((m: { user_id: string | null }) => m.user_id === member.id)
    expect(listed.spent).toEqual({ month: charged, total: charged })
    const own = (await server.request("GET", `/v1/orgs/${org.id}/credits`, { token: member.session })).body
    expect(own).toMatchObject({ subscription_balance: 1000 - charged, spent: { month: charged, total: charged } })
  })
})
