import { describe, expect, it } from "@effect/vitest"
import * as AnthropicProvider from "@huddle/adapters/models/AnthropicProvider"
import * as AnthropicWire from "@huddle/adapters/models/AnthropicWire"
import { CatalogModel, type ModelChunk, type ModelRequest } from "@huddle/domain/models/Model"
import type { Provider } from "@huddle/domain/models/ModelProviders"
import * as FakeAnthropic from "@huddle/testkit/FakeAnthropic"
import { Chunk, Duration, Effect, Either, Fiber, Redacted, type Scope, Stream } from "effect"

const secret = "sk-ant-test-0123456789abcdef"

const model = new CatalogModel({
  id: "claude-test",
  tier: "standard",
  provider: "anthropic",
  upstream_model: "claude-upstream-name",
  pricing: { input: 3000, output: 15_000 },
  context_window: 200_000,
  max_output_tokens: 1024
})

const request: ModelRequest = {
  model,
  messages: [
    { role: "system", content: "You are terse." },
    { role: "system", content: "Remembered facts:\n- the team ships on Fridays" },
    { role: "user", content: "When do we ship?" },
    { role: "assistant", content: "Fridays." },
    { role: "user", content: "Are you sure?" }
  ],
  temperature: 1.5,
  maxOutputTokens: 128
}

interface Setup {
  readonly fake: FakeAnthropic.FakeAnthropic
  readonly provider: Provider
}

const setup = (options: { readonly timeout?: Duration.DurationInput; readonly apiKey?: string } = {}): Effect.Effect<Setup, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fake = yield* FakeAnthropic.scoped({ apiKey: secret })
    const provider = yield* AnthropicProvider.make({
      baseUrl: fake.url,
      apiKey: Redacted.make(options.apiKey ?? secret),
      timeout: options.timeout ?? "2 seconds"
    })
    return { fake, provider }
  })

const collect = (provider: Provider) => Stream.runCollect(provider.stream(request)).pipe(Effect.map(Chunk.toReadonlyArray))

const untilFailure = (provider: Provider, req: ModelRequest = request) =>
  provider.stream(req).pipe(
    Stream.either,
    Stream.runCollect,
    Effect.map((items) => {
      const all = Chunk.toReadonlyArray(items)
      return {
        chunks: all.flatMap((item) => (Either.isRight(item) ? [item.right] : [])),
        failure: all.flatMap((item) => (Either.isLeft(item) ? [item.left] : []))[0]
      }
    })
  )

const textOf = (chunks: ReadonlyArray<ModelChunk>) => chunks.flatMap((chunk) => (chunk._tag === "Delta" ? [chunk.text] : [])).join("")

describe("AnthropicProvider", () => {
  it.scopedLive("streams the text deltas, then one Usage combining input and output, then the stop reason", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const answer = "Yes: we ship on Fridays, every week."
      fake.enqueue({ answer, chunks: 4, usage: { input_tokens: 42, output_tokens: 11 }, stopReason: "end_turn" })
      const chunks = yield* collect(provider)
      expect(chunks.map((chunk) => chunk._tag)).toEqual(["Delta", "Delta", "Delta", "Delta", "Usage", "Finish"])
      expect(textOf(chunks)).toBe(answer)
      expect(chunks[4]).toMatchObject({ _tag: "Usage", usage: { input_tokens: 42, output_tokens: 11 } })
      expect(chunks[5]).toEqual({ _tag: "Finish", reason: "end_turn" })
    }))

  it.scopedLive("reports cache reads and writes apart from the uncached input", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({ answer: "cached", usage: { input_tokens: 9, output_tokens: 3, cache_creation_input_tokens: 120, cache_read_input_tokens: 2048 } })
      const chunks = yield* collect(provider)
      expect(chunks.find((chunk) => chunk._tag === "Usage")).toEqual({
        _tag: "Usage",
        usage: { input_tokens: 9, output_tokens: 3, cache_read_tokens: 2048, cache_write_tokens: 120 }
      })
    }))

  it.scopedLive("sends system messages as the top-level system field, with the key and version headers", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      yield* collect(provider)
      const [received] = fake.requests
      expect(received?.method).toBe("POST")
      expect(received?.path).toBe("/v1/messages")
      expect(received?.headers["x-api-key"]).toBe(secret)
      expect(received?.headers["anthropic-version"]).toBe("2023-06-01")
      expect(received?.headers.authorization).toBeUndefined()
      expect(received?.body).toEqual({
        model: "claude-upstream-name",
        max_tokens: 128,
        stream: true,
        system: "You are terse.\n\nRemembered facts:\n- the team ships on Fridays",
        messages: [
          { role: "user", content: "When do we ship?" },
          { role: "assistant", content: "Fridays." },
          { role: "user", content: "Are you sure?" }
        ],
        // Anthropic's range ends at 1.
        temperature: 1
      })
    }))

  it.scopedLive("reports max_tokens as the finish reason, and tolerates a stream without message_stop", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({ answer: "cut short", stopReason: "max_tokens", omitMessageStop: true, usage: { input_tokens: 5, output_tokens: 2 } })
      const chunks = yield* collect(provider)
      expect(textOf(chunks)).toBe("cut short")
      expect(chunks.slice(-2)).toMatchObject([{ _tag: "Usage", usage: { input_tokens: 5, output_tokens: 2 } }, { _tag: "Finish", reason: "max_tokens" }])
    }))

  it.scopedLive("error events in the stream fail it by their type", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(
        { answer: "one two three", errorAfterChunks: { after: 1, type: "overloaded_error", message: "Overloaded" } },
        { answer: "one two three", errorAfterChunks: { after: 0, type: "invalid_request_error", message: "prompt is too long" } },
        { answer: "one two three", errorAfterChunks: { after: 0, type: "rate_limit_error", message: "slow down" } }
      )
      const overloaded = yield* untilFailure(provider)
      expect(textOf(overloaded.chunks)).toBe("one ")
      expect(overloaded.failure).toMatchObject({ reason: "server_error", retryable: true })
      expect(overloaded.failure?.message).toContain("Overloaded")
      expect((yield* untilFailure(provider)).failure).toMatchObject({ reason: "rejected", retryable: false })
      expect((yield* untilFailure(provider)).failure).toMatchObject({ reason: "rate_limited", retryable: true })
    }))

  it.scopedLive("maps statuses: 429 with retry-after, 529 and 500 retryable, 400 not", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(FakeAnthropic.rateLimited("12"), FakeAnthropic.overloaded(529), FakeAnthropic.overloaded(500), FakeAnthropic.badRequest())
      const limited = yield* Effect.flip(collect(provider))
      expect(limited).toMatchObject({ provider: "anthropic", model: "claude-test", reason: "rate_limited", retryable: true, status: 429 })
      expect(limited.retryAfter && Duration.toMillis(limited.retryAfter)).toBe(12_000)
      expect(yield* Effect.flip(collect(provider))).toMatchObject({ reason: "server_error", retryable: true, status: 529 })
      expect(yield* Effect.flip(collect(provider))).toMatchObject({ reason: "server_error", retryable: true, status: 500 })
      const rejected = yield* Effect.flip(collect(provider))
      expect(rejected).toMatchObject({ reason: "rejected", retryable: false, status: 400 })
      expect(rejected.message).toContain("messages: field required")
    }))

  it.scopedLive("a wrong key: rejected, and the key never appears in the failure", () =>
    Effect.gen(function*() {
      const wrong = "sk-ant-wrong-abcdef0123456789"
      const { fake, provider } = yield* setup({ apiKey: wrong })
      const failure = yield* Effect.flip(collect(provider))
      expect(fake.requests[0]?.headers["x-api-key"]).toBe(wrong)
      expect(failure).toMatchObject({ reason: "rejected", status: 401 })
      expect(failure.message).toContain("invalid x-api-key")
      expect(JSON.stringify(failure)).not.toContain(wrong)
      expect(String(failure)).not.toContain(wrong)
    }))

  it.scopedLive("a dropped connection: a connection failure after the deltas already delivered", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({ answer: "alpha beta gamma delta", dropAfterChunks: 3 })
      const { chunks, failure } = yield* untilFailure(provider)
      expect(textOf(chunks)).toBe("alpha beta gamma ")
      expect(failure).toMatchObject({ reason: "connection", retryable: true })
    }))

  it.scopedLive("malformed JSON in an event: bad_response", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({ answer: "alpha beta", malformedAfterChunks: 1 })
      const { chunks, failure } = yield* untilFailure(provider)
      expect(textOf(chunks)).toBe("alpha ")
      expect(failure).toMatchObject({ reason: "bad_response", retryable: false })
    }))

  it.scopedLive("times out on a slow first byte", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup({ timeout: "200 millis" })
      fake.enqueue({ firstByteDelayMs: 3000 })
      expect(yield* Effect.flip(collect(provider))).toMatchObject({ reason: "timeout", retryable: true })
      yield* Effect.promise(() => fake.waitForDisconnects(1, 1000))
    }))

  // The call's deadline (ModelRequest.deadline, by the wall clock) comes long before the silence
  // limit: the provider must give up then, not wait for its timeout. The margins are wide (a
  // loaded machine): an upstream that is waited for past the deadline takes 10 s.
  it.scopedLive("stops waiting for a slow first byte at the call's deadline, long before its silence limit, and closes the connection", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup({ timeout: "8 seconds" })
      fake.enqueue({ answer: "too late", firstByteDelayMs: 10_000 })
      const started = Date.now()
      const { chunks, failure } = yield* untilFailure(provider, { ...request, deadline: started + 400 })
      const took = Date.now() - started
      expect(chunks).toEqual([])
      expect(failure).toMatchObject({ reason: "timeout", message: expect.stringContaining("deadline") })
      expect(took).toBeGreaterThanOrEqual(390)
      expect(took).toBeLessThan(5_000)
      yield* Effect.promise(() => fake.waitForDisconnects(1, 2_000))
    }))

  it.scopedLive("stops waiting for a silent stream at the call's deadline, long before its silence limit, and closes the connection", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup({ timeout: "8 seconds" })
      // The headers and message_start at once, then a delta every 10 s.
      fake.enqueue({ answer: "slow and steady", chunks: 3, chunkDelayMs: 10_000 })
      const started = Date.now()
      const { chunks, failure } = yield* untilFailure(provider, { ...request, deadline: started + 400 })
      const took = Date.now() - started
      expect(textOf(chunks)).toBe("")
      expect(failure).toMatchObject({ reason: "timeout", message: expect.stringContaining("deadline") })
      expect(took).toBeGreaterThanOrEqual(390)
      expect(took).toBeLessThan(5_000)
      const [disconnect] = yield* Effect.promise(() => fake.waitForDisconnects(1, 2_000))
      expect(disconnect?.chunksWritten).toBe(0)
    }))

  it.scopedLive("an answer still streaming at the deadline: what arrived before it is handed on, then the call fails", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup({ timeout: "8 seconds" })
      const words = Array.from({ length: 20 }, (_, i) => `w${i} `)
      // A delta every 200 ms: about 7 of the 20 arrive within the deadline.
      fake.enqueue({ answer: words.join(""), chunks: 20, chunkDelayMs: 200 })
      const started = Date.now()
      const { chunks, failure } = yield* untilFailure(provider, { ...request, deadline: started + 1_500 })
      const took = Date.now() - started
      const text = textOf(chunks)
      expect(text.length).toBeGreaterThan(0)
      expect(words.join("").startsWith(text)).toBe(true)
      expect(text).not.toBe(words.join(""))
      expect(failure).toMatchObject({ reason: "timeout", message: expect.stringContaining("deadline") })
      expect(took).toBeGreaterThanOrEqual(1_490)
      expect(took).toBeLessThan(3_900)
    }))

  it.scopedLive("interruption closes the connection: the upstream sees the client leave", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({ answer: "one two three four five six seven eight nine ten", chunkDelayMs: 100 })
      const fiber = yield* Effect.fork(provider.stream(request).pipe(Stream.runDrain))
      yield* Effect.promise(() => fake.waitForRequests(1, 1000))
      yield* Effect.sleep("150 millis")
      yield* Fiber.interrupt(fiber)
      const [disconnect] = yield* Effect.promise(() => fake.waitForDisconnects(1, 1000))
      expect(disconnect?.chunksWritten).toBeLessThan(10)
    }))
})

describe("AnthropicProvider with tools and response formats", () => {
  const weather = {
    type: "function" as const,
    function: {
      name: "get_weather",
      description: "The weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
    }
  }
  const clock = { type: "function" as const, function: { name: "get_time" } }
  const ask = (options: ModelRequest["options"]): ModelRequest => ({ model, messages: [{ role: "user", content: "Weather in Paris?" }], maxOutputTokens: 64, options })
  const bodyOf = (fake: FakeAnthropic.FakeAnthropic) => fake.requests[0]?.body as Record<string, unknown>

  it("translates tools and each tool_choice, with disable_parallel_tool_use for parallel_tool_calls: false", () => {
    const tools = [weather, clock]
    expect(AnthropicWire.toolsOf({ tools, tool_choice: "auto" }).body).toEqual({
      tools: [
        { name: "get_weather", description: "The weather in a city", input_schema: weather.function.parameters },
        { name: "get_time", input_schema: { type: "object", properties: {} } }
      ],
      tool_choice: { type: "auto" }
    })
    expect(AnthropicWire.toolsOf({ tools, tool_choice: "required" }).body.tool_choice).toEqual({ type: "any" })
    expect(AnthropicWire.toolsOf({ tools, tool_choice: "none" }).body.tool_choice).toEqual({ type: "none" })
    expect(AnthropicWire.toolsOf({ tools, tool_choice: { type: "function", function: { name: "get_time" } }, parallel_tool_calls: false }).body.tool_choice)
      .toEqual({ type: "tool", name: "get_time", disable_parallel_tool_use: true })
    expect(AnthropicWire.toolsOf({ tools, parallel_tool_calls: false }).body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true })
    expect(AnthropicWire.toolsOf({ tools }).body).not.toHaveProperty("tool_choice")
    expect(AnthropicWire.toolsOf({ tool_choice: "auto" }).body).toEqual({})
  })

  it("translates a json_schema format into one forced tool named after the schema", () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
    const translated = AnthropicWire.toolsOf({ response_format: { type: "json_schema", json_schema: { name: "city answer", strict: true, schema } } })
    expect(translated.structuredTool).toBe("city_answer")
    expect(translated.body).toEqual({
      tools: [{ name: "city_answer", description: expect.any(String), input_schema: schema }],
      tool_choice: { type: "tool", name: "city_answer" }
    })
  })

  it("translates tool calls to tool_use blocks and tool messages to tool_result blocks of one user turn", () => {
    expect(AnthropicWire.messagesOf([
      { role: "system", content: "terse" },
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
          { id: "toolu_2", type: "function", function: { name: "get_weather", arguments: "not json" } }
        ]
      },
      { role: "tool", tool_call_id: "toolu_1", content: "18°C" },
      { role: "tool", tool_call_id: "toolu_2", content: "21°C" },
      { role: "user", content: "Which is warmer?" }
    ])).toEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: {} }
        ]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "18°C" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "21°C" },
          { type: "text", text: "Which is warmer?" }
        ]
      }
    ])
  })

  it.scopedLive("sends the translated tools, and streams tool_use blocks back as tool-call deltas with finish tool_use", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({
        answer: "Let me check.",
        toolUses: [{ id: "toolu_a", name: "get_weather", input: { city: "Paris" }, pieceLength: 5 }, { id: "toolu_b", name: "get_time", input: {} }],
        usage: { input_tokens: 30, output_tokens: 12 }
      })
      const chunks = yield* Stream.runCollect(provider.stream(ask({ tools: [weather, clock], tool_choice: "required" }))).pipe(Effect.map(Chunk.toReadonlyArray))
      expect(bodyOf(fake)).toMatchObject({ tools: [{ name: "get_weather" }, { name: "get_time" }], tool_choice: { type: "any" } })
      expect(textOf(chunks)).toBe("Let me check.")
      const calls = chunks.flatMap((chunk) => (chunk._tag === "ToolCallDelta" ? [chunk] : []))
      expect(calls[0]).toEqual({ _tag: "ToolCallDelta", index: 0, id: "toolu_a", name: "get_weather", arguments: "" })
      expect(calls.filter((call) => call.index === 0).map((call) => call.arguments).join("")).toBe("{\"city\":\"Paris\"}")
      expect(calls.filter((call) => call.index === 0)).toHaveLength(1 + 4)
      expect(calls.filter((call) => call.index === 1)).toEqual([
        { _tag: "ToolCallDelta", index: 1, id: "toolu_b", name: "get_time", arguments: "" },
        { _tag: "ToolCallDelta", index: 1, arguments: "{}" }
      ])
      expect(chunks.slice(-2)).toEqual([
        { _tag: "Usage", usage: expect.objectContaining({ input_tokens: 30, output_tokens: 12 }) },
        { _tag: "Finish", reason: "tool_use" }
      ])
    }))

  it.scopedLive("a json_schema answer streams back as text, finishing end_turn; json_object adds a system instruction", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
      fake.enqueue({ toolUses: [{ name: "city", input: { city: "Paris" }, pieceLength: 4 }] })
      const chunks = yield* Stream.runCollect(provider.stream(ask({ response_format: { type: "json_schema", json_schema: { name: "city", schema } } })))
        .pipe(Effect.map(Chunk.toReadonlyArray))
      expect(bodyOf(fake)).toMatchObject({ tools: [{ name: "city", input_schema: schema }], tool_choice: { type: "tool", name: "city" } })
      expect(chunks.some((chunk) => chunk._tag === "ToolCallDelta")).toBe(false)
      expect(JSON.parse(textOf(chunks))).toEqual({ city: "Paris" })
      expect(chunks.at(-1)).toEqual({ _tag: "Finish", reason: "end_turn" })

      fake.reset()
      fake.enqueue({ answer: "{\"city\":\"Paris\"}" })
      yield* Stream.runDrain(provider.stream(ask({ response_format: { type: "json_object" } })))
      expect(bodyOf(fake).system).toBe(AnthropicWire.jsonObjectInstruction)
      expect(bodyOf(fake)).not.toHaveProperty("tools")
    }))
})
