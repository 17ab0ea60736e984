import { describe, expect, it } from "@effect/vitest"
import * as OfflineProvider from "@huddle/adapters/models/OfflineProvider"
import { moreUntested } from "@huddle/domain/grounding/Grounding"
import { CatalogModel, type ChatMessage, estimateTokens, type ModelChunk, type ModelRequest } from "@huddle/domain/models/Model"
import { Chunk, Effect, FastCheck, Stream } from "effect"

const model = new CatalogModel({
  id: "offline-standard",
  tier: "standard",
  provider: "offline",
  pricing: { input: 2000, output: 4000 },
  context_window: 32768,
  max_output_tokens: 1024
})

const requestOf = (messages: ReadonlyArray<ChatMessage>, maxOutputTokens = 1024): ModelRequest => ({ model, messages, maxOutputTokens })

const collect = (request: ModelRequest) =>
  Stream.runCollect(OfflineProvider.make.stream(request)).pipe(Effect.map(Chunk.toReadonlyArray))

const textOf = (chunks: ReadonlyArray<ModelChunk>) => chunks.flatMap((chunk) => (chunk._tag === "Delta" ? [chunk.text] : [])).join("")

const conversation: ReadonlyArray<ChatMessage> = [
  { role: "system", content: "You are Huddle, a careful assistant." },
  { role: "system", content: "Remembered facts:\n- The team ships on Fridays.\n- Staging lives at staging.example.com\n\n* Alice owns billing." },
  { role: "user", content: "What is the capital of France?" },
  { role: "assistant", content: "Paris." },
  { role: "user", content: "When  do we\nship?" }
]

describe("OfflineProvider", () => {
  it("is named offline", () => {
    expect(OfflineProvider.make.name).toBe("offline")
  })

  it.effect("answers, labelled as offline, restating the last user message and listing the system context line by line", () =>
    Effect.gen(function*() {
      const chunks = yield* collect(requestOf(conversation))
      const text = textOf(chunks)
      expect(text.startsWith("[offline]")).toBe(true)
      expect(text).toContain("offline-standard")
      expect(text).toContain(`You asked: "When do we ship?"`)
      expect(text).not.toContain("capital of France")
      const lines = text.split("\n")
      for (const fact of ["You are Huddle, a careful assistant.", "Remembered facts:", "The team ships on Fridays.", "Staging lives at staging.example.com", "Alice owns billing."]) {
        expect(lines).toContain(`- ${fact}`)
      }
      expect(text).toBe(OfflineProvider.answerFor(requestOf(conversation)))
    }))

  it.effect("streams several deltas, then usage estimated from the messages and the text, then stop", () =>
    Effect.gen(function*() {
      const request = requestOf(conversation)
      const chunks = yield* collect(request)
      const deltas = chunks.filter((chunk) => chunk._tag === "Delta")
      expect(deltas.length).toBeGreaterThan(3)
      expect(chunks.slice(0, deltas.length).every((chunk) => chunk._tag === "Delta")).toBe(true)
      const text = textOf(chunks)
      expect(chunks.slice(deltas.length)).toMatchObject([
        { _tag: "Usage", usage: { input_tokens: conversation.reduce((sum, m) => sum + estimateTokens(m.content), 0), output_tokens: estimateTokens(text) } },
        { _tag: "Finish", reason: "stop" }
      ])
    }))

  it.effect("says so when there is no question and no context", () =>
    Effect.gen(function*() {
      const text = textOf(yield* collect(requestOf([])))
      expect(text.startsWith("[offline]")).toBe(true)
      expect(text).toContain("no question")
      expect(text).toContain("no other context")
    }))

  it.effect("keeps within maxOutputTokens, finishing with length", () =>
    Effect.gen(function*() {
      const chunks = yield* collect(requestOf(conversation, 10))
      const text = textOf(chunks)
      expect(text.startsWith("[offline]")).toBe(true)
      expect(estimateTokens(text)).toBeLessThanOrEqual(10)
      expect(chunks.at(-2)).toMatchObject({ _tag: "Usage", usage: { output_tokens: estimateTokens(text) } })
      expect(chunks.at(-1)).toEqual({ _tag: "Finish", reason: "length" })
    }))

  it.effect("a coverage list over the budget: whole paths, then one line counting every path left out (those the context had left out too)", () =>
    Effect.gen(function*() {
      // As grounding writes it for 450 untested files: 400 listed, then the line for the other 50, then excerpts.
      const paths = Array.from({ length: 450 }, (_, i) => `packages/app/src/area${i % 9}/Module${i}.ts`)
      const grounding = [
        "Code from the workspace's connected repository follows. Ground your answer in it.",
        "Test coverage computed from the whole index (complete, not sampled): 460 source files, 10 linked to at least one test, 450 with none.",
        ...paths.slice(0, 400).map((path) => `untested: ${path}`),
        moreUntested(50),
        "--- packages/app/src/area0/Module0.ts:1-3 (matches) ---",
        "export const x = 1"
      ].join("\n")
      const chunks = yield* collect(requestOf([{ role: "system", content: grounding }, { role: "user", content: "Which files have no tests?" }], 1024))
      const text = textOf(chunks)
      expect(estimateTokens(text)).toBeLessThanOrEqual(1024)
      expect(chunks.at(-1)).toEqual({ _tag: "Finish", reason: "stop" })
      const listed = [...text.matchAll(/^- untested: (packages\S+\.ts)$/gm)].map((match) => match[1]!)
      expect(listed).toEqual(paths.slice(0, listed.length))
      expect(listed.length).toBeGreaterThan(20)
      const lines = text.split("\n")
      expect(lines.at(-2)).toBe(`- ${moreUntested(450 - listed.length)}`)
      expect(lines.at(-1)).toBe("- 1 excerpt, listed in the reply's grounding.excerpts")
    }))

  it.effect("a coverage list within the budget is given whole, with its excerpts", () =>
    Effect.gen(function*() {
      const grounding = ["Code from the workspace's connected repository follows.", "untested: src/a.ts", "untested: src/b.ts", "--- src/c.ts:1-2 (matches) ---", "x"].join("\n")
      const text = textOf(yield* collect(requestOf([{ role: "system", content: grounding }, { role: "user", content: "Untested?" }])))
      expect(text.split("\n").slice(-3)).toEqual(["- untested: src/a.ts", "- untested: src/b.ts", "- excerpt src/c.ts:1-2 (matches)"])
    }))

  const message = FastCheck.record({
    role: FastCheck.constantFrom("system" as const, "user" as const, "assistant" as const),
    content: FastCheck.string({ maxLength: 300 })
  })

  it.prop(
    "is deterministic, labelled, within its budget, and its usage matches its text",
    [FastCheck.array(message, { maxLength: 8 }), FastCheck.integer({ min: 1, max: 2048 })],
    ([messages, maxOutputTokens]) => {
      const request = requestOf(messages, maxOutputTokens)
      const first = Effect.runSync(collect(request))
      const second = Effect.runSync(collect(requestOf([...messages], maxOutputTokens)))
      expect(second).toEqual(first)
      const text = textOf(first)
      const full = OfflineProvider.answerFor(request)
      expect(full.startsWith("[offline]")).toBe(true)
      expect(full.startsWith(text)).toBe(true)
      // Only a budget too small for the label itself (under 3 tokens) cuts into it.
      if (maxOutputTokens >= 3) expect(text.startsWith("[offline]")).toBe(true)
      expect(first.at(-2)).toMatchObject({
        _tag: "Usage",
        usage: { input_tokens: messages.reduce((sum, m) => sum + estimateTokens(m.content), 0), output_tokens: estimateTokens(text) }
      })
      expect(estimateTokens(text)).toBeLessThanOrEqual(maxOutputTokens)
      expect(first.at(-1)?._tag).toBe("Finish")
    },
    { fastCheck: { numRuns: 100 } }
  )
})

describe("OfflineProvider with tools and response formats", () => {
  const weather = {
    type: "function" as const,
    function: {
      name: "get_weather",
      parameters: {
        type: "object",
        properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
        required: ["city", "unit"]
      }
    }
  }
  const clock = { type: "function" as const, function: { name: "get_time" } }
  const ask = (content: string, options: ModelRequest["options"], extra: ReadonlyArray<ChatMessage> = []): ModelRequest => ({
    model,
    messages: [{ role: "user", content }, ...extra],
    maxOutputTokens: 1024,
    options
  })
  const callOf = (chunks: ReadonlyArray<ModelChunk>) => {
    const pieces = chunks.flatMap((chunk) => (chunk._tag === "ToolCallDelta" ? [chunk] : []))
    return { first: pieces[0], arguments: pieces.map((piece) => piece.arguments ?? "").join(""), indexes: pieces.map((piece) => piece.index) }
  }

  it.effect("required: one call of the first tool, id and name first, arguments valid for its schema, then tool_calls", () =>
    Effect.gen(function*() {
      const request = ask("Paris?", { tools: [weather, clock], tool_choice: "required" })
      const chunks = yield* collect(request)
      expect(chunks.map((chunk) => chunk._tag)).toEqual(["ToolCallDelta", "ToolCallDelta", "Usage", "Finish"])
      const call = callOf(chunks)
      expect(call.first).toMatchObject({ index: 0, name: "get_weather" })
      expect(call.first?.id).toMatch(/^call_offline_[0-9a-f]{8}$/)
      expect(call.indexes).toEqual([0, 0])
      expect(JSON.parse(call.arguments)).toEqual({ city: "Paris?", unit: "celsius" })
      expect(chunks[3]).toEqual({ _tag: "Finish", reason: "tool_calls" })
      // The tool definitions are input, the call is output.
      expect(chunks[2]).toMatchObject({
        usage: { input_tokens: estimateTokens("Paris?") + estimateTokens(JSON.stringify([weather, clock])), output_tokens: estimateTokens(`get_weather${call.arguments}`) }
      })
      expect(yield* collect(request)).toEqual(chunks)
    }))

  it.effect("a named tool_choice calls that tool; required calls the tool the question names; a tool without parameters gets {}", () =>
    Effect.gen(function*() {
      const named = callOf(yield* collect(ask("Paris?", { tools: [weather, clock], tool_choice: { type: "function", function: { name: "get_time" } } })))
      expect(named.first?.name).toBe("get_time")
      expect(named.arguments).toBe("{}")
      const byName = callOf(yield* collect(ask("Use get_time please", { tools: [weather, clock], tool_choice: "required" })))
      expect(byName.first?.name).toBe("get_time")
    }))

  it.effect("auto answers in text unless the question names a tool; none is always text", () =>
    Effect.gen(function*() {
      const plain = yield* collect(ask("Paris?", { tools: [weather] }))
      expect(plain.some((chunk) => chunk._tag === "ToolCallDelta")).toBe(false)
      expect(plain.at(-1)).toEqual({ _tag: "Finish", reason: "stop" })
      const asked = yield* collect(ask("Call get_weather for Paris", { tools: [weather], tool_choice: "auto" }))
      expect(callOf(asked).first?.name).toBe("get_weather")
      const none = yield* collect(ask("Call get_weather for Paris", { tools: [weather], tool_choice: "none" }))
      expect(none.some((chunk) => chunk._tag === "ToolCallDelta")).toBe(false)
    }))

  it.effect("after a tool result, auto answers in text that quotes the result under the tool's name", () =>
    Effect.gen(function*() {
      const chunks = yield* collect(ask("Call get_weather for Paris", { tools: [weather] }, [
        { role: "assistant", content: "", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
        { role: "tool", tool_call_id: "call_1", content: "18°C, sunny" }
      ]))
      expect(chunks.some((chunk) => chunk._tag === "ToolCallDelta")).toBe(false)
      expect(textOf(chunks)).toContain("Tool results I was given:\n- get_weather: 18°C, sunny")
    }))

  it.effect("json_object answers {answer: <the text>}; json_schema answers JSON built from the schema", () =>
    Effect.gen(function*() {
      const object = JSON.parse(textOf(yield* collect(ask("Paris?", { response_format: { type: "json_object" } }))))
      expect(Object.keys(object)).toEqual(["answer"])
      expect(object.answer).toBe(OfflineProvider.answerFor(ask("Paris?", undefined)))
      const schema = {
        type: "object",
        properties: { capital: { type: "string" }, population: { type: "integer", minimum: 1 }, sources: { type: "array", items: { type: "string" }, minItems: 1 } },
        required: ["capital", "population", "sources"],
        additionalProperties: false
      }
      const chunks = yield* collect(ask("Paris?", { response_format: { type: "json_schema", json_schema: { name: "city", strict: true, schema } } }))
      expect(JSON.parse(textOf(chunks))).toEqual({ capital: "Paris?", population: 1, sources: ["Paris?"] })
      expect(chunks.at(-1)).toEqual({ _tag: "Finish", reason: "stop" })
    }))

  it.effect("a call longer than the output budget is cut, with finish_reason length", () =>
    Effect.gen(function*() {
      const chunks = yield* collect({ ...ask("Paris?", { tools: [weather], tool_choice: "required" }), maxOutputTokens: 5 })
      expect(`get_weather${callOf(chunks).arguments}`).toHaveLength(20)
      expect(chunks.at(-1)).toEqual({ _tag: "Finish", reason: "length" })
    }))
})
