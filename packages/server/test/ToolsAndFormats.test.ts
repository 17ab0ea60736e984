/**
 * Tool calling and structured output through the official `openai` SDK against the in-process
 * server: the offline model answers `tool_choice: "required"` with a call whose arguments
 * validate against the tool's schema and `json_schema` with JSON that validates; an Anthropic
 * upstream (the fake) receives the translated tools and tool choice, and its streamed
 * `tool_use` blocks and forced structured answer come back as OpenAI's tool calls and text.
 */
import { Accounts, type FakeAnthropic, type TestServer } from "@huddle/testkit"
import { Ajv } from "ajv"
import OpenAI from "openai"
import { beforeEach, describe, expect, it } from "vitest"
import { anthropicSuite } from "./anthropicSuite.js"

const weatherParameters = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 1 },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
    days: { type: "integer", minimum: 1, maximum: 7 },
    hourly: { type: "boolean" }
  },
  required: ["city", "unit", "days", "hourly"],
  additionalProperties: false
}
const weather = { type: "function" as const, function: { name: "get_weather", description: "The forecast for a city", parameters: weatherParameters } }

const citySchema = {
  type: "object",
  properties: {
    name: { type: "string" },
    population: { type: "integer", minimum: 1 },
    districts: { type: "array", items: { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false }, minItems: 2 }
  },
  required: ["name", "population", "districts"],
  additionalProperties: false
}

const question = [{ role: "user" as const, content: "What will the weather be in Paris?" }]

const validate = (schema: object, value: unknown) => {
  const check = new Ajv({ strict: false }).compile(schema)
  expect(check(value), JSON.stringify(check.errors)).toBe(true)
}

describe("tools and structured output", () => {
  let anthropic: FakeAnthropic.FakeAnthropic
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let client: OpenAI

  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number

  anthropicSuite((started) => ({ anthropic, server } = started))
  beforeEach(async () => {
    anthropic.reset()
    user = await Accounts.signupAndLogin(server)
    client = new OpenAI({ apiKey: (await Accounts.createApiKey(server, user)).key, baseURL: `${server.url}/v1`, maxRetries: 0 })
  })

  describe("the offline model", () => {
    it("answers tool_choice required with one call whose arguments validate, finish_reason tool_calls, and charges its usage", async () => {
      const before = await balance()
      const completion = await client.chat.completions.create({ model: "offline-premium", messages: question, tools: [weather], tool_choice: "required" })
      const choice = completion.choices[0]!
      expect(choice.finish_reason).toBe("tool_calls")
      expect(choice.message.tool_calls).toHaveLength(1)
      const call = choice.message.tool_calls![0]!
      expect(call.type).toBe("function")
      if (call.type !== "function") return
      expect(call.function.name).toBe("get_weather")
      validate(weatherParameters, JSON.parse(call.function.arguments))
      const usage = completion.usage!
      expect(usage.completion_tokens).toBeGreaterThan(0)
      // offline-premium: 4 and 8 credits per 1,000 input and output tokens, rounded up.
      expect(await balance()).toBe(before - Math.ceil((usage.prompt_tokens * 4 + usage.completion_tokens * 8) / 1000))
      expect(anthropic.requests).toHaveLength(0)
    })

    it("streams the same call as tool-call deltas, and a tool result round trip answers in text quoting it", async () => {
      const stream = await client.chat.completions.create({
        model: "offline-economy",
        messages: question,
        tools: [weather],
        tool_choice: { type: "function", function: { name: "get_weather" } },
        stream: true
      })
      const pieces: Array<OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall> = []
      const finishes: Array<string> = []
      for await (const chunk of stream) {
        for (const choice of chunk.choices) {
          pieces.push(...(choice.delta.tool_calls ?? []))
          if (choice.finish_reason) finishes.push(choice.finish_reason)
        }
      }
      expect(finishes).toEqual(["tool_calls"])
      const id = pieces[0]!.id!
      const args = pieces.map((piece) => piece.function?.arguments ?? "").join("")
      validate(weatherParameters, JSON.parse(args))

      const followUp = await client.chat.completions.create({
        model: "offline-economy",
        tools: [weather],
        messages: [
          ...question,
          { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: args } }] },
          { role: "tool", tool_call_id: id, content: "18°C and sunny" }
        ]
      })
      expect(followUp.choices[0]!.finish_reason).toBe("stop")
      expect(followUp.choices[0]!.message.content).toContain("- get_weather: 18°C and sunny")
    })

    it("answers response_format json_schema with JSON that validates, and json_object with a JSON object", async () => {
      const completion = await client.chat.completions.create({
        model: "offline-economy",
        messages: question,
        response_format: { type: "json_schema", json_schema: { name: "city", strict: true, schema: citySchema } }
      })
      validate(citySchema, JSON.parse(completion.choices[0]!.message.content!))
      const object = await client.chat.completions.create({ model: "offline-economy", messages: question, response_format: { type: "json_object" } })
      expect(JSON.parse(object.choices[0]!.message.content!)).toEqual({ answer: expect.stringContaining("What will the weather be in Paris?") })
    })

    it("refuses a named tool_choice that is not among the tools, naming tool_choice", async () => {
      const error = await client.chat.completions.create({
        model: "offline-economy",
        messages: question,
        tools: [weather],
        tool_choice: { type: "function", function: { name: "get_time" } }
      }).then(() => expect.unreachable("answered"), (error: unknown) => error)
      expect(error).toBeInstanceOf(OpenAI.BadRequestError)
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("tool_choice")
    })
  })

  describe("an Anthropic upstream", () => {
    it("receives the translated tools and tool choice, and its streamed tool_use comes back as tool_calls deltas, charged exactly", async () => {
      anthropic.enqueue({ toolUses: [{ id: "toolu_1", name: "get_weather", input: { city: "Paris", unit: "celsius", days: 2, hourly: false } }], usage: { input_tokens: 1000, output_tokens: 200 } })
      const before = await balance()
      const stream = await client.chat.completions.create({
        model: "claude-fake",
        messages: question,
        tools: [weather],
        tool_choice: "required",
        parallel_tool_calls: false,
        stream: true,
        stream_options: { include_usage: true }
      })
      const pieces: Array<OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall> = []
      const finishes: Array<string> = []
      for await (const chunk of stream) {
        for (const choice of chunk.choices) {
          pieces.push(...(choice.delta.tool_calls ?? []))
          if (choice.finish_reason) finishes.push(choice.finish_reason)
        }
      }
      const sent = anthropic.requests[0]!.body as Record<string, unknown>
      expect(sent.tools).toEqual([{ name: "get_weather", description: "The forecast for a city", input_schema: weatherParameters }])
      expect(sent.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true })
      expect(pieces[0]).toMatchObject({ index: 0, id: "toolu_1", function: { name: "get_weather" } })
      expect(pieces.length).toBeGreaterThan(2)
      expect(JSON.parse(pieces.map((piece) => piece.function?.arguments ?? "").join(""))).toEqual({ city: "Paris", unit: "celsius", days: 2, hourly: false })
      expect(finishes).toEqual(["tool_calls"])
      // claude-fake: 1,000 and 2,000 credits per 1,000 input and output tokens.
      expect(await balance()).toBe(before - (1000 + 2 * 200))
    })

    it("sends tool calls and results as tool_use and tool_result blocks", async () => {
      anthropic.enqueue({ answer: "Sunny." })
      await client.chat.completions.create({
        model: "claude-fake",
        tools: [weather],
        messages: [
          ...question,
          { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
          { role: "tool", tool_call_id: "toolu_1", content: "18°C" }
        ]
      })
      const sent = anthropic.requests[0]!.body as { messages: unknown }
      expect(sent.messages).toEqual([
        { role: "user", content: "What will the weather be in Paris?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18°C" }] }
      ])
    })

    it("answers a json_schema request through a forced tool, returning its input as text JSON with finish_reason stop", async () => {
      const answer = { name: "Paris", population: 2_100_000, districts: [{ name: "Marais" }, { name: "Montmartre" }] }
      anthropic.enqueue({ toolUses: [{ name: "city", input: answer }] })
      const completion = await client.chat.completions.create({
        model: "claude-fake",
        messages: question,
        response_format: { type: "json_schema", json_schema: { name: "city", strict: true, schema: citySchema } }
      })
      const sent = anthropic.requests[0]!.body as Record<string, unknown>
      expect(sent.tools).toEqual([{ name: "city", description: expect.any(String), input_schema: citySchema }])
      expect(sent.tool_choice).toEqual({ type: "tool", name: "city" })
      const choice = completion.choices[0]!
      expect(choice.finish_reason).toBe("stop")
      expect(choice.message.tool_calls ?? []).toEqual([])
      const parsed = JSON.parse(choice.message.content!)
      validate(citySchema, parsed)
      expect(parsed).toEqual(answer)
    })
  })
})
