/**
 * The Messages API's errors as `@anthropic-ai/sdk` raises them: Anthropic's envelope and types
 * with DESIGN §8's statuses, each as the SDK's own error class, with a `request-id`; and nothing
 * charged for a refused call.
 */
import Anthropic from "@anthropic-ai/sdk"
import { Accounts, Operator, Orgs, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

describe("Messages API errors through @anthropic-ai/sdk", () => {
  let server: TestServer.TestServer

  const clientFor = (key: string, org?: string) =>
    new Anthropic({
      apiKey: key,
      baseURL: server.url,
      maxRetries: 0,
      ...(org === undefined ? {} : { defaultHeaders: { "huddle-organization": org } })
    })

  const ask = (client: Anthropic, model = "economy", content = "hi") =>
    client.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content }] }).catch((e: unknown) => e)

  /** A user with a key and enough credits for a few calls (the server's starter grant is none). */
  const funded = async (amount = 10_000) => {
    const user = await Accounts.signupAndLogin(server)
    await Operator.grant(server, { user_id: user.id }, amount)
    return { user, key: (await Accounts.createApiKey(server, user)).key }
  }

  const expectEnvelope = (error: unknown, status: number, type: string) => {
    expect(error).toBeInstanceOf(Anthropic.APIError)
    const apiError = error as InstanceType<typeof Anthropic.APIError>
    expect(apiError.status).toBe(status)
    expect(apiError.error).toMatchObject({ type: "error", error: { type, message: expect.any(String) } })
    expect(apiError.type).toBe(type)
    // The SDK reads `request-id`: errors carry it too, the same id as Huddle's `x-request-id`.
    expect(apiError.requestID).toMatch(/^[0-9a-f-]{36}$/)
    expect(apiError.requestID).toBe(apiError.headers?.get("x-request-id"))
    return apiError
  }

  beforeAll(async () => {
    server = await TestServer.start({ starterCredits: 0, rateLimits: { chat: 3 }, maxBodyBytes: 64 * 1024 })
  }, 60_000)
  afterAll(() => server?.stop())

  it("401 authentication_error for a wrong key, as AuthenticationError", async () => {
    const error = await ask(clientFor("hk_not_a_real_key"))
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError)
    expectEnvelope(error, 401, "authentication_error")
  })

  it("402 billing_error when the credits cannot cover the call, naming the budget, and nothing charged", async () => {
    const user = await Accounts.signupAndLogin(server)
    const key = (await Accounts.createApiKey(server, user)).key
    const error = expectEnvelope(await ask(clientFor(key)), 402, "billing_error")
    expect(error.message).toMatch(/balance|credits/i)
    const me = await server.request("GET", "/v1/me", { token: user.session })
    expect(me.body.credits.balance).toBe(0)
  })

  it("403 permission_error when an org's policy forbids the model, as PermissionDeniedError", async () => {
    const org = await Orgs.createOrg(server)
    const policy = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { model_tier: "economy" } })
    expect(policy.status).toBe(200)
    const member = await Orgs.addMember(server, org)
    const key = (await Accounts.createApiKey(server, member)).key
    const error = await ask(clientFor(key, org.id), "offline-premium")
    expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError)
    expectEnvelope(error, 403, "permission_error")
  })

  it("404 not_found_error for an unknown model, as NotFoundError", async () => {
    const { key } = await funded()
    const error = await ask(clientFor(key), "gpt-9")
    expect(error).toBeInstanceOf(Anthropic.NotFoundError)
    expect(expectEnvelope(error, 404, "not_found_error").message).toContain("gpt-9")
  })

  it("400 invalid_request_error for a bad parameter, naming it, as BadRequestError", async () => {
    const { key } = await funded()
    const error = await clientFor(key).messages
      .create({ model: "economy", max_tokens: 0, messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    expect(expectEnvelope(error, 400, "invalid_request_error").message).toContain("max_tokens")
  })

  it("413 request_too_large for a body over the limit", async () => {
    const { key } = await funded()
    expectEnvelope(await ask(clientFor(key), "economy", "x".repeat(100 * 1024)), 413, "request_too_large")
  })

  it("429 rate_limit_error with retry-after once the chat limit is spent, as RateLimitError", async () => {
    const { key } = await funded()
    const client = clientFor(key)
    for (let i = 0; i < 3; i++) expect(await ask(client)).toMatchObject({ type: "message" })
    const error = await ask(client)
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    const apiError = expectEnvelope(error, 429, "rate_limit_error")
    expect(Number(apiError.headers?.get("retry-after"))).toBeGreaterThan(0)
  })

  it("answers HEAD / with 200", async () => {
    const res = await fetch(`${server.url}/`, { method: "HEAD" })
    expect(res.status).toBe(200)
  })
})
