import { Accounts, TestServer } from "@huddle/testkit"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

describe("accounts over HTTP", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ starterCredits: 250 })
  })
  afterAll(() => server.stop())

  it("signs up with a normalised email and grants starter credits", async () => {
    const email = Accounts.uniqueEmail("Ann").replace("ann", "ANN")
    const res = await server.request("POST", "/v1/auth/signup", { body: { email: `  ${email} `, password: "a long password" } })
    expect(res.status).toBe(201)
    expect(res.body.user.email).toBe(email.toLowerCase())
    expect(res.body.user.id).toMatch(/^usr_/)
    expect(Number.isNaN(Date.parse(res.body.user.created_at))).toBe(false)
    expect(res.body.user).not.toHaveProperty("password_hash")

    const login = await server.request("POST", "/v1/auth/login", { body: { email, password: "a long password" } })
    expect(login.status).toBe(200)
    expect(login.body.token).toMatch(/^hs_/)
    expect(Date.parse(login.body.expires_at)).toBeGreaterThan(Date.now())
    const me = await server.request("GET", "/v1/me", { token: login.body.token })
    expect(me.status).toBe(200)
    expect(me.body).toEqual({
      user: res.body.user,
      credits: { balance: 250 },
      preferences: {},
      orgs: []
    })
  })

  it("refuses a second account for the same email, whatever its casing", async () => {
    const email = Accounts.uniqueEmail()
    expect((await server.request("POST", "/v1/auth/signup", { body: { email, password: "password-1" } })).status).toBe(201)
    const again = await server.request("POST", "/v1/auth/signup", { body: { email: email.toUpperCase(), password: "password-2" } })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ error: "CONFLICT", message: expect.any(String) })
  })

  it("names the offending field when sign-up input is invalid, and creates nothing", async () => {
    const badEmail = await server.request("POST", "/v1/auth/signup", { body: { email: "not-an-email", password: "long enough" } })
    expect(badEmail.status).toBe(400)
    expect(badEmail.body.error).toBe("INVALID_REQUEST")
    expect(badEmail.body.message).toContain("email")

    const email = Accounts.uniqueEmail()
    const shortPassword = await server.request("POST", "/v1/auth/signup", { body: { email, password: "short" } })
    expect(shortPassword.status).toBe(400)
    expect(shortPassword.body.message).toContain("password")
    // Nothing was created: the same email can still sign up.
    expect((await server.request("POST", "/v1/auth/signup", { body: { email, password: "long enough" } })).status).toBe(201)
  })

  it("never echoes a password in an error, whatever its length, type or content", async () => {
    const user = await Accounts.signupAndLogin(server)
    const secret = "hunter2-Secret"
    const passwords: ReadonlyArray<unknown> = [
      secret.repeat(20), // over 256 characters
      `${secret}\u0000`,
      `${secret}\ud800`,
      `${secret}\t`,
      { secret },
      [secret],
      1234567890
    ]
    for (const password of passwords) {
      for (const [path, email] of [["/v1/auth/signup", Accounts.uniqueEmail()], ["/v1/auth/login", user.email]] as const) {
        const res = await server.request("POST", path, { body: { email, password } })
        const label = `${path} ${JSON.stringify(password).slice(0, 40)}`
        expect(res.status, label).toBe(400)
        expect(res.body, label).toEqual({ error: "INVALID_REQUEST", message: expect.stringMatching(/^password: /) })
        expect(res.text, label).not.toMatch(/hunter2|1234567890/)
      }
    }
    const short = await server.request("POST", "/v1/auth/signup", { body: { email: Accounts.uniqueEmail(), password: "hunter2" } })
    expect(short.status).toBe(400)
    expect(short.body.message).toMatch(/^password: /)
    expect(short.text).not.toContain("hunter2")
    // Still a normal error for the field next to it.
    const badEmail = await server.request("POST", "/v1/auth/login", { body: { email: "nope", password: secret.repeat(20) } })
    expect(badEmail.status).toBe(400)
    expect(badEmail.text).not.toContain("hunter2")
  })

  it("answers a wrong password and an unknown email identically", async () => {
    const user = await Accounts.signupAndLogin(server)
    const wrongPassword = await server.request("POST", "/v1/auth/login", { body: { email: user.email, password: "wrong password" } })
    const unknownEmail = await server.request("POST", "/v1/auth/login", { body: { email: Accounts.uniqueEmail(), password: "wrong password" } })
    expect(wrongPassword.status).toBe(401)
    expect(unknownEmail.status).toBe(401)
    expect(wrongPassword.body).toEqual(unknownEmail.body)
    expect(wrongPassword.body.error).toBe("UNAUTHORIZED")
  })

  it("logs out: the session token is refused at once, other sessions keep working", async () => {
    const user = await Accounts.signupAndLogin(server)
    const second = await server.request("POST", "/v1/auth/login", { body: { email: user.email, password: user.password } })
    expect((await server.request("POST", "/v1/auth/logout", { token: user.session })).status).toBe(204)
    const after = await server.request("GET", "/v1/me", { token: user.session })
    expect(after.status).toBe(401)
    expect(after.body.error).toBe("UNAUTHORIZED")
    expect((await server.request("GET", "/v1/me", { token: second.body.token })).status).toBe(200)
  })

  it("refuses logout with an API key: that needs a web session", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    const res = await server.request("POST", "/v1/auth/logout", { token: key })
    expect(res.status).toBe(403)
    expect(res.body.error).toBe("SESSION_REQUIRED")
  })

  it("serves /v1/me to an API key too, and keeps personal preferences", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    const put = await server.request("PUT", "/v1/me/preferences", {
      token: key,
      body: { model_tier: "economy", risk_tolerance: "low", auto_execute: false }
    })
    expect(put.status).toBe(200)
    expect(put.body).toEqual({ model_tier: "economy", risk_tolerance: "low", auto_execute: false })
    const me = await server.request("GET", "/v1/me", { token: key })
    expect(me.status).toBe(200)
    expect(me.body.user.email).toBe(user.email)
    expect(me.body.preferences).toEqual({ model_tier: "economy", risk_tolerance: "low", auto_execute: false })

    const invalid = await server.request("PUT", "/v1/me/preferences", { token: key, body: { model_tier: "platinum" } })
    expect(invalid.status).toBe(400)
    expect(invalid.body.message).toContain("model_tier")
    expect((await server.request("GET", "/v1/me", { token: key })).body.preferences.model_tier).toBe("economy")
  })

  it("refuses missing, malformed and unknown credentials with 401 and the envelope", async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer" },
      { authorization: "Basic dXNlcjpwYXNz" },
      { authorization: "Bearer hk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
      { authorization: "Bearer hs_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
      { authorization: "Bearer ' OR 1=1 --" }
    ]
    for (const headers of cases) {
      const res = await server.request("GET", "/v1/me", { headers })
      expect(res.status, JSON.stringify(headers)).toBe(401)
      expect(res.body).toEqual({ error: "UNAUTHORIZED", message: expect.any(String) })
    }
  })

  it("reads the credential only as `Bearer <token>` (any case, one space or more), on every layer", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    const memories = async () => (await server.request("GET", "/v1/memories", { token: user.session })).body.data.length
    const calls = (authorization: string) => [
      server.request("GET", "/v1/me", { headers: { authorization } }),
      // With an Idempotency-Key, which the idempotency layer seals with the credential.
      server.request("POST", "/v1/memories", {
        headers: { authorization, "idempotency-key": `auth-${Math.random()}` },
        body: { content: `written with ${authorization.slice(0, 8)}`, scope: "personal" }
      }),
      server.request("POST", "/v1/chat/completions", {
        headers: { authorization, "idempotency-key": `auth-${Math.random()}` },
        body: { model: "economy", messages: [{ role: "user", content: "hi" }] }
      })
    ]
    for (const authorization of [`Bearer ${key}`, `bearer ${key}`, `BEARER ${key}`, `Bearer   ${key}`]) {
      const [me, memory, chat] = await Promise.all(calls(authorization))
      expect([me!.status, memory!.status, chat!.status], authorization).toEqual([200, 201, 200])
    }
    const before = await memories()
    for (const authorization of [`Basic  ${key}`, `Basic ${key}`, `Bearer:${key}`, `XXXXXXX${key}`, key, `Bearer${key}`, `Bearer ${key} ${key}`, `Token  ${key}`]) {
      const [me, memory, chat] = await Promise.all(calls(authorization))
      expect([me!.status, memory!.status, chat!.status], authorization).toEqual([401, 401, 401])
      expect(me!.body, authorization).toEqual({ error: "UNAUTHORIZED", message: expect.any(String) })
      expect(memory!.body, authorization).toEqual({ error: "UNAUTHORIZED", message: expect.any(String) })
      expect(chat!.body.error, authorization).toMatchObject({ code: "UNAUTHORIZED" })
    }
    expect(await memories()).toBe(before)
  })

  it("refuses a session token whose secret part was altered", async () => {
    const user = await Accounts.signupAndLogin(server)
    const last = user.session.at(-1) === "A" ? "B" : "A"
    const tampered = user.session.slice(0, -1) + last
    expect((await server.request("GET", "/v1/me", { token: tampered })).status).toBe(401)
    expect((await server.request("GET", "/v1/me", { token: user.session })).status).toBe(200)
  })
})

describe("web sessions expire", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ sessionTtl: Duration.seconds(2) })
  })
  afterAll(() => server.stop())

  it("refuses a session past HUDDLE_SESSION_TTL with 401; API keys made with it keep working", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    expect((await server.request("GET", "/v1/me", { token: user.session })).status).toBe(200)
    await new Promise((done) => setTimeout(done, 2_500))
    const expired = await server.request("GET", "/v1/me", { token: user.session })
    expect(expired.status).toBe(401)
    expect(expired.body).toEqual({ error: "UNAUTHORIZED", message: expect.any(String) })
    expect((await server.request("GET", "/v1/me", { token: key })).status).toBe(200)
    // Logging in again gives a new session that works.
    const again = await server.request("POST", "/v1/auth/login", { body: { email: user.email, password: user.password } })
    expect((await server.request("GET", "/v1/me", { token: again.body.token })).status).toBe(200)
  })
})

describe("the account's audit log", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  it("pages through the caller's own events, newest first, and shows no one else's", async () => {
    const user = await Accounts.signupAndLogin(server)
    const other = await Accounts.signupAndLogin(server)
    await Accounts.createApiKey(server, other, { name: "someone else's" })
    const keys = []
    for (let i = 0; i < 5; i++) keys.push(await Accounts.createApiKey(server, user, { name: `key ${i}` }))
    for (const key of keys.slice(0, 2)) {
      expect((await server.request("DELETE", `/v1/api-keys/${key.id}`, { token: user.session })).status).toBeLessThan(300)
    }

    const seen: Array<{ id: string; event_type: string; target: string }> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await server.request("GET", `/v1/me/audit-log?limit=3${cursor === null ? "" : `&cursor=${cursor}`}`, { token: user.session })
      expect(res.status, res.text).toBe(200)
      expect(res.body.data.length).toBeLessThanOrEqual(3)
      seen.push(...res.body.data)
      cursor = res.body.next_cursor
      pages++
    } while (cursor !== null && pages < 10)

    expect(seen.map((event) => event.event_type)).toEqual([
      "api_key.revoked",
      "api_key.revoked",
      ...Array.from({ length: 5 }, () => "api_key.created")
    ])
    expect(pages).toBe(3)
    // Newest first, each event once.
    const ids = seen.map((event) => event.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort().reverse()).toEqual(ids)
    expect(seen.filter((event) => event.event_type === "api_key.revoked").map((event) => event.target).sort())
      .toEqual(keys.slice(0, 2).map((key) => key.id).sort())
  })
})
