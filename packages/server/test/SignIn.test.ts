/**
 * Sign-in that resists guessing (decision 0040), over HTTP against a real server on loopback:
 * failed logins throttled per account and per client address (429 with Retry-After, counted
 * before the attempt runs so that a parallel burst is cut off, given back on success), sign-ups
 * per address, X-Forwarded-For only behind a trusted proxy, changing the password (other
 * sessions end) and the operator's one-time reset token.
 */
import { Accounts, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const login = (server: TestServer.TestServer, email: string, password: string, headers: Record<string, string> = {}) =>
  server.request("POST", "/v1/auth/login", { body: { email, password }, headers })

const limited = (res: TestServer.Response, limit: number) => {
  expect(res.status, res.text).toBe(429)
  expect(res.body).toEqual({ error: "RATE_LIMITED", message: expect.any(String) })
  const retryAfter = Number(res.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(res.headers.get("ratelimit-limit")).toBe(String(limit))
  expect(res.headers.get("ratelimit-remaining")).toBe("0")
  expect(res.headers.get("ratelimit-reset")).toBe(String(retryAfter))
}

describe("login throttles", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ rateLimits: { throttles: { failuresPerAccount: 3, failuresPerAddress: 1_000 } } })
  })
  afterAll(() => server.stop())

  it("refuses an account after its failures are spent, the right password too; other accounts go on", async () => {
    const user = await Accounts.signupAndLogin(server, "victim")
    for (let i = 1; i <= 3; i++) {
      const res = await login(server, user.email, `wrong guess ${i}`)
      expect(res.status, res.text).toBe(401)
      expect(res.headers.get("ratelimit-limit")).toBe("3")
      expect(res.headers.get("ratelimit-remaining")).toBe(String(3 - i))
    }
    limited(await login(server, user.email, user.password), 3)
    limited(await login(server, user.email.toUpperCase(), "wrong again"), 3)
    // The session the user already has still works; another account from the same address logs in.
    expect((await server.request("GET", "/v1/me", { token: user.session })).status).toBe(200)
    const other = await Accounts.signupAndLogin(server, "bystander")
    expect((await login(server, other.email, other.password)).status).toBe(200)
  })

  it("counts unknown emails as it counts known ones", async () => {
    const email = Accounts.uniqueEmail("ghost")
    for (let i = 0; i < 3; i++) expect((await login(server, email, "guess")).status).toBe(401)
    limited(await login(server, email, "guess"), 3)
  })

  it("does not count successful logins", async () => {
    const user = await Accounts.signupAndLogin(server, "regular")
    for (let i = 0; i < 8; i++) expect((await login(server, user.email, user.password)).status).toBe(200)
    expect((await login(server, user.email, "one typo")).status).toBe(401)
    expect((await login(server, user.email, user.password)).status).toBe(200)
  })

  it("cuts off a burst sent in parallel at the limit", async () => {
    const user = await Accounts.signupAndLogin(server, "burst")
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(server, user.email, `parallel guess ${i}`)))
    const statuses = answers.map((res) => res.status).sort()
    expect(statuses.filter((status) => status === 401)).toHaveLength(3)
    expect(statuses.filter((status) => status === 429)).toHaveLength(17)
    limited(await login(server, user.email, user.password), 3)
  })
})

describe("address throttles", () => {
  let server: TestServer.TestServer
  let proxied: TestServer.TestServer
  beforeAll(async () => {
    const throttles = { failuresPerAccount: 100, failuresPerAddress: 4, signupsPerAddress: 3 }
    server = await TestServer.start({ rateLimits: { throttles } })
    proxied = await TestServer.start({ rateLimits: { throttles }, trustProxy: 1 })
  })
  afterAll(async () => {
    await server.stop()
    await proxied.stop()
  })

  it("refuses an address after its failures over many emails; a forged X-Forwarded-For changes nothing", async () => {
    for (let i = 0; i < 4; i++) {
      const res = await login(server, Accounts.uniqueEmail("spray"), "password1", { "x-forwarded-for": `203.0.113.${i}` })
      expect(res.status).toBe(401)
    }
    limited(await login(server, Accounts.uniqueEmail("spray"), "password1", { "x-forwarded-for": "198.51.100.7" }), 4)
  })

  it("limits sign-ups per address, a taken email included", async () => {
    const email = Accounts.uniqueEmail("first")
    expect((await proxied.request("POST", "/v1/auth/signup", { body: { email, password: "a long password" }, headers: { "x-forwarded-for": "192.0.2.1" } })).status).toBe(201)
    expect((await proxied.request("POST", "/v1/auth/signup", { body: { email, password: "a long password" }, headers: { "x-forwarded-for": "192.0.2.1" } })).status).toBe(409)
    const third = await proxied.request("POST", "/v1/auth/signup", {
      body: { email: Accounts.uniqueEmail("third"), password: "a long password" },
      headers: { "x-forwarded-for": "192.0.2.1" }
    })
    expect(third.status).toBe(201)
    expect(third.headers.get("ratelimit-remaining")).toBe("0")
    limited(
      await proxied.request("POST", "/v1/auth/signup", {
        body: { email: Accounts.uniqueEmail("fourth"), password: "a long password" },
        headers: { "x-forwarded-for": "192.0.2.1" }
      }),
      3
    )
    // Behind a trusted proxy, another client is another address.
    expect((await proxied.request("POST", "/v1/auth/signup", {
      body: { email: Accounts.uniqueEmail("fifth"), password: "a long password" },
      headers: { "x-forwarded-for": "192.0.2.2" }
    })).status).toBe(201)
  })

  it("behind a trusted proxy takes the address the proxy saw, not what the client wrote before it", async () => {
    for (let i = 0; i < 4; i++) {
      // A client forging the header gets its forgery kept on the left; the proxy appends the real one.
      const res = await login(proxied, Accounts.uniqueEmail("spray"), "password1", { "x-forwarded-for": `10.9.9.${i}, 198.51.100.20` })
      expect(res.status).toBe(401)
    }
    limited(await login(proxied, Accounts.uniqueEmail("spray"), "password1", { "x-forwarded-for": "10.1.1.1, 198.51.100.20" }), 4)
    expect((await login(proxied, Accounts.uniqueEmail("other"), "password1", { "x-forwarded-for": "198.51.100.21" })).status).toBe(401)
    // IPv6 clients count by their /64.
    for (let i = 0; i < 4; i++) {
      expect((await login(proxied, Accounts.uniqueEmail("v6"), "password1", { "x-forwarded-for": `2001:db8:1:2::${i + 1}` })).status).toBe(401)
    }
    limited(await login(proxied, Accounts.uniqueEmail("v6"), "password1", { "x-forwarded-for": "2001:db8:1:2:ffff::9" }), 4)
  })
})

describe("reset tokens", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ rateLimits: { throttles: { failuresPerAddress: 3 } } })
  })
  afterAll(() => server.stop())

  it("counts failed redemptions per address", async () => {
    const redeem = (token: string) => server.request("POST", "/v1/auth/password/reset", { body: { token, new_password: "a new long password" } })
    for (let i = 0; i < 3; i++) expect((await redeem(`hr_00000000000${i}_${"A".repeat(43)}`)).status).toBe(401)
    limited(await redeem(`hr_000000000009_${"A".repeat(43)}`), 3)
  })
})

describe("changing the password", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ rateLimits: { throttles: { failuresPerAccount: 3 } } })
  })
  afterAll(() => server.stop())

  it("changes it, ends the other web sessions, keeps this one and the API keys, and audits it", async () => {
    const user = await Accounts.signupAndLogin(server, "changer")
    const other = (await login(server, user.email, user.password)).body.token as string
    const key = await Accounts.createApiKey(server, user)

    const tooShort = await server.request("POST", "/v1/auth/password", { token: user.session, body: { current_password: user.password, new_password: "short" } })
    expect(tooShort.status).toBe(400)
    expect(tooShort.text).not.toContain(user.password)
    const viaKey = await server.request("POST", "/v1/auth/password", { token: key.key, body: { current_password: user.password, new_password: "a new long password" } })
    expect(viaKey.status).toBe(403)
    expect(viaKey.body.error).toBe("SESSION_REQUIRED")
    const wrong = await server.request("POST", "/v1/auth/password", { token: user.session, body: { current_password: "not it", new_password: "a new long password" } })
    expect(wrong.status).toBe(403)
    expect(wrong.body.error).toBe("FORBIDDEN")
    expect(wrong.headers.get("ratelimit-remaining")).toBe("2")
    // Nothing changed so far.
    expect((await server.request("GET", "/v1/me", { token: other })).status).toBe(200)

    const changed = await server.request("POST", "/v1/auth/password", {
      token: user.session,
      body: { current_password: user.password, new_password: "a new long password" }
    })
    expect(changed.status, changed.text).toBe(204)
    expect((await server.request("GET", "/v1/me", { token: other })).status).toBe(401)
    expect((await server.request("GET", "/v1/me", { token: user.session })).status).toBe(200)
    expect((await server.request("GET", "/v1/me", { token: key.key })).status).toBe(200)
    expect((await login(server, user.email, user.password)).status).toBe(401)
    expect((await login(server, user.email, "a new long password")).status).toBe(200)

    const log = await server.request("GET", "/v1/me/audit-log", { token: user.session })
    expect(log.body.data[0]).toMatchObject({ event_type: "auth.password_changed", actor_id: user.id, target: user.id, details: { sessions_ended: 1 } })
  })

  it("counts wrong current passwords with the account's failed logins", async () => {
    const user = await Accounts.signupAndLogin(server, "guessed")
    for (let i = 0; i < 2; i++) {
      const res = await server.request("POST", "/v1/auth/password", { token: user.session, body: { current_password: `guess ${i}`, new_password: "a new long password" } })
      expect(res.status).toBe(403)
    }
    expect((await login(server, user.email, "third guess")).status).toBe(401)
    limited(
      await server.request("POST", "/v1/auth/password", { token: user.session, body: { current_password: user.password, new_password: "a new long password" } }),
      3
    )
    limited(await login(server, user.email, user.password), 3)
  })
})

describe("the operator's password reset", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  const issue = (user: string) =>
    server.request("POST", `/v1/operator/users/${encodeURIComponent(user)}/password-reset`, { token: server.operatorToken! })
  const redeem = (token: string, new_password: string) => server.request("POST", "/v1/auth/password/reset", { body: { token, new_password } })

  it("issues a one-time token that sets a new password and ends every session", async () => {
    const user = await Accounts.signupAndLogin(server, "forgetful")
    const second = (await login(server, user.email, user.password)).body.token as string

    const first = await issue(user.email)
    expect(first.status, first.text).toBe(201)
    const issued = await issue(user.id)
    expect(issued.body).toEqual({ user_id: user.id, token: expect.stringMatching(/^hr_/), expires_at: expect.any(String) })
    const hours = (Date.parse(issued.body.expires_at) - Date.now()) / 3_600_000
    expect(hours).toBeGreaterThan(23.9)
    expect(hours).toBeLessThanOrEqual(24)

    // The newer token replaced the first; a forged one, or a bad password, changes nothing.
    expect((await redeem(first.body.token, "brand new password")).status).toBe(401)
    expect((await redeem(`${issued.body.token.slice(0, -4)}AAAA`, "brand new password")).status).toBe(401)
    expect((await redeem("not a token", "brand new password")).status).toBe(401)
    expect((await redeem(issued.body.token, "short")).status).toBe(400)
    expect((await server.request("GET", "/v1/me", { token: second })).status).toBe(200)

    const done = await redeem(issued.body.token, "brand new password")
    expect(done.status, done.text).toBe(204)
    for (const session of [user.session, second]) expect((await server.request("GET", "/v1/me", { token: session })).status).toBe(401)
    expect((await login(server, user.email, user.password)).status).toBe(401)
    const fresh = await login(server, user.email, "brand new password")
    expect(fresh.status).toBe(200)
    // Once only.
    expect((await redeem(issued.body.token, "another password")).status).toBe(401)

    const log = await server.request("GET", "/v1/me/audit-log", { token: fresh.body.token })
    const events = log.body.data.map((event: { event_type: string }) => event.event_type)
    expect(events.slice(0, 3)).toEqual(["auth.password_reset", "auth.password_reset_issued", "auth.password_reset_issued"])
    expect(log.body.data[1].details).toMatchObject({ by: "operator", via: "api" })
    expect(log.text).not.toContain(issued.body.token)
  })

  it("is the operator's only: 404 for an unknown user, 401 without the operator token", async () => {
    expect((await issue("nobody@example.com")).status).toBe(404)
    const user = await Accounts.signupAndLogin(server, "target")
    const asUser = await server.request("POST", `/v1/operator/users/${user.id}/password-reset`, { token: user.session })
    expect(asUser.status).toBe(401)
  })
})
