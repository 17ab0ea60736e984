/**
 * LangChain JS (`@langchain/openai`'s `ChatOpenAI`), unmodified, against the in-process server in
 * front of a fake OpenAI-compatible upstream that records what it receives: invoke, stream,
 * structured output by JSON schema and by function calling, bound tools, exact credits, the
 * error a user who cannot pay sees, and the offline model; then bound tools and structured output
 * against the offline model and against a fake Anthropic upstream.
 */
import type { AIMessageChunk } from "@langchain/core/messages"
import { tool } from "@langchain/core/tools"
import { ChatOpenAI } from "@langchain/openai"
import { Accounts, type FakeAnthropic, FakeOpenAi, TestServer, WithFakeUpstream } from "@huddle/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { anthropicSuite, claudeCharge, offlineEconomyCharge } from "./anthropicSuite.js"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.pricing: one credit per input token, two per output token.
const catalog = [WithFakeUpstream.model("fake-economy", "economy", { upstream_model: "economy-v1", max_output_tokens: 500 })]
const charge = (usage: { prompt_tokens: number; completion_tokens: number }) => usage.prompt_tokens + 2 * usage.completion_tokens

/** The upstream calls the function `name` with `args`, in two pieces (Huddle always streams from upstream). */
const toolCallUsage = { prompt_tokens: 40, completion_tokens: 9 }
const toolCallAnswer = (name: string, args: string) => FakeOpenAi.toolCallReply(name, args, toolCallUsage)

const forecast = z.object({ city: z.string(), celsius: z.number() })

type UpstreamBody = { messages: Array<Record<string, unknown>> } & Record<string, unknown>

describe("LangChain's ChatOpenAI", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let chat: ChatOpenAI

  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
  const sent = (i = 0) => fake.requests[i]!.body as UpstreamBody

  fakeUpstreamSuite(catalog, (started) => ({ fake, server } = started))
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
    chat = new ChatOpenAI({
      model: "fake-economy",
      apiKey: (await Accounts.createApiKey(server, user)).key,
      configuration: { baseURL: `${server.url}/v1` },
      maxRetries: 0
    })
  })

  it("invoke: the upstream's answer and usage, and charges exactly that", async () => {
    const before = await balance()
    const usage = { prompt_tokens: 321, completion_tokens: 17 }
    fake.enqueue({ answer: "The build is green on main.", chunks: 4, usage })
    const message = await chat.invoke([["system", "Be brief."], ["human", "Is the build green?"]])

    expect(message.content).toBe("The build is green on main.")
    expect(message.usage_metadata).toMatchObject({ input_tokens: 321, output_tokens: 17, total_tokens: 338 })
    expect(message.response_metadata).toMatchObject({ finish_reason: "stop", model_name: "fake-economy" })
    expect(await balance()).toBe(before - charge(usage))
    expect(fake.requests).toHaveLength(1)
    expect(sent().model).toBe("economy-v1")
    expect(sent().messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Is the build green?" }])
  })

  it("stream: the chunks concatenate to the upstream's answer, with the usage, and charges exactly that", async () => {
    const before = await balance()
    const usage = { prompt_tokens: 123, completion_tokens: 45 }
    fake.enqueue({ answer: "one two three four five", chunks: 5, usage })
    const pieces: Array<string> = []
    let whole: AIMessageChunk | undefined
    for await (const piece of await chat.stream("Count to five")) {
      pieces.push(typeof piece.content === "string" ? piece.content : JSON.stringify(piece.content))
      whole = whole === undefined ? piece : whole.concat(piece)
    }

    expect(pieces.join("")).toBe("one two three four five")
    expect(pieces.filter((piece) => piece.length > 0).length).toBeGreaterThan(1)
    // LangChain's own aggregation of the chunks, usage included.
    expect(whole?.content).toBe("one two three four five")
    expect(whole?.usage_metadata).toMatchObject({ input_tokens: 123, output_tokens: 45, total_tokens: 168 })
    expect(await balance()).toBe(before - charge(usage))
  })

  it("withStructuredOutput (default method): the schema goes upstream as response_format json_schema, and the object comes back parsed", async () => {
    const before = await balance()
    const usage = { prompt_tokens: 30, completion_tokens: 12 }
    fake.enqueue({ answer: "{\"city\":\"Paris\",\"celsius\":18}", usage })
    const result = await chat.withStructuredOutput(forecast).invoke("The weather in Paris")

    expect(result).toEqual({ city: "Paris", celsius: 18 })
    const format = sent().response_format as { type: string; json_schema: { name: string; schema: Record<string, unknown> } }
    expect(format.type).toBe("json_schema")
    expect(format.json_schema.name).toBe("extract")
    expect(format.json_schema.schema).toMatchObject({
      type: "object",
      properties: { city: { type: "string" }, celsius: { type: "number" } },
      required: ["city", "celsius"]
    })
    expect(await balance()).toBe(before - charge(usage))
  })

  it("withStructuredOutput (functionCalling): the schema goes upstream as a forced tool, and the call's arguments come back parsed", async () => {
    const before = await balance()
    fake.enqueue(toolCallAnswer("extract", "{\"city\":\"Paris\",\"celsius\":18}"))
    const result = await chat.withStructuredOutput(forecast, { method: "functionCalling" }).invoke("The weather in Paris")

    expect(result).toEqual({ city: "Paris", celsius: 18 })
    expect(sent().tool_choice).toEqual({ type: "function", function: { name: "extract" } })
    const tools = sent().tools as Array<{ type: string; function: { name: string; parameters: Record<string, unknown> } }>
    expect(tools).toHaveLength(1)
    expect(tools[0]).toMatchObject({
      type: "function",
      function: { name: "extract", parameters: { type: "object", properties: { city: { type: "string" }, celsius: { type: "number" } } } }
    })
    expect(await balance()).toBe(before - charge(toolCallUsage))
  })

  it("bindTools: the tool goes upstream and invoke returns the tool_calls", async () => {
    const before = await balance()
    fake.enqueue(toolCallAnswer("get_weather", "{\"city\":\"Paris\"}"))
    const getWeather = tool(async ({ city }) => `Sunny in ${city}`, {
      name: "get_weather",
      description: "The weather in a city",
      schema: z.object({ city: z.string() })
    })
    const message = await chat.bindTools([getWeather]).invoke("Weather in Paris?")

    expect(message.tool_calls).toEqual([{ name: "get_weather", args: { city: "Paris" }, id: "call_1", type: "tool_call" }])
    expect(message.usage_metadata).toMatchObject({ input_tokens: 40, output_tokens: 9 })
    expect(sent().tools).toEqual([
      expect.objectContaining({
        type: "function",
        function: expect.objectContaining({
          name: "get_weather",
          description: "The weather in a city",
          parameters: expect.objectContaining({ type: "object", properties: { city: { type: "string" } }, required: ["city"] })
        })
      })
    ])
    expect(await balance()).toBe(before - charge(toolCallUsage))
  })
})

describe("LangChain's ChatOpenAI, for a user who cannot pay", () => {
  let started: WithFakeUpstream.WithFakeUpstream
  let chat: ChatOpenAI

  beforeAll(async () => {
    started = await WithFakeUpstream.start(catalog, { starterCredits: 0 })
    const user = await Accounts.signupAndLogin(started.server)
    chat = new ChatOpenAI({
      model: "fake-economy",
      apiKey: (await Accounts.createApiKey(started.server, user)).key,
      configuration: { baseURL: `${started.server.url}/v1` },
      maxRetries: 0
    })
  }, 60_000)
  afterAll(() => started.stop())

  it("raises an error naming INSUFFICIENT_CREDITS, invoking or streaming, and the upstream receives nothing", async () => {
    // The openai SDK's APIError, as LangChain rethrows it: the code is Huddle's, the type OpenAI's.
    const expected = { status: 402, code: "INSUFFICIENT_CREDITS", type: "insufficient_quota" }
    const invoked = await chat.invoke("x").catch((e: unknown) => e)
    expect(invoked).toBeInstanceOf(Error)
    expect(invoked).toMatchObject(expected)

    const streamed = await (async () => {
      for await (const _ of await chat.stream("x")) { /* nothing arrives */ }
    })().then(() => undefined, (e: unknown) => e)
    expect(streamed).toBeInstanceOf(Error)
    expect(streamed).toMatchObject(expected)

    expect(started.fake.requests).toHaveLength(0)
  })
})

describe("LangChain's ChatOpenAI, against the offline model", () => {
  let server: TestServer.TestServer
  let chat: ChatOpenAI

  beforeAll(async () => {
    server = await TestServer.start()
    const user = await Accounts.signupAndLogin(server)
    chat = new ChatOpenAI({
      model: "offline-economy",
      apiKey: (await Accounts.createApiKey(server, user)).key,
      configuration: { baseURL: `${server.url}/v1` },
      maxRetries: 0
    })
  }, 60_000)
  afterAll(() => server.stop())

  it("invoke answers, saying it is offline", async () => {
    const message = await chat.invoke("Is the build green?")
    expect(message.content).toContain("[offline]")
    // The typing of usage_metadata on invoke's message is `never` in this @langchain/core version.
    const usage = message.usage_metadata as { readonly output_tokens: number } | undefined
    expect(usage?.output_tokens).toBeGreaterThan(0)
  })
})

// What the tool and structured-output cases below ask for; what comes back is checked against them.
const weatherInput = z.object({ city: z.string().min(1), unit: z.enum(["celsius", "fahrenheit"]), days: z.number().int().min(1).max(7) })
const cityObject = z.object({
  name: z.string(),
  population: z.number().int().min(1),
  districts: z.array(z.object({ name: z.string() })).min(2)
})
const getForecast = tool(async ({ city }) => `Sunny in ${city}`, { name: "get_weather", description: "The forecast for a city", schema: weatherInput })

type UsageMetadata = { readonly input_tokens: number; readonly output_tokens: number }
// The typing of usage_metadata on invoke's message is `never` in this @langchain/core version.
const usageOf = (message: object) => (message as { usage_metadata?: unknown }).usage_metadata as UsageMetadata

describe("LangChain's ChatOpenAI, tools and structured output", () => {
  let anthropic: FakeAnthropic.FakeAnthropic
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let chatWith: (model: string) => ChatOpenAI

  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
  const sent = (i = 0) => anthropic.requests[i]!.body as { tools: Array<Record<string, unknown>> } & Record<string, unknown>

  anthropicSuite((started) => ({ anthropic, server } = started))
  beforeEach(async () => {
    anthropic.reset()
    user = await Accounts.signupAndLogin(server)
    const apiKey = (await Accounts.createApiKey(server, user)).key
    chatWith = (model) => new ChatOpenAI({ model, apiKey, configuration: { baseURL: `${server.url}/v1` }, maxRetries: 0 })
  })

  describe("against the offline model", () => {
    it("bindTools with tool_choice required: one tool call whose args validate against the zod schema, charged its usage", async () => {
      const before = await balance()
      const message = await chatWith("offline-economy").bindTools([getForecast], { tool_choice: "required" }).invoke("What will the weather be in Paris?")

      expect(message.tool_calls).toHaveLength(1)
      const call = message.tool_calls![0]!
      expect(call).toMatchObject({ name: "get_weather", type: "tool_call", id: expect.stringMatching(/^call_offline_/) })
      expect(weatherInput.safeParse(call.args).success).toBe(true)
      expect(message.response_metadata).toMatchObject({ finish_reason: "tool_calls" })
      const usage = usageOf(message)
      expect(usage.output_tokens).toBeGreaterThan(0)
      expect(await balance()).toBe(before - offlineEconomyCharge({ input: usage.input_tokens, output: usage.output_tokens }))
      expect(anthropic.requests).toHaveLength(0)
    })

    it.each(["jsonSchema", "functionCalling"] as const)("withStructuredOutput (%s): a parsed object that validates, the same twice, each charged exactly", async (method) => {
      const before = await balance()
      const structured = chatWith("offline-economy").withStructuredOutput(cityObject, { method, includeRaw: true })
      const first = await structured.invoke("Describe Paris")
      const second = await structured.invoke("Describe Paris")

      expect(first.parsed).not.toBeNull()
      expect(cityObject.safeParse(first.parsed).success).toBe(true)
      expect(second.parsed).toEqual(first.parsed)
      const charges = [first, second].map(({ raw }) => {
        const usage = usageOf(raw)
        return offlineEconomyCharge({ input: usage.input_tokens, output: usage.output_tokens })
      })
      expect(await balance()).toBe(before - charges[0]! - charges[1]!)
    })
  })

  describe("against a fake Anthropic upstream", () => {
    it("invoke: the fake receives a Messages request with the system and the user content; the answer comes back, charged exactly", async () => {
      const before = await balance()
      const usage = { input_tokens: 321, output_tokens: 17 }
      anthropic.enqueue({ answer: "The build is green on main.", chunks: 4, usage })
      const message = await chatWith("claude-fake").invoke([["system", "Be brief."], ["human", "Is the build green?"]])

      expect(message.content).toBe("The build is green on main.")
      expect(usageOf(message)).toMatchObject({ input_tokens: 321, output_tokens: 17 })
      expect(anthropic.requests).toHaveLength(1)
      expect(anthropic.requests[0]!.path).toBe("/v1/messages")
      expect(sent()).toMatchObject({ model: "claude-fake", stream: true, system: "Be brief." })
      expect(sent().messages).toEqual([{ role: "user", content: "Is the build green?" }])
      expect(await balance()).toBe(before - claudeCharge(usage))
    })

    it("bindTools with tool_choice required: the fake receives tools with input_schema and tool_choice any; invoke returns the tool_calls", async () => {
      const before = await balance()
      const usage = { input_tokens: 400, output_tokens: 30 }
      const input = { city: "Paris", unit: "celsius", days: 2 }
      anthropic.enqueue({ toolUses: [{ id: "toolu_1", name: "get_weather", input }], usage })
      const message = await chatWith("claude-fake").bindTools([getForecast], { tool_choice: "required" }).invoke("What will the weather be in Paris?")

      expect(sent().tool_choice).toEqual({ type: "any" })
      expect(sent().tools).toHaveLength(1)
      expect(sent().tools[0]).toMatchObject({
        name: "get_weather",
        description: "The forecast for a city",
        input_schema: {
          type: "object",
          properties: { city: { type: "string", minLength: 1 }, unit: { type: "string", enum: ["celsius", "fahrenheit"] }, days: { type: "integer" } },
          required: ["city", "unit", "days"]
        }
      })
      expect(message.tool_calls).toEqual([{ name: "get_weather", args: input, id: "toolu_1", type: "tool_call" }])
      expect(usageOf(message)).toMatchObject({ input_tokens: 400, output_tokens: 30 })
      expect(await balance()).toBe(before - claudeCharge(usage))
    })

    it.each([
      // The default (json_schema) becomes a forced tool named after the schema, answered as text;
      // functionCalling names the tool itself, and the call comes back as a tool call.
      { method: "jsonSchema" as const, toolCalls: 0 },
      { method: "functionCalling" as const, toolCalls: 1 }
    ])("withStructuredOutput ($method): the fake receives the forced tool `extract`, and the object comes back parsed", async ({ method, toolCalls }) => {
      const before = await balance()
      const usage = { input_tokens: 250, output_tokens: 40 }
      const answer = { name: "Paris", population: 2_100_000, districts: [{ name: "Marais" }, { name: "Montmartre" }] }
      anthropic.enqueue({ toolUses: [{ name: "extract", input: answer }], usage })
      const { parsed, raw } = await chatWith("claude-fake").withStructuredOutput(cityObject, { method, includeRaw: true }).invoke("Describe Paris")

      expect(sent().tool_choice).toEqual({ type: "tool", name: "extract" })
      expect(sent().tools).toHaveLength(1)
      expect(sent().tools[0]).toMatchObject({
        name: "extract",
        input_schema: { type: "object", properties: { name: { type: "string" }, population: { type: "integer" } }, required: ["name", "population", "districts"] }
      })
      expect(parsed).toEqual(answer)
      expect((raw as { tool_calls?: Array<unknown> }).tool_calls ?? []).toHaveLength(toolCalls)
      expect(await balance()).toBe(before - claudeCharge(usage))
    })
  })
})
