/**
 * `POST /v1/responses` through the official `openai` SDK (`responses.create`, `responses.stream`)
 * against the in-process server and a fake OpenAI-compatible upstream: the response object, the
 * semantic stream the SDK accumulates, function tools both ways, structured output, exact credits,
 * and what is refused rather than ignored.
 */
import { Accounts, FakeOpenAi, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import OpenAI from "openai"
import { beforeEach, describe, expect, it } from "vitest"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.pricing: one credit per input token, two per output token.
const catalog = [WithFakeUpstream.model("fake-economy", "economy", { upstream_model: "economy-v1", max_output_tokens: 500 })]

/** The upstream calls `get_weather` for Paris, in pieces. */
const toolCallAnswer = FakeOpenAi.toolCallReply("get_weather", "{\"city\":\"Paris\"}")

const weather = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true
}

type UpstreamBody = { messages: Array<Record<string, unknown>> } & Record<string, unknown>

describe("the Responses API through the openai SDK", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let client: OpenAI

  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
  const sent = (i = 0) => fake.requests[i]!.body as UpstreamBody

  fakeUpstreamSuite(catalog, (started) => ({ fake, server } = started))
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
    client = new OpenAI({ apiKey: (await Accounts.createApiKey(server, user)).key, baseURL: `${server.url}/v1`, maxRetries: 0 })
  })

  it("creates a response with the instructions in front, the upstream's usage, and charges exactly that", async () => {
    const before = await balance()
    fake.enqueue({ answer: "The build is green.", usage: { prompt_tokens: 30, completion_tokens: 5 } })
    const { data: response, response: raw } = await client.responses.create({
      model: "fake-economy",
      instructions: "Be brief.",
      input: "Is the build green?"
    }).withResponse()

    expect(response).toMatchObject({
      object: "response",
      status: "completed",
      model: "fake-economy",
      usage: { input_tokens: 30, output_tokens: 5, total_tokens: 35 },
      store: false
    })
    expect(response.id).toMatch(/^resp_/)
    expect(response.output_text).toBe("The build is green.")
    expect(sent().messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Is the build green?" }])
    const charged = 30 + 5 * 2
    expect(raw.headers.get("huddle-credits-charged")).toBe(String(charged))
    expect(await balance()).toBe(before - charged)
  })

  it("takes a response's output back as the next turn's input, as Huddle asks (it keeps no responses)", async () => {
    fake.enqueue({ answer: "Green since noon.", usage: { prompt_tokens: 10, completion_tokens: 4 } })
    const first = await client.responses.create({ model: "fake-economy", input: "Is the build green?" })
    // The output items as they came, `annotations` and all: the SDKs' way to carry a conversation.
    fake.enqueue({ answer: "Yes, still.", usage: { prompt_tokens: 20, completion_tokens: 3 } })
    const input = [{ role: "user", content: "Is the build green?" }, ...first.output, { role: "user", content: "And now?" }]
    const second = await client.responses.create({ model: "fake-economy", input: input as never })
    expect(second.output_text).toBe("Yes, still.")
    expect(sent(1).messages).toEqual([
      { role: "user", content: "Is the build green?" },
      { role: "assistant", content: "Green since noon." },
      { role: "user", content: "And now?" }
    ])
  })

  it("streams the semantic events responses.stream() accumulates into the same response", async () => {
    fake.enqueue({ answer: "One two three four five", chunks: 3, usage: { prompt_tokens: 12, completion_tokens: 5 } })
    const stream = client.responses.stream({ model: "fake-economy", input: "Count to five" })
    const types: Array<string> = []
    const deltas: Array<string> = []
    for await (const event of stream) {
      types.push(event.type)
      if (event.type === "response.output_text.delta") deltas.push(event.delta)
    }
    const final = await stream.finalResponse()
    expect(final.output_text).toBe("One two three four five")
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 5 })
    expect(deltas.join("")).toBe("One two three four five")
    expect(types[0]).toBe("response.created")
    expect(types[1]).toBe("response.in_progress")
    expect(types.at(-1)).toBe("response.completed")
    expect(types.filter((type) => type === "response.output_item.added")).toHaveLength(1)
  })

  it("says a length cut-off is incomplete, with the reason", async () => {
    fake.enqueue({ answer: "Cut short", usage: { prompt_tokens: 8, completion_tokens: 2 }, finishReason: "length" })
    const response = await client.responses.create({ model: "fake-economy", input: "Tell me everything", max_output_tokens: 2 })
    expect(response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, max_output_tokens: 2 })
    expect(response.output_text).toBe("Cut short")
    expect(response.output.map((item) => (item as { status?: string }).status)).toEqual(["incomplete"])

    // Streamed, as OpenAI streams it: the item done as incomplete, and `response.incomplete` last.
    fake.enqueue({ answer: "Cut short", usage: { prompt_tokens: 8, completion_tokens: 2 }, finishReason: "length" })
    const stream = client.responses.stream({ model: "fake-economy", input: "Tell me everything", max_output_tokens: 2 })
    const events: Array<{ type: string; item?: { status?: string } }> = []
    for await (const event of stream) events.push(event as { type: string; item?: { status?: string } })
    expect(events.at(-1)!.type).toBe("response.incomplete")
    expect(events.filter((event) => event.type === "response.completed")).toEqual([])
    expect(events.find((event) => event.type === "response.output_item.done")!.item!.status).toBe("incomplete")
    const final = await stream.finalResponse()
    expect(final).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } })
    expect(final.output_text).toBe("Cut short")
  })

  it("ends a stream that fails after output with an error event the SDK raises, and charges only what was produced", async () => {
    const before = await balance()
    fake.enqueue({ answer: "one two three four five six", chunks: 6, dropAfterChunks: 2 })
    const stream = client.responses.stream({ model: "fake-economy", input: "Count" })
    const deltas: Array<string> = []
    const failure = await (async () => {
      for await (const event of stream) if (event.type === "response.output_text.delta") deltas.push(event.delta)
    })().then(() => undefined, (error: unknown) => error)
    expect(deltas.join("")).toBe("one two ")
    expect(failure).toBeInstanceOf(OpenAI.APIError)
    expect((failure as Error).message).toContain("fake-economy failed mid-answer")
    // Settled for the output it produced: something was charged, far less than the reserved worst case.
    const charged = before - await balance()
    expect(charged).toBeGreaterThan(0)
    expect(charged).toBeLessThan(100)
  })

  it("passes function tools and tool_choice upstream and answers with a function_call item", async () => {
    fake.enqueue(toolCallAnswer)
    const response = await client.responses.create({
      model: "fake-economy",
      input: "Weather in Paris?",
      tools: [weather],
      tool_choice: "required"
    })
    expect(sent().tools).toEqual([{
      type: "function",
      function: { name: "get_weather", description: "The weather in a city", parameters: weather.parameters, strict: true }
    }])
    expect(sent().tool_choice).toBe("required")
    expect(response.output).toEqual([
      expect.objectContaining({ type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}", status: "completed" })
    ])

    // The call's output goes back as a tool turn after the assistant turn that made the call.
    fake.enqueue({ answer: "Sunny in Paris.", usage: { prompt_tokens: 60, completion_tokens: 4 } })
    const followUp = await client.responses.create({
      model: "fake-economy",
      tools: [weather],
      input: [
        { role: "user", content: "Weather in Paris?" },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
        { type: "function_call_output", call_id: "call_1", output: "{\"sky\":\"sunny\"}" }
      ]
    })
    expect(followUp.output_text).toBe("Sunny in Paris.")
    expect(sent(1).messages).toEqual([
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
      { role: "tool", content: "{\"sky\":\"sunny\"}", tool_call_id: "call_1" }
    ])
  })

  it("sends text.format json_schema upstream as response_format", async () => {
    fake.enqueue({ answer: "{\"answer\":42}", usage: { prompt_tokens: 10, completion_tokens: 3 } })
    const schema = { type: "object", properties: { answer: { type: "number" } }, required: ["answer"], additionalProperties: false }
    const response = await client.responses.create({
      model: "fake-economy",
      input: "The answer?",
      text: { format: { type: "json_schema", name: "answer", schema, strict: true } }
    })
    expect(JSON.parse(response.output_text)).toEqual({ answer: 42 })
    expect(sent().response_format).toEqual({ type: "json_schema", json_schema: { name: "answer", schema, strict: true } })
  })

  it("refuses what Huddle does not honour, naming it, and charges nothing", async () => {
    const before = await balance()
    for (
      const [body, named] of [
        [{ store: true }, "store"],
        [{ previous_response_id: "resp_1" }, "previous_response_id"],
        [{ include: ["reasoning.encrypted_content"] }, "include"]
      ] as const
    ) {
      const error = await client.responses.create({ model: "fake-economy", input: "x", ...body } as never).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.BadRequestError)
      expect((error as Error).message).toContain(named)
    }
    // A part Huddle cannot take is named, not mistaken for another kind of item.
    const image = await client.responses.create({
      model: "fake-economy",
      input: [{ role: "user", content: [{ type: "input_text", text: "What is in this image?" }, { type: "input_image", image_url: "https://example.com/cat.png", detail: "auto" }] }]
    }).catch((e: unknown) => e)
    expect(image).toBeInstanceOf(OpenAI.BadRequestError)
    expect((image as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("input[0].content[1].type")
    expect((image as Error).message).toMatch(/^400 input\.0\.content\.1\.type: input_image content parts are not supported; only input_text and output_text are/)
    expect(fake.requests).toHaveLength(0)
    expect(await balance()).toBe(before)
  })
})
