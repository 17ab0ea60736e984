import { describe, expect, it } from "@effect/vitest"
import * as OfflineProvider from "@huddle/adapters/models/OfflineProvider"
import { CatalogModel, type ChatMessage, estimateTokens, type ModelChunk, type ModelRequest } from "@huddle/domain/models/Model"
import { Chunk, Effect, FastCheck, Stream } from "effect"

const model = new CatalogModel({
  id: "offline-standard",
  tier: "standard",
  provider: "offline",
  price: { input_per_1k: 2, output_per_1k: 4 },
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
