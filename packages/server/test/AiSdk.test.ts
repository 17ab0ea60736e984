/**
 * The Vercel AI SDK (`ai` + `@ai-sdk/openai`), unmodified, against the in-process server: the
 * chat model (`openai.chat`, `/v1/chat/completions`) and the default model (`openai(id)`,
 * `/v1/responses`), in front of a fake OpenAI-compatible upstream that records what it receives,
 * and in front of the offline model; then tools and structured output against the offline model
 * and against a fake Anthropic upstream. Text, streams, usage, exact credits, structured output,
 * tool calls and errors as the SDK's own classes.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { Accounts, type FakeAnthropic, FakeOpenAi, TestServer, WithFakeUpstream } from "@huddle/testkit"
import { APICallError, generateObject, generateText, type LanguageModel, streamText, tool } from "ai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { anthropicSuite, claudeCharge, offlineEconomyCharge } from "./anthropicSuite.js"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.pricing: one credit per input token, two per output token.
const catalog = [WithFakeUpstream.model("fake-economy", "economy", { upstream_model: "economy-v1", max_output_tokens: 500 })]
const charge = (usage: { prompt_tokens: number; completion_tokens: number }) => usage.prompt_tokens + 2 * usage.completion_tokens

/** The upstream calls `get_weather` for Paris, in pieces (Huddle always streams from upstream). */
const toolCallUsage = { prompt_tokens: 40, completion_tokens: 9 }
const toolCallAnswer = FakeOpenAi.toolCallReply("get_weather", "{\"city\":\"Paris\"}", toolCallUsage)

// With one step (the default), the SDK runs `execute` and returns the call and its result.
const weatherTools = {
  get_weather: tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, sky: "sunny" })
  })
}

type UpstreamBody = { messages: Array<Record<string, unknown>> } & Record<string, unknown>

/** Both ways the SDK's OpenAI provider reaches the server. */
const apis = [
  { name: "the chat model (openai.chat, /v1/chat/completions)", model: (openai: ReturnType<typeof createOpenAI>, id: string) => openai.chat(id) },
  { name: "the default model (openai(id), /v1/responses)", model: (openai: ReturnType<typeof createOpenAI>, id: string) => openai(id) }
] as const

describe.each(apis)("the AI SDK with $name", ({ model: modelOf }) => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let model: LanguageModel

  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
  const sent = (i = 0) => fake.requests[i]!.body as UpstreamBody

  fakeUpstreamSuite(catalog, (started) => ({ fake, server } = started))
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
    const openai = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: (await Accounts.createApiKey(server, user)).key })
    model = modelOf(openai, "fake-economy")
  })

  it("generateText: the upstream's text and usage, and charges exactly that", async () => {
    const before = await balance()
    const usage = { prompt_tokens: 321, completion_tokens: 17 }
    fake.enqueue({ answer: "The build is green on main.", chunks: 4, usage })
    const result = await generateText({ model, system: "Be brief.", prompt: "Is the build green?", maxRetries: 0 })

    expect(result.text).toBe("The build is green on main.")
    expect(result.finishReason).toBe("stop")
    expect(result.usage).toMatchObject({ inputTokens: 321, outputTokens: 17, totalTokens: 338 })
    expect(result.response.headers?.["huddle-credits-charged"]).toBe(String(charge(usage)))
    expect(await balance()).toBe(before - charge(usage))
    expect(fake.requests).toHaveLength(1)
    expect(sent().model).toBe("economy-v1")
    expect(sent().messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Is the build green?" }])
  })

  it("streamText: the text in order, the final usage, and charges exactly that", async () => {
    const before = await balance()
    const usage = { prompt_tokens: 123, completion_tokens: 45 }
    fake.enqueue({ answer: "one two three four five", chunks: 5, usage })
    const result = streamText({ model, prompt: "Count to five", maxRetries: 0 })
    const deltas: Array<string> = []
    for await (const delta of result.textStream) deltas.push(delta)

    expect(deltas.join("")).toBe("one two three four five")
    // Streamed in pieces, not as one block at the end.
    expect(deltas.length).toBeGreaterThan(1)
    expect(await result.usage).toMatchObject({ inputTokens: 123, outputTokens: 45, totalTokens: 168 })
    expect(await result.finishReason).toBe("stop")
    expect(await balance()).toBe(before - charge(usage))
  })

  it("generateObject: the schema goes upstream as response_format json_schema, and the object comes back parsed", async () => {
    const before = await balance()
    const usage = { prompt_tokens: 30, completion_tokens: 12 }
    fake.enqueue({ answer: "{\"city\":\"Paris\",\"celsius\":18}", usage })
    const result = await generateObject({
      model,
      schema: z.object({ city: z.string(), celsius: z.number() }),
      prompt: "The weather in Paris, as JSON",
      maxRetries: 0
    })

    expect(result.object).toEqual({ city: "Paris", celsius: 18 })
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 12 })
    const format = sent().response_format as { type: string; json_schema: { schema: Record<string, unknown> } }
    expect(format.type).toBe("json_schema")
    expect(format.json_schema.schema).toMatchObject({
      type: "object",
      properties: { city: { type: "string" }, celsius: { type: "number" } },
      required: ["city", "celsius"]
    })
    expect(await balance()).toBe(before - charge(usage))
  })

  it("tools with toolChoice required: the tool and the choice go upstream, and the call arrives typed", async () => {
    const before = await balance()
    fake.enqueue(toolCallAnswer)
    const result = await generateText({
      model,
      prompt: "Weather in Paris?",
      tools: weatherTools,
      toolChoice: "required",
      maxRetries: 0
    })

    expect(result.finishReason).toBe("tool-calls")
    expect(result.toolCalls).toHaveLength(1)
    const call = result.toolCalls[0]!
    expect(call.toolName).toBe("get_weather")
    expect(call.toolCallId).toBe("call_1")
    // Parsed against the zod schema: an object, not the JSON text.
    expect(call.input).toEqual({ city: "Paris" })
    expect(result.toolResults.map((r) => r.output)).toEqual([{ city: "Paris", sky: "sunny" }])
    expect(result.usage).toMatchObject({ inputTokens: 40, outputTokens: 9 })

    expect(fake.requests).toHaveLength(1)
    expect(sent().tool_choice).toBe("required")
    const upstreamTools = sent().tools as Array<{ type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }>
    expect(upstreamTools).toHaveLength(1)
    expect(upstreamTools[0]).toMatchObject({
      type: "function",
      function: {
        name: "get_weather",
        description: "The weather in a city",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
      }
    })
    expect(await balance()).toBe(before - charge(toolCallUsage))
  })
})

describe.each(apis)("the AI SDK with $name, for a user who cannot pay", ({ model: modelOf }) => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let model: LanguageModel

  let stop: () => Promise<void>

  beforeAll(async () => {
    ;({ fake, server, stop } = await WithFakeUpstream.start(catalog, { starterCredits: 0 }))
    const user = await Accounts.signupAndLogin(server)
    const openai = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: (await Accounts.createApiKey(server, user)).key })
    model = modelOf(openai, "fake-economy")
  }, 60_000)
  afterAll(() => stop())

  it("raises APICallError with status 402, and the upstream receives nothing", async () => {
    fake.reset()
    const error = await generateText({ model, prompt: "x", maxRetries: 0 }).catch((e: unknown) => e)
    expect(APICallError.isInstance(error)).toBe(true)
    expect((error as APICallError).statusCode).toBe(402)
    expect((error as APICallError).responseBody).toContain("INSUFFICIENT_CREDITS")

    const errors: Array<unknown> = []
    const result = streamText({ model, prompt: "x", maxRetries: 0, onError: ({ error }) => void errors.push(error) })
    let text = ""
    for await (const delta of result.textStream) text += delta
    expect(text).toBe("")
    expect(errors).toHaveLength(1)
    expect(APICallError.isInstance(errors[0])).toBe(true)
    expect((errors[0] as APICallError).statusCode).toBe(402)

    expect(fake.requests).toHaveLength(0)
  })
})

describe.each(apis)("the AI SDK with $name, against the offline model", ({ model: modelOf }) => {
  let server: TestServer.TestServer
  let model: LanguageModel

  beforeAll(async () => {
    server = await TestServer.start()
    const user = await Accounts.signupAndLogin(server)
    const openai = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: (await Accounts.createApiKey(server, user)).key })
    model = modelOf(openai, "offline-economy")
  }, 60_000)
  afterAll(() => server.stop())

  it("generateText answers, saying it is offline", async () => {
    const result = await generateText({ model, prompt: "Is the build green?", maxRetries: 0 })
    expect(result.text).toContain("[offline]")
    expect(result.text).toContain("offline model")
    expect(result.usage.outputTokens).toBeGreaterThan(0)
  })
})

// The zod schemas of the tool and object cases below; what comes back is checked against them.
const weatherInput = z.object({ city: z.string().min(1), unit: z.enum(["celsius", "fahrenheit"]), days: z.number().int().min(1).max(7) })
const cityObject = z.object({
  name: z.string(),
  population: z.number().int().min(1),
  districts: z.array(z.object({ name: z.string() })).min(2)
})
// One step (the default): the SDK runs `execute` on the call and stops there.
const forecastTools = {
  get_weather: tool({ description: "The forecast for a city", inputSchema: weatherInput, execute: async ({ city }) => `Sunny in ${city}` })
}

describe.each(apis)("the AI SDK with $name, tools and structured output", ({ model: modelOf }) => {
  let anthropic: FakeAnthropic.FakeAnthropic
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let openai: ReturnType<typeof createOpenAI>

  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
  const charged = (result: { response: { headers?: Record<string, string> } }) => Number(result.response.headers?.["huddle-credits-charged"])

  anthropicSuite((started) => ({ anthropic, server } = started))
  beforeEach(async () => {
    anthropic.reset()
    user = await Accounts.signupAndLogin(server)
    openai = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: (await Accounts.createApiKey(server, user)).key })
  })

  describe("against the offline model", () => {
    it("generateText with toolChoice required: one typed call whose input validates against the zod schema, charged its usage", async () => {
      const before = await balance()
      const result = await generateText({
        model: modelOf(openai, "offline-economy"),
        prompt: "What will the weather be in Paris?",
        tools: forecastTools,
        toolChoice: "required",
        maxRetries: 0
      })

      expect(result.finishReason).toBe("tool-calls")
      expect(result.toolCalls).toHaveLength(1)
      const call = result.toolCalls[0]!
      expect(call.toolName).toBe("get_weather")
      expect(call.toolCallId).toMatch(/^call_offline_/)
      expect(weatherInput.safeParse(call.input).success).toBe(true)
      expect(result.toolResults.map((r) => r.output)).toEqual([`Sunny in ${(call.input as { city: string }).city}`])
      expect(result.text).toBe("")
      const usage = { input: result.usage.inputTokens!, output: result.usage.outputTokens! }
      expect(usage.output).toBeGreaterThan(0)
      expect(charged(result)).toBe(offlineEconomyCharge(usage))
      expect(await balance()).toBe(before - charged(result))
      expect(anthropic.requests).toHaveLength(0)
    })

    it("generateObject: a parsed object that validates, the same on a second identical call, each charged exactly", async () => {
      const before = await balance()
      const ask = () => generateObject({ model: modelOf(openai, "offline-economy"), schema: cityObject, prompt: "Describe Paris", maxRetries: 0 })
      const first = await ask()
      const second = await ask()

      expect(cityObject.safeParse(first.object).success).toBe(true)
      expect(first.object.districts.length).toBeGreaterThanOrEqual(2)
      expect(second.object).toEqual(first.object)
      expect(charged(first)).toBe(offlineEconomyCharge({ input: first.usage.inputTokens!, output: first.usage.outputTokens! }))
      expect(charged(second)).toBe(charged(first))
      expect(await balance()).toBe(before - charged(first) - charged(second))
    })
  })

  describe("against a fake Anthropic upstream", () => {
    it("generateText: the fake receives a Messages request with the system and the user content; the text comes back, charged exactly", async () => {
      const before = await balance()
      const usage = { input_tokens: 321, output_tokens: 17 }
      anthropic.enqueue({ answer: "The build is green on main.", chunks: 4, usage })
      const result = await generateText({ model: modelOf(openai, "claude-fake"), system: "Be brief.", prompt: "Is the build green?", maxRetries: 0 })

      expect(result.text).toBe("The build is green on main.")
      expect(result.finishReason).toBe("stop")
      expect(result.usage).toMatchObject({ inputTokens: 321, outputTokens: 17, totalTokens: 338 })
      expect(anthropic.requests).toHaveLength(1)
      expect(anthropic.requests[0]!.path).toBe("/v1/messages")
      const sent = anthropic.requests[0]!.body as Record<string, unknown>
      expect(sent).toMatchObject({ model: "claude-fake", stream: true, system: "Be brief." })
      expect(sent.messages).toEqual([{ role: "user", content: "Is the build green?" }])
      expect(charged(result)).toBe(claudeCharge(usage))
      expect(await balance()).toBe(before - claudeCharge(usage))
    })

    it("tools with toolChoice required: the fake receives tools with input_schema and tool_choice any; the call comes back typed", async () => {
      const before = await balance()
      const usage = { input_tokens: 400, output_tokens: 30 }
      const input = { city: "Paris", unit: "celsius", days: 2 }
      anthropic.enqueue({ toolUses: [{ id: "toolu_1", name: "get_weather", input }], usage })
      const result = await generateText({
        model: modelOf(openai, "claude-fake"),
        prompt: "What will the weather be in Paris?",
        tools: forecastTools,
        toolChoice: "required",
        maxRetries: 0
      })

      const sent = anthropic.requests[0]!.body as { tools: Array<Record<string, unknown>>; tool_choice: unknown }
      expect(sent.tool_choice).toEqual({ type: "any" })
      expect(sent.tools).toHaveLength(1)
      expect(sent.tools[0]).toMatchObject({
        name: "get_weather",
        description: "The forecast for a city",
        input_schema: {
          type: "object",
          properties: { city: { type: "string", minLength: 1 }, unit: { type: "string", enum: ["celsius", "fahrenheit"] }, days: { type: "integer" } },
          required: ["city", "unit", "days"]
        }
      })
      expect(result.finishReason).toBe("tool-calls")
      expect(result.toolCalls).toHaveLength(1)
      expect(result.toolCalls[0]).toMatchObject({ toolName: "get_weather", toolCallId: "toolu_1", input })
      expect(result.toolResults.map((r) => r.output)).toEqual(["Sunny in Paris"])
      expect(result.usage).toMatchObject({ inputTokens: 400, outputTokens: 30 })
      expect(await balance()).toBe(before - claudeCharge(usage))
    })

    it("generateObject: the fake receives the schema as a forced tool, and the object comes back parsed", async () => {
      const before = await balance()
      const usage = { input_tokens: 250, output_tokens: 40 }
      const answer = { name: "Paris", population: 2_100_000, districts: [{ name: "Marais" }, { name: "Montmartre" }] }
      anthropic.enqueue({ toolUses: [{ name: "response", input: answer }], usage })
      const result = await generateObject({ model: modelOf(openai, "claude-fake"), schema: cityObject, prompt: "Describe Paris", maxRetries: 0 })

      const sent = anthropic.requests[0]!.body as { tools: Array<Record<string, unknown>>; tool_choice: unknown }
      // The SDK names its json_schema format "response"; the forced tool carries that name.
      expect(sent.tool_choice).toEqual({ type: "tool", name: "response" })
      expect(sent.tools).toHaveLength(1)
      expect(sent.tools[0]).toMatchObject({
        name: "response",
        input_schema: { type: "object", properties: { name: { type: "string" }, population: { type: "integer" } }, required: ["name", "population", "districts"] }
      })
      expect(result.object).toEqual(answer)
      expect(result.usage).toMatchObject({ inputTokens: 250, outputTokens: 40 })
      expect(await balance()).toBe(before - claudeCharge(usage))
    })
  })
})
