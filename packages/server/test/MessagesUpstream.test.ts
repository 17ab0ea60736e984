/**
 * The Messages API in front of an OpenAI-compatible upstream (a fake that records what it
 * receives), through `@anthropic-ai/sdk`: the translation both ways — system, tools and tool
 * results, tool choice, stop sequences, metadata, thinking, stop reasons and usage — the exact
 * charge, memories after the client's system, an operator's alias, and what is refused.
 */
import Anthropic from "@anthropic-ai/sdk"
import { Accounts, FakeOpenAi, Orgs, TestServer, WithFakeUpstream } from "@huddle/testkit"
import { beforeEach, describe, expect, it } from "vitest"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.price: one credit per input token, two per output token.
const catalog = [
  WithFakeUpstream.model("fake-economy", "economy", { upstream_model: "economy-v1", max_output_tokens: 500 }),
  WithFakeUpstream.model("fake-standard", "standard", { upstream_model: "standard-v1", max_output_tokens: 500 })
]

type Sent = { model: string; messages: Array<Record<string, unknown>> } & Record<string, unknown>

const weather: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
}

describe("the Messages API over an OpenAI-compatible upstream", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let client: Anthropic

  const sent = (i = 0) => fake.requests[i]!.body as Sent
  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number

  fakeUpstreamSuite(catalog, (started) => ({ fake, server } = started), { aliases: [{ match: "claude-*", target: "fake-economy" }] })
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
    client = new Anthropic({ apiKey: (await Accounts.createApiKey(server, user)).key, baseURL: server.url, maxRetries: 0 })
  })

  it("translates system, tools, tool choice, stop sequences and metadata, and a tool call back as tool_use, charged exactly", async () => {
    fake.enqueue(FakeOpenAi.toolCallReply("get_weather", "{\"city\":\"Paris\"}", { prompt_tokens: 40, completion_tokens: 9 }))
    const before = await balance()
    const { data: message, response } = await client.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 300,
      system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
      tools: [weather],
      tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
      stop_sequences: ["END"],
      metadata: { user_id: "user_abc" },
      messages: [{ role: "user", content: "Weather in Paris?" }]
    }).withResponse()

    // The operator's alias sent claude-* to fake-economy, and the answer says so.
    expect(message.model).toBe("fake-economy")
    expect(sent().model).toBe("economy-v1")
    expect(sent().messages).toEqual([{ role: "system", content: "You are terse." }, { role: "user", content: "Weather in Paris?" }])
    expect(sent().tools).toEqual([{ type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: weather.input_schema } }])
    expect(sent().tool_choice).toEqual({ type: "function", function: { name: "get_weather" } })
    expect(sent().parallel_tool_calls).toBe(false)
    expect(sent().stop).toEqual(["END"])
    expect(sent().user).toBe("user_abc")

    expect(message.stop_reason).toBe("tool_use")
    expect(message.content).toEqual([{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } }])
    expect(message.usage).toMatchObject({ input_tokens: 40, output_tokens: 9 })
    expect(Number(response.headers.get("huddle-credits-charged"))).toBe(40 + 2 * 9)
    expect(await balance()).toBe(before - (40 + 2 * 9))
  })

  it("translates tool_use and tool_result (is_error) into tool calls and tool messages, and streams the answer with its usage", async () => {
    fake.enqueue({ answer: "It is sunny in Paris.", usage: { prompt_tokens: 60, completion_tokens: 6 } })
    const before = await balance()
    const stream = client.messages.stream({
      model: "economy",
      max_tokens: 300,
      tools: [weather],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "timeout" }], is_error: true },
            { type: "text", text: "Try to answer anyway." }
          ]
        }
      ]
    })
    const message = await stream.finalMessage()
    expect(sent().messages).toEqual([
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }]
      },
      { role: "tool", tool_call_id: "toolu_1", content: "Error: timeout" },
      { role: "user", content: "Try to answer anyway." }
    ])
    expect(message.content).toEqual([{ type: "text", text: "It is sunny in Paris." }])
    expect(message.stop_reason).toBe("end_turn")
    expect(message.usage).toMatchObject({ input_tokens: 60, output_tokens: 6 })
    expect(await balance()).toBe(before - (60 + 2 * 6))
  })

  it("maps finish reasons: length is max_tokens", async () => {
    fake.enqueue({ answer: "cut", finishReason: "length", usage: { prompt_tokens: 5, completion_tokens: 1 } })
    const message = await client.messages.create({ model: "economy", max_tokens: 1, messages: [{ role: "user", content: "x" }] })
    expect(message.stop_reason).toBe("max_tokens")
  })

  it("sends thinking as reasoning_effort, by its budget", async () => {
    fake.enqueue({ answer: "ok", usage: { prompt_tokens: 5, completion_tokens: 1 } })
    await client.messages.create({
      model: "economy",
      max_tokens: 2048,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [{ role: "user", content: "x" }]
    })
    expect(sent().reasoning_effort).toBe("low")
  })

  it("refuses what only Anthropic can honour, naming it, before any upstream call or charge", async () => {
    const before = await balance()
    const topK = await server.request("POST", "/v1/messages", {
      token: (await Accounts.createApiKey(server, user)).key,
      body: { model: "economy", max_tokens: 10, top_k: 5, messages: [{ role: "user", content: "x" }] }
    })
    expect(topK.status).toBe(400)
    expect(topK.body).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining("top_k") } })
    const prefill = await client.messages.create({
      model: "economy",
      max_tokens: 10,
      messages: [{ role: "user", content: "x" }, { role: "assistant", content: "The answer is" }]
    }).catch((e: unknown) => e)
    expect(prefill).toBeInstanceOf(Anthropic.BadRequestError)
    expect((prefill as Error).message).toContain("messages")
    expect(fake.requests).toHaveLength(0)
    expect(await balance()).toBe(before)
  })

  it("puts an org memory after the client's system, so that its prefix stays the client's", async () => {
    const org = await Orgs.createOrg(server)
    await server.request("POST", "/v1/memories", {
      token: org.admin.session,
      body: { content: "Our deploys go out on Tuesdays.", scope: "org", org_id: org.id }
    })
    const member = await Orgs.addMember(server, org)
    const inOrg = new Anthropic({
      apiKey: (await Accounts.createApiKey(server, member)).key,
      baseURL: server.url,
      maxRetries: 0,
      defaultHeaders: { "huddle-organization": org.id }
    })
    fake.enqueue({ answer: "Tuesday", usage: { prompt_tokens: 50, completion_tokens: 1 } })
    await inOrg.messages.create({ model: "economy", max_tokens: 50, system: "Be brief.", messages: [{ role: "user", content: "When do we deploy?" }] })
    const messages = sent().messages
    expect(messages[0]).toEqual({ role: "system", content: "Be brief." })
    expect(messages[1]!.role).toBe("system")
    expect(messages[1]!.content).toContain("Our deploys go out on Tuesdays.")
    expect(messages[2]).toEqual({ role: "user", content: "When do we deploy?" })
  })
})
