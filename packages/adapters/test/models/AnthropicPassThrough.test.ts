/**
 * A Messages API request (`CallOptions.anthropic`) through the Anthropic provider to a fake
 * upstream that records what it receives: the client's body and headers as sent, but for what the
 * call decides (model, max_tokens, stream, a capped temperature, Huddle's memories after the
 * client's system); and thinking blocks, signatures and stop sequences read back.
 */
import { describe, expect, it } from "@effect/vitest"
import * as AnthropicProvider from "@huddle/adapters/models/AnthropicProvider"
import { type AnthropicNative, CatalogModel, type JsonObject, type ModelChunk, type ModelRequest } from "@huddle/domain/models/Model"
import type { Provider } from "@huddle/domain/models/ModelProviders"
import * as FakeAnthropic from "@huddle/testkit/FakeAnthropic"
import { Chunk, Effect, Redacted, type Scope, Stream } from "effect"

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

const beta = "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27"

/** Shaped like what Claude Code sends: cached system blocks, cached message blocks, thinking, tools, fields Huddle has no concept of. */
const clientBody: JsonObject = {
  model: "claude-sonnet-4-5",
  max_tokens: 32_000,
  stream: false,
  system: [
    { type: "text", text: "You are Claude Code." },
    { type: "text", text: "Work in /repo.", cache_control: { type: "ephemeral" } }
  ],
  messages: [
    { role: "user", content: [{ type: "text", text: "List the files.", cache_control: { type: "ephemeral", ttl: "1h" } }] },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "README.md", is_error: false, cache_control: { type: "ephemeral" } }] }
  ],
  tools: [{ name: "Bash", description: "Run a command", input_schema: { type: "object", properties: { command: { type: "string" } } }, cache_control: { type: "ephemeral" } }],
  tool_choice: { type: "auto", disable_parallel_tool_use: true },
  thinking: { type: "enabled", budget_tokens: 16_000 },
  top_k: 40,
  metadata: { user_id: "user_abc" },
  context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
  output_config: { effort: "medium" }
}

const memories = "Remembered facts:\n- the team ships on Fridays"

const nativeOf = (body: JsonObject, headers: AnthropicNative["headers"] = { "anthropic-version": "2023-06-01", "anthropic-beta": beta }): AnthropicNative => ({
  body,
  headers,
  unportable: []
})

/** The call as the domain makes it: the translation's messages with Huddle's memories, and the client's request as sent. */
const requestOf = (native: AnthropicNative, call: Partial<ModelRequest> = {}): ModelRequest => ({
  model,
  messages: [
    { role: "system", content: "You are Claude Code." },
    { role: "system", content: memories, source: "huddle" },
    { role: "user", content: "List the files." }
  ],
  maxOutputTokens: 1024,
  options: { anthropic: native },
  ...call
})

const setup = (): Effect.Effect<{ readonly fake: FakeAnthropic.FakeAnthropic; readonly provider: Provider }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fake = yield* FakeAnthropic.scoped({ apiKey: secret })
    const provider = yield* AnthropicProvider.make({ baseUrl: fake.url, apiKey: Redacted.make(secret), timeout: "2 seconds" })
    return { fake, provider }
  })

const collect = (provider: Provider, request: ModelRequest) =>
  Stream.runCollect(provider.stream(request)).pipe(Effect.map(Chunk.toReadonlyArray))

const sent = (fake: FakeAnthropic.FakeAnthropic) => fake.requests.at(-1)!

describe("AnthropicProvider with a Messages API request as the client sent it", () => {
  it.scopedLive("sends the client's body unchanged but for model, max_tokens, stream and the memories after its system blocks; forwards its headers", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      yield* collect(provider, requestOf(nativeOf(clientBody), { maxOutputTokens: 900 }))
      const received = sent(fake)
      expect(received.headers["anthropic-beta"]).toBe(beta)
      expect(received.headers["anthropic-version"]).toBe("2023-06-01")
      expect(received.headers["x-api-key"]).toBe(secret)
      expect(received.body).toEqual({
        ...clientBody,
        model: "claude-upstream-name",
        // Lowered to what the call allows, and the thinking budget under it, as Anthropic wants.
        max_tokens: 900,
        thinking: { type: "enabled", budget_tokens: 899 },
        stream: true,
        system: [
          { type: "text", text: "You are Claude Code." },
          { type: "text", text: "Work in /repo.", cache_control: { type: "ephemeral" } },
          { type: "text", text: memories }
        ]
      })
    }))

  it.scopedLive("a string system becomes blocks only when memories follow it; a thinking budget under max_tokens stays", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const body = { model: "claude-haiku-4-5", max_tokens: 64, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] }
      yield* collect(provider, requestOf(nativeOf(body)))
      expect(sent(fake).body).toMatchObject({ max_tokens: 1024, system: [{ type: "text", text: "Be brief." }, { type: "text", text: memories }] })

      yield* collect(provider, requestOf(nativeOf(body), { messages: [{ role: "user", content: "Hi" }] }))
      expect(sent(fake).body).toEqual({ ...body, model: "claude-upstream-name", max_tokens: 1024, stream: true })

      const { system: _, ...without } = body
      yield* collect(provider, requestOf(nativeOf({ ...without, thinking: { type: "enabled", budget_tokens: 512 } })))
      expect(sent(fake).body).toMatchObject({ system: [{ type: "text", text: memories }], thinking: { type: "enabled", budget_tokens: 512 } })
    }))

  it.scopedLive("temperature: the call's only when it differs from the client's, and never beside thinking", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const body = { model: "m", max_tokens: 64, messages: [{ role: "user", content: "Hi" }], temperature: 0.9 }
      yield* collect(provider, requestOf(nativeOf(body), { temperature: 0.2 }))
      expect(sent(fake).body).toMatchObject({ temperature: 0.2 })
      yield* collect(provider, requestOf(nativeOf(body), { temperature: 0.9 }))
      expect(sent(fake).body).toMatchObject({ temperature: 0.9 })
      yield* collect(provider, requestOf(nativeOf({ ...body, temperature: undefined }), {}))
      expect(sent(fake).body).not.toHaveProperty("temperature")
      // Anthropic takes thinking only at the default temperature.
      yield* collect(provider, requestOf(nativeOf({ model: "m", max_tokens: 64, messages: [], thinking: { type: "adaptive" } }), { temperature: 0.2 }))
      expect(sent(fake).body).not.toHaveProperty("temperature")
    }))

  it.scopedLive("without the client's anthropic-version the provider's is sent; other client headers are not forwarded", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      yield* collect(provider, requestOf(nativeOf({ model: "m", max_tokens: 8, messages: [] }, { "x-api-key": "hk_client", "anthropic-beta": beta })))
      expect(sent(fake).headers["anthropic-version"]).toBe(AnthropicProvider.apiVersion)
      expect(sent(fake).headers["anthropic-beta"]).toBe(beta)
      expect(sent(fake).headers["x-api-key"]).toBe(secret)
    }))

  it.scopedLive("without a Messages API request, the translation is unchanged: Huddle's system messages join the client's in one string", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const { options: _, ...translated } = requestOf(nativeOf(clientBody))
      yield* collect(provider, translated)
      expect(sent(fake).headers["anthropic-beta"]).toBeUndefined()
      expect(sent(fake).body).toEqual({
        model: "claude-upstream-name",
        max_tokens: 1024,
        stream: true,
        system: `You are Claude Code.\n\n${memories}`,
        messages: [{ role: "user", content: "List the files." }]
      })
    }))
})

describe("AnthropicProvider reading thinking and stop sequences", () => {
  const thinkingOf = (chunks: ReadonlyArray<ModelChunk>) => chunks.flatMap((chunk) => (chunk._tag === "ThinkingDelta" ? [chunk] : []))

  it.scopedLive("streams thinking blocks as ThinkingDeltas (text pieces, then the signature), redacted ones whole, then the text", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({
        thinking: [{ thinking: "The user wants a day.", signature: "EqQBCgIYAhIM1gbcDa9GJwZA", pieceLength: 10 }, { redacted: "EmwKAhgBEgy3va3pzix" }],
        answer: "Fridays.",
        usage: { input_tokens: 20, output_tokens: 9 }
      })
      const chunks = yield* collect(provider, requestOf(nativeOf({ model: "m", max_tokens: 2048, messages: [], thinking: { type: "enabled", budget_tokens: 1024 } })))
      expect(thinkingOf(chunks)).toEqual([
        { _tag: "ThinkingDelta", index: 0, thinking: "" },
        { _tag: "ThinkingDelta", index: 0, thinking: "The user w" },
        { _tag: "ThinkingDelta", index: 0, thinking: "ants a day" },
        { _tag: "ThinkingDelta", index: 0, thinking: "." },
        { _tag: "ThinkingDelta", index: 0, signature: "EqQBCgIYAhIM1gbcDa9GJwZA" },
        { _tag: "ThinkingDelta", index: 1, redacted: "EmwKAhgBEgy3va3pzix" }
      ])
      // The thinking comes before the answer's text, as Anthropic sent it.
      const tags = chunks.map((chunk) => chunk._tag)
      expect(tags.indexOf("Delta")).toBeGreaterThan(tags.lastIndexOf("ThinkingDelta"))
      expect(chunks.slice(-2)).toEqual([
        { _tag: "Usage", usage: expect.objectContaining({ input_tokens: 20, output_tokens: 9 }) },
        { _tag: "Finish", reason: "end_turn" }
      ])
    }))

  it.scopedLive("the stop sequence met is the finish's, and Anthropic's stop reasons come through as they are", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const request = requestOf(nativeOf({ model: "m", max_tokens: 64, messages: [], stop_sequences: ["END"] }))
      fake.enqueue({ answer: "one two", stopSequence: "END" }, { answer: "hm", stopReason: "pause_turn" }, { answer: "no", stopReason: "refusal" })
      expect((yield* collect(provider, request)).at(-1)).toEqual({ _tag: "Finish", reason: "stop_sequence", stopSequence: "END" })
      expect(sent(fake).body).toMatchObject({ stop_sequences: ["END"] })
      expect((yield* collect(provider, request)).at(-1)).toEqual({ _tag: "Finish", reason: "pause_turn" })
      expect((yield* collect(provider, request)).at(-1)).toEqual({ _tag: "Finish", reason: "refusal" })
    }))

  it.scopedLive("thinking, text and a tool call in one answer: each as its own kind of chunk", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({
        thinking: [{ thinking: "Run ls.", signature: "sig-1" }],
        answer: "Listing.",
        toolUses: [{ id: "toolu_9", name: "Bash", input: { command: "ls" } }]
      })
      const chunks = yield* collect(provider, requestOf(nativeOf(clientBody)))
      expect(chunks.map((chunk) => chunk._tag)).toEqual([
        "ThinkingDelta",
        "ThinkingDelta",
        "ThinkingDelta",
        "Delta",
        "ToolCallDelta",
        "ToolCallDelta",
        "ToolCallDelta",
        "Usage",
        "Finish"
      ])
      expect(chunks.at(-1)).toEqual({ _tag: "Finish", reason: "tool_use" })
    }))
})
