/**
 * `/v1/messages` and `/v1/messages/count_tokens` through `@anthropic-ai/sdk`, unmodified, against
 * the in-process server with the offline models: shapes, streams with `finalMessage()`, tools
 * round trips, token counts, credits charged once, memories after the client's system, councils.
 */
import Anthropic from "@anthropic-ai/sdk"
import { Accounts, Operator, Orgs, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"

describe("the Messages API through @anthropic-ai/sdk", () => {
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let apiKey: string
  let client: Anthropic

  const clientFor = (key: string, options: { bearer?: boolean; org?: string } = {}) =>
    new Anthropic({
      ...(options.bearer === true ? { apiKey: null, authToken: key } : { apiKey: key }),
      baseURL: server.url,
      maxRetries: 0,
      ...(options.org === undefined ? {} : { defaultHeaders: { "huddle-organization": options.org } })
    })

  const textOf = (message: Anthropic.Message) =>
    message.content.map((block) => (block.type === "text" ? block.text : "")).join("")

  const weather: Anthropic.Tool = {
    name: "get_weather",
    description: "The weather in a city",
    input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  }

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
    // Anthropic's header names the same request as Huddle's own.
    expect(response.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(response.headers.get("request-id")).toBe(response.headers.get("x-request-id"))
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

  it("takes the key as a bearer token too (ANTHROPIC_AUTH_TOKEN)", async () => {
    const message = await clientFor(apiKey, { bearer: true }).messages.create({
      model: "economy",
      max_tokens: 50,
      messages: [{ role: "user", content: "hi" }]
    })
    expect(message.model).toBe("offline-economy")
  })

  it("runs a tools round trip: tool_use with input valid against the schema, then the tool_result answered", async () => {
    const before = await balanceOf(user)
    const { data: call, response: first } = await client.messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 200,
      tools: [weather],
      tool_choice: { type: "tool", name: "get_weather" },
      messages: [{ role: "user", content: "What is the weather in Paris?" }]
    }).withResponse()
    expect(call.stop_reason).toBe("tool_use")
    const use = call.content.find((block) => block.type === "tool_use")
    expect(use).toMatchObject({ type: "tool_use", name: "get_weather", id: expect.any(String) })
    const input = (use as Anthropic.ToolUseBlock).input as { city: unknown }
    expect(typeof input.city).toBe("string")

    const { data: answer, response: second } = await client.messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 200,
      tools: [weather],
      messages: [
        { role: "user", content: "What is the weather in Paris?" },
        { role: "assistant", content: call.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: (use as Anthropic.ToolUseBlock).id, content: "Sunny, 21°C" }] }
      ]
    }).withResponse()
    expect(answer.stop_reason).toBe("end_turn")
    expect(textOf(answer)).toContain("Sunny, 21°C")
    const charged = Number(first.headers.get("huddle-credits-charged")) + Number(second.headers.get("huddle-credits-charged"))
    expect(await balanceOf(user)).toBe(before - charged)
  })

  it("streams a tool call as input_json_delta, assembled by finalMessage(), with tool_choice any", async () => {
    const stream = client.messages.stream({
      model: "economy",
      max_tokens: 200,
      tools: [weather],
      tool_choice: { type: "any" },
      messages: [{ role: "user", content: "Weather please" }]
    })
    const message = await stream.finalMessage()
    expect(message.stop_reason).toBe("tool_use")
    const use = message.content.find((block) => block.type === "tool_use") as Anthropic.ToolUseBlock
    expect(use.name).toBe("get_weather")
    expect(typeof (use.input as { city: unknown }).city).toBe("string")
  })

  it("ends at a stop sequence and says which", async () => {
    const message = await client.messages.create({
      model: "economy",
      max_tokens: 200,
      stop_sequences: ["hello"],
      messages: [{ role: "user", content: "Please say hello world" }]
    })
    expect(message.stop_reason).toBe("stop_sequence")
    expect(message.stop_sequence).toBe("hello")
    expect(textOf(message)).not.toContain("hello")
  })

  it("counts tokens deterministically, system and tools included, for free", async () => {
    const before = await balanceOf(user)
    const base = { model: "claude-sonnet-4-5", messages: [{ role: "user" as const, content: "Count me" }] }
    const plain = await client.messages.countTokens(base)
    expect(plain.input_tokens).toBeGreaterThan(0)
    expect((await client.messages.countTokens(base)).input_tokens).toBe(plain.input_tokens)
    const withSystem = await client.messages.countTokens({ ...base, system: "You are a careful assistant who counts." })
    expect(withSystem.input_tokens).toBeGreaterThan(plain.input_tokens)
    const withTools = await client.messages.countTokens({ ...base, tools: [weather] })
    expect(withTools.input_tokens).toBeGreaterThan(plain.input_tokens)
    expect(await balanceOf(user)).toBe(before)
  })

  it("lists models in Anthropic's shape", async () => {
    const page = await client.models.list()
    const ids = page.data.map((model) => model.id)
    expect(ids).toEqual(expect.arrayContaining(["economy", "standard", "premium", "offline-economy"]))
    for (const model of page.data) {
      expect(model).toMatchObject({ type: "model", id: expect.any(String), display_name: expect.any(String), created_at: expect.any(String) })
    }
    expect(await client.models.retrieve("offline-economy")).toMatchObject({ type: "model", id: "offline-economy" })
    // Without anthropic-version, the same path answers in OpenAI's shape.
    const plain = await server.request("GET", "/v1/models", { token: apiKey })
    expect(plain.body.object).toBe("list")
  })

  it("refuses an unknown top-level field with a 400 naming it, and charges nothing", async () => {
    const before = await balanceOf(user)
    const error = await client.messages
      .create({ model: "economy", max_tokens: 10, messages: [{ role: "user", content: "x" }], temprature: 0.5 } as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).message).toContain("temprature")
    expect(await balanceOf(user)).toBe(before)
  })

  it("refuses an image for a model that cannot take it, naming the block", async () => {
    const error = await client.messages.create({
      model: "economy",
      max_tokens: 10,
      messages: [{
        role: "user",
        content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }, { type: "text", text: "What is this?" }]
      }]
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    expect((error as Error).message).toContain("messages[0].content[0]")
  })

  it("accepts what Claude Code sends (cache_control, thinking, metadata, betas) for the offline model", async () => {
    const message = await client.beta.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 2048,
      betas: ["claude-code-20250219", "interleaved-thinking-2025-05-14"],
      system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
      thinking: { type: "enabled", budget_tokens: 1024 },
      metadata: { user_id: "user_abc" },
      tools: [{ ...weather, cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "Just say hi", cache_control: { type: "ephemeral" } }] }]
    })
    expect(message.model).toBe("offline-standard")
    expect(message.content.some((block) => block.type === "text")).toBe(true)
  })

  it("puts an org memory after the client's system, where the model sees both", async () => {
    const org = await Orgs.createOrg(server)
    const memory = await server.request("POST", "/v1/memories", {
      token: org.admin.session,
      body: { content: "Our deploys go out on Tuesdays.", scope: "org", org_id: org.id }
    })
    expect(memory.status).toBe(201)
    const member = await Orgs.addMember(server, org)
    const inOrg = clientFor((await Accounts.createApiKey(server, member)).key, { org: org.id })
    const message = await inOrg.messages.create({
      model: "economy",
      max_tokens: 300,
      system: "Client rule: be brief.",
      messages: [{ role: "user", content: "When do we deploy?" }]
    })
    const text = textOf(message)
    expect(text).toContain("Client rule: be brief.")
    expect(text).toContain("Our deploys go out on Tuesdays.")
    expect(text.indexOf("Client rule: be brief.")).toBeLessThan(text.indexOf("Our deploys go out on Tuesdays."))
  })

  it("answers through a council with the consensus as text and the report in `consensus`", async () => {
    await Operator.grant(server, { user_id: user.id }, 100_000)
    const message = await client.messages.create({ model: "council", max_tokens: 300, messages: [{ role: "user", content: "Tabs or spaces?" }] })
    const consensus = (message as unknown as { consensus: { text: string } }).consensus
    expect(consensus.text.length).toBeGreaterThan(0)
    expect(textOf(message)).toBe(consensus.text)

    const stream = client.messages.stream({ model: "council", max_tokens: 300, messages: [{ role: "user", content: "Tabs or spaces?" }] })
    let reported: unknown
    stream.on("streamEvent", (event) => {
      if (event.type === "message_delta") reported = (event as unknown as { consensus: unknown }).consensus
    })
    const streamed = await stream.finalMessage()
    expect(reported).toMatchObject({ text: textOf(streamed) })
  })

  it("replays a retry with the same Idempotency-Key, charged once", async () => {
    const before = await balanceOf(user)
    const params = { model: "economy", max_tokens: 100, messages: [{ role: "user" as const, content: "Once only" }] }
    const options = { headers: { "Idempotency-Key": `msg-${Date.now()}` } }
    const first = await client.messages.create(params, options).withResponse()
    const second = await client.messages.create(params, options).withResponse()
    expect(second.data).toEqual(first.data)
    expect(second.response.headers.get("idempotent-replayed")).toBe("true")
    expect(await balanceOf(user)).toBe(before - Number(first.response.headers.get("huddle-credits-charged")))
  })
})
