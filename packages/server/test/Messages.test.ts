/**
 * `/v1/messages` and `/v1/messages/count_tokens` through `@anthropic-ai/sdk`, unmodified, against
 * the in-process server with the offline models: shapes, streams with `finalMessage()`, tools
 * round trips, token counts, credits charged once, memories after the client's system, councils.
 */
import Anthropic from "@anthropic-ai/sdk"
import { Accounts, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"

describe("the Messages API through @anthropic-ai/sdk", () => {
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let apiKey: string
  let client: Anthropic

  const clientFor = (key: string, options: { bearer?: boolean } = {}) =>
    new Anthropic({
      ...(options.bearer === true ? { apiKey: null, authToken: key } : { apiKey: key }),
      baseURL: server.url,
      maxRetries: 0
    })

  const balanceOf = async (someone: Accounts.TestUser) =>
    (await server.request("GET", "/v1/me", { token: someone.session })).body.credits.balance as number

  beforeAll(async () => {
    server = await TestServer.start()
  }, 60_000)
  afterAll(() => server?.stop())
  beforeEach(async () => {
    user = await Accounts.signupAndLogin(server)
    apiKey = (await Accounts.createApiKey(server, user)).key
    client = clientFor(apiKey)
  })

  it("creates a message with a Claude model name, charged once", async () => {
    const before = await balanceOf(user)
    const { data: message, response } = await client.messages
      .create({ model: "claude-sonnet-4-5-20250929", max_tokens: 200, messages: [{ role: "user", content: "Say hello" }] })
      .withResponse()
    expect(message.type).toBe("message")
    expect(message.id).toMatch(/^msg_/)
    expect(message.role).toBe("assistant")
    expect(message.model).toBe("offline-standard")
    expect(message.stop_reason).toBe("end_turn")
    expect(message.content[0]).toMatchObject({ type: "text" })
    expect(message.content[0]!.type === "text" && message.content[0]!.text).toContain("Say hello")
    expect(message.usage.input_tokens).toBeGreaterThan(0)
    expect(message.usage.output_tokens).toBeGreaterThan(0)
    expect(response.headers.get("request-id")).toBeTruthy()
    const charged = Number(response.headers.get("huddle-credits-charged"))
    expect(charged).toBeGreaterThan(0)
    expect(await balanceOf(user)).toBe(before - charged)
  })

  it("streams a message that finalMessage() assembles", async () => {
    const stream = client.messages.stream({ model: "economy", max_tokens: 200, messages: [{ role: "user", content: "Stream a hello" }] })
    const texts: Array<string> = []
    stream.on("text", (text) => texts.push(text))
    const message = await stream.finalMessage()
    expect(message.model).toBe("offline-economy")
    expect(message.stop_reason).toBe("end_turn")
    const text = message.content[0]!.type === "text" ? message.content[0]!.text : ""
    expect(text).toContain("Stream a hello")
    expect(texts.join("")).toBe(text)
    expect(message.usage.output_tokens).toBeGreaterThan(0)
  })
})
