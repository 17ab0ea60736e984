/**
 * The sign-in throttles with the Redis store (real Redis at 127.0.0.1:6379, `REDIS_TEST_URL` for
 * another): two instances sharing one Redis count one account's failures together, and a success
 * is given back in Redis too. A key prefix of this run's own keeps runs apart.
 */
import { randomBytes } from "node:crypto"
import { Accounts, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const redisUrl = process.env.REDIS_TEST_URL ?? "redis://127.0.0.1:6379"

describe("sign-in throttles shared through Redis", () => {
  let first: TestServer.TestServer
  let second: TestServer.TestServer
  beforeAll(async () => {
    const rateLimits = { redisUrl, redisPrefix: `huddle-test:${randomBytes(6).toString("hex")}:`, throttles: { failuresPerAccount: 3 } }
    first = await TestServer.start({ rateLimits })
    second = await TestServer.start({ rateLimits })
  })
  afterAll(async () => {
    await first.stop()
    await second.stop()
  })

  const login = (server: TestServer.TestServer, email: string, password: string) =>
    server.request("POST", "/v1/auth/login", { body: { email, password } })

  it("counts an account's failures on every instance", async () => {
    const email = Accounts.uniqueEmail("shared")
    expect((await login(first, email, "guess 1")).status).toBe(401)
    expect((await login(second, email, "guess 2")).status).toBe(401)
    const third = await login(first, email, "guess 3")
    expect(third.status).toBe(401)
    expect(third.headers.get("ratelimit-remaining")).toBe("0")
    for (const server of [second, first]) {
      const refused = await login(server, email, "guess 4")
      expect(refused.status, refused.text).toBe(429)
      expect(refused.body.error).toBe("RATE_LIMITED")
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(60)
    }
    expect(first.logs.join("\n")).not.toContain("rate-limit store unavailable")
  })

  it("gives a success back in Redis", async () => {
    const user = await Accounts.signupAndLogin(first, "steady")
    for (let i = 0; i < 5; i++) expect((await login(first, user.email, user.password)).status).toBe(200)
    const failed = await login(first, user.email, "typo")
    expect(failed.status).toBe(401)
    expect(failed.headers.get("ratelimit-remaining")).toBe("2")
  })
})
