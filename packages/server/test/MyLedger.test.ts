/**
 * A user's own credit ledger over HTTP (`GET /v1/me/credits/ledger`): the starter grant, what a
 * huddle message reserved and gave back (netting to what it was charged, its settle rows carrying
 * the tokens it used), the balance now, cursor paging, and nobody else's rows.
 */
import { Accounts, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const starterCredits = 1000

interface Row {
  readonly id: string
  readonly delta: number
  readonly kind: string
  readonly reason: string
  readonly reservation_id: string | null
  readonly actor_id: string | null
  readonly balance_after: number
  readonly input_tokens: number | null
  readonly output_tokens: number | null
}

describe("the caller's credit ledger", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ starterCredits })
  })
  afterAll(() => server.stop())

  const ledger = (token: string, query = "") => server.request("GET", `/v1/me/credits/ledger${query}`, { token })

  it("starts with the starter grant and the balance", async () => {
    const user = await Accounts.signupAndLogin(server)
    const res = await ledger(user.session)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      data: [{
        id: expect.any(String),
        delta: starterCredits,
        kind: "grant",
        reservation_id: null,
        reason: "starter grant",
        actor_id: null,
        balance_after: starterCredits,
        created_at: expect.any(String),
        input_tokens: null,
        output_tokens: null
      }],
      next_cursor: null,
      balance: starterCredits
    })
  })

  it("lists what a huddle message was charged, newest first, netting to the credits charged, and only the caller's", async () => {
    const user = await Accounts.signupAndLogin(server)
    const other = await Accounts.signupAndLogin(server, "other")
    const reply = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Which cluster is staging?" } })
    expect(reply.status).toBe(200)
    const charged = reply.body.credits_charged as number
    expect(charged).toBeGreaterThan(0)

    const res = await ledger(user.session)
    expect(res.status).toBe(200)
    const rows = res.body.data as ReadonlyArray<Row>
    const ofMessage = rows.filter((row) => row.reason === `intent ${reply.body.intent_id}`)
    expect(ofMessage.length).toBeGreaterThan(0)
    expect(ofMessage.reduce((sum, row) => sum + row.delta, 0)).toBe(-charged)
    expect(ofMessage.every((row) => row.reservation_id !== null && row.actor_id === user.id)).toBe(true)
    // The settle rows carry the tokens the message's calls were charged for; no other row does.
    const settled = ofMessage.filter((row) => row.kind === "settle")
    expect(settled.length).toBeGreaterThan(0)
    expect({
      input_tokens: settled.reduce((sum, row) => sum + row.input_tokens!, 0),
      output_tokens: settled.reduce((sum, row) => sum + row.output_tokens!, 0)
    }).toEqual(reply.body.usage)
    expect(ofMessage.filter((row) => row.kind !== "settle").every((row) => row.input_tokens === null && row.output_tokens === null)).toBe(true)
    // Newest first: the first row's balance is the balance now; the last is the starter grant.
    const me = await server.request("GET", "/v1/me", { token: user.session })
    expect(res.body.balance).toBe(me.body.credits.balance)
    expect(res.body.balance).toBe(starterCredits - charged)
    expect(rows[0]!.balance_after).toBe(res.body.balance)
    expect(rows.at(-1)).toMatchObject({ kind: "grant", reason: "starter grant" })

    // Another user sees their own grant alone.
    const theirs = await ledger(other.session)
    expect(theirs.body.data.map((row: Row) => row.kind)).toEqual(["grant"])
    expect(theirs.body.balance).toBe(starterCredits)
  })

  it("pages with limit and cursor, without repeating or losing a row", async () => {
    const user = await Accounts.signupAndLogin(server, "pages")
    expect((await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "hello" } })).status).toBe(200)
    const all = (await ledger(user.session)).body.data as ReadonlyArray<Row>
    expect(all.length).toBeGreaterThanOrEqual(2)
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const query: string = `?limit=1${cursor === null ? "" : `&cursor=${cursor}`}`
      const page = await ledger(user.session, query)
      expect(page.status).toBe(200)
      expect(page.body.data).toHaveLength(1)
      seen.push(page.body.data[0].id)
      cursor = page.body.next_cursor
    } while (cursor !== null)
    expect(seen).toEqual(all.map((row) => row.id))
  })

  it("needs a credential, and refuses a cursor it did not write", async () => {
    expect((await server.request("GET", "/v1/me/credits/ledger")).status).toBe(401)
    const user = await Accounts.signupAndLogin(server, "cursor")
    const res = await ledger(user.session, "?cursor=not-a-cursor")
    expect(res.status).toBe(400)
  })
})
