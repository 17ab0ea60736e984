/**
 * The Vercel AI SDK (`ai` + `@ai-sdk/openai`), unmodified, against the in-process server: the
 * chat model (`openai.chat`, `/v1/chat/completions`) and the default model (`openai(id)`,
 * `/v1/responses`), in front of a fake OpenAI-compatible upstream that records what it receives,
 * and in front of the offline model. Text, streams, usage, exact credits, structured output,
 * tool calls and errors as the SDK's own classes.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { Accounts, type FakeOpenAi, TestServer, WithFakeUpstream } from "@huddle/testkit"
import { APICallError, generateObject, generateText, type LanguageModel, streamText, tool } from "ai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.price: one credit per input token, two per output token.
const catalog = [WithFakeUpstream.model("fake-economy", "economy", { upstream_model: "economy-v1", max_output_tokens: 500 })]
const charge = (usage: { prompt_tokens: number; completion_tokens: number }) => usage.prompt_tokens + 2 * usage.completion_tokens

const sse = (chunks: ReadonlyArray<unknown>) => ({
  status: 200,
  headers: { "content-type": "text/event-stream" },
  body: chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n"
})
const chunk = (delta: unknown, finish_reason: string | null = null) => ({
  id: "up",
  object: "chat.completion.chunk",
  created: 1,
  model: "x",
  choices: [{ index: 0, delta, finish_reason }]
})
/** The upstream calls `get_weather` for Paris, in pieces (Huddle always streams from upstream). */
const toolCallUsage = { prompt_tokens: 40, completion_tokens: 9 }
const toolCallAnswer = sse([
  chunk({ role: "assistant", content: null }),
  chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"city\":" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: "\"Paris\"}" } }] }),
  chunk({}, "tool_calls"),
  { id: "up", object: "chat.completion.chunk", created: 1, model: "x", choices: [], usage: { ...toolCallUsage, total_tokens: 49 } }
])

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
