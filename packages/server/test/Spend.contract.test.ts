/**
 * Spend as an operator and an org's admins read it (GET /v1/operator/spend,
 * GET /v1/orgs/{orgId}/admin/spend): after real completions its totals are the ledger's own sums,
 * its groups add up to them, its tokens are the usage the completions answered with, pages walk
 * every group once, and only admins and the operator read it. On both engines.
 */
import { Accounts, Operator, Orgs, TestDatabase, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import { Encoding } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const catalog = [WithFakeUpstream.model("fake-economy", "economy"), WithFakeUpstream.model("fake-standard", "standard")]

interface Row {
  period?: string
  model?: string | null
  tier?: string | null
  member?: string
  source?: string
  credits: number
  calls: number
  input_tokens: number
  output_tokens: number
}

/** A completion made, with the usage it answered with. */
interface Made {
  readonly model: string
  readonly userId: string
  readonly input: number
  readonly output: number
}

describe.each(TestDatabase.availableEngines())("spend from the ledger (%s)", (engine) => {
  let server: TestServer.TestServer
  let stop: () => Promise<void>
  let org: Orgs.TestOrg
  let member: Accounts.TestUser
  let outsider: Accounts.TestUser
  const day = new Date().toISOString().slice(0, 10)
  const range = `from=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}&to=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}`

  const made: Array<Made> = []
  const complete = async (user: Accounts.TestUser, model: string, orgId?: string) => {
    const res = await server.request("POST", "/v1/chat/completions", {
      token: user.session,
      headers: orgId === undefined ? {} : { "huddle-organization": orgId },
      body: { model, messages: [{ role: "user", content: `Say something about ${model} in ${made.length + 1} words` }] }
    })
    expect(res.status, res.text).toBe(200)
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(0)
    expect(res.body.usage.completion_tokens).toBeGreaterThan(0)
    made.push({ model, userId: user.id, input: res.body.usage.prompt_tokens, output: res.body.usage.completion_tokens })
  }
  /** The usage of the completions `which` keeps, summed as spend reports it. */
  const tokensOf = (which: (made: Made) => boolean) => ({
    input_tokens: made.filter(which).reduce((sum, m) => sum + m.input, 0),
    output_tokens: made.filter(which).reduce((sum, m) => sum + m.output, 0)
  })
  const all = () => true
  const operatorSpend = (query: string) => server.request("GET", `/v1/operator/spend?${range}&${query}`, { token: server.operatorToken! })
  const orgSpend = (token: string, query: string) => server.request("GET", `/v1/orgs/${org.id}/admin/spend?${range}&${query}`, { token })
  /** What the ledger says was spent from an account: its rows other than grants, negated. */
  const spentFrom = async (target: Operator.Target) =>
    (await Operator.ledger(server, target)).data.filter((row) => row.kind !== "grant").reduce((sum, row) => sum - row.delta, 0)
  const sum = (rows: ReadonlyArray<Row>) => rows.reduce((s, row) => s + row.credits, 0)

  beforeAll(async () => {
    // No starter credits: the member's requests fall back to the org's pool; the admin and the
    // outsider pay from personal balances the operator grants.
    ;({ server, stop } = await WithFakeUpstream.start(catalog, { engine, starterCredits: 0 }))
    org = await Orgs.createOrg(server)
    member = await Orgs.addMember(server, org)
    outsider = await Accounts.signupAndLogin(server, "outsider")
    await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 50_000)
    await Operator.grant(server, { user_id: org.admin.id }, 50_000)
    await Operator.grant(server, { user_id: outsider.id }, 50_000)
    const policies = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, {
      token: org.admin.session,
      body: { credit_fallback: true }
    })
    expect(policies.status, policies.text).toBe(200)
    await complete(member, "fake-economy", org.id)
    await complete(member, "fake-economy", org.id)
    await complete(member, "standard", org.id)
    await complete(org.admin, "fake-standard", org.id)
    await complete(outsider, "fake-standard")
  }, 60_000)
  afterAll(() => stop())

  it("operator: totals equal the ledger, and every grouping adds up to them", async () => {
    // Reading each ledger first also writes this instance's pending batch of leased reservations.
    const orgSpent = await spentFrom({ org_id: org.id, balance: "subscription" })
    const personal = await spentFrom({ user_id: outsider.id }) + await spentFrom({ user_id: org.admin.id })
    expect(orgSpent).toBeGreaterThan(0)
    expect(personal).toBeGreaterThan(0)
    expect(await spentFrom({ user_id: member.id })).toBe(0)
    const whole = await operatorSpend("")
    expect(whole.status, whole.text).toBe(200)
    expect(whole.body.totals).toEqual({ credits: orgSpent + personal, calls: 5, ...tokensOf(all) })
    expect(whole.body.data).toEqual([{ credits: orgSpent + personal, calls: 5, ...tokensOf(all) }])

    const byModel = await operatorSpend("group_by=model,tier")
    const rows = byModel.body.data as ReadonlyArray<Row>
    expect(rows.map((row) => [row.model, row.tier, row.calls])).toEqual([
      ["fake-economy", "economy", 2],
      ["fake-standard", "standard", 2],
      ["standard", "standard", 1]
    ])
    expect(sum(rows)).toBe(orgSpent + personal)
    for (const row of rows) {
      expect({ input_tokens: row.input_tokens, output_tokens: row.output_tokens }).toEqual(tokensOf((m) => m.model === row.model))
    }

    const bySource = (await operatorSpend("group_by=day,source")).body.data as ReadonlyArray<Row>
    const paidBy = (ids: ReadonlyArray<string>) => tokensOf((m) => ids.includes(m.userId))
    expect(bySource).toEqual([
      { period: day, source: "personal", credits: personal, calls: 2, ...paidBy([outsider.id, org.admin.id]) },
      { period: day, source: "subscription", credits: orgSpent, calls: 3, ...paidBy([member.id]) }
    ])
    const byTier = (await operatorSpend("group_by=month,tier")).body.data as ReadonlyArray<Row>
    expect(byTier.map((row) => [row.period, row.tier, row.calls])).toEqual([
      [`${day.slice(0, 7)}-01`, "economy", 2],
      [`${day.slice(0, 7)}-01`, "standard", 3]
    ])
  })

  it("admin: the org's spend is its pool's ledger and its members' personal rows for org requests; a member gets 403, a stranger 404", async () => {
    const pool = await spentFrom({ org_id: org.id, balance: "subscription" })
    const adminPersonal = await spentFrom({ user_id: org.admin.id })
    const res = await orgSpend(org.admin.session, "group_by=member,source")
    expect(res.status, res.text).toBe(200)
    expect(res.body.totals).toEqual({ credits: pool + adminPersonal, calls: 4, ...tokensOf((m) => m.userId !== outsider.id) })
    const rows = res.body.data as ReadonlyArray<Row>
    expect(rows.map((row) => [row.member, row.source, row.credits, row.calls]).sort()).toEqual(
      [[org.admin.id, "personal", adminPersonal, 1], [member.id, "subscription", pool, 3]].sort()
    )
    // The outsider's personal spend is not the org's.
    expect(rows.some((row) => row.member === outsider.id)).toBe(false)

    expect((await orgSpend(member.session, "")).status).toBe(403)
    expect((await orgSpend(outsider.session, "")).status).toBe(404)
    expect((await server.request("GET", `/v1/orgs/${org.id}/admin/spend?${range}`)).status).toBe(401)
    expect((await server.request("GET", `/v1/operator/spend?${range}`, { token: org.admin.session })).status).toBe(401)
  })

  it("pages walk every group once, in key order, whatever the page size", async () => {
    const whole = (await operatorSpend("group_by=model,member,source&limit=100")).body
    expect(whole.next_cursor).toBeNull()
    expect(whole.data.length).toBeGreaterThanOrEqual(4)
    for (const limit of [1, 2, 3]) {
      const walked: Array<Row> = []
      let cursor: string | null = null
      do {
        const page: TestServer.Response = await operatorSpend(
          `group_by=model,member,source&limit=${limit}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
        )
        expect(page.status, page.text).toBe(200)
        expect(page.body.data.length).toBeLessThanOrEqual(limit)
        expect(page.body.totals).toEqual(whole.totals)
        walked.push(...page.body.data)
        cursor = page.body.next_cursor
      } while (cursor !== null)
      expect(walked).toEqual(whole.data)
    }
  })

  it("answers 400 naming the parameter for a bad range, grouping or cursor", async () => {
    const bad = async (query: string, needle: string) => {
      const res = await server.request("GET", `/v1/operator/spend?${query}`, { token: server.operatorToken! })
      expect(res.status, res.text).toBe(400)
      expect(res.text).toContain(needle)
    }
    await bad("to=2026-02-01", "from")
    await bad("from=yesterday&to=2026-02-01", "from")
    // Dates that do not exist are refused, not rolled forward (2026-02-30 is not 2 March).
    await bad("from=2026-02-30&to=2026-03-05", "from: must be an ISO 8601 date or time")
    await bad("from=2026-01-01&to=2026-04-31", "to: must be an ISO 8601 date or time")
    await bad("from=2026-01-01T24:00&to=2026-02-01", "from: must be an ISO 8601 date or time")
    await bad("from=2026-01-01&to=Feb 1 2026", "to: must be an ISO 8601 date or time")
    await bad("from=2026-02-01&to=2026-02-01", "to: must be after from")
    await bad("from=2025-01-01&to=2026-02-01", "at most 366 days")
    await bad("from=2026-01-01&to=2026-02-01&group_by=colour", "unknown key `colour`")
    await bad("from=2026-01-01&to=2026-02-01&group_by=day,month", "at most one of day, week and month")
    await bad("from=2026-01-01&to=2026-02-01&group_by=model,model", "twice")
    const page = (await operatorSpend("group_by=model&limit=1")).body
    expect(page.next_cursor).not.toBeNull()
    const res = await operatorSpend(`group_by=model,member&cursor=${encodeURIComponent(page.next_cursor)}`)
    expect(res.status, res.text).toBe(400)
    expect(res.body.message).toBe("cursor: must be the next_cursor of a previous page with the same group_by")
    // The codec's own spelling of keys a page never ends on: one holds a NUL, which the database refuses.
    const nul = Encoding.encodeBase64Url(`huddle.cursor.1:${JSON.stringify(["", "\u0000"])}`)
    const refused = await operatorSpend(`group_by=model&cursor=${nul}`)
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.message).toBe("cursor: must be the next_cursor of a previous page with the same group_by")
  })
})
