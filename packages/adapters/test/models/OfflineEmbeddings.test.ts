import { describe, expect, it } from "@effect/vitest"
import * as OfflineEmbeddings from "@huddle/adapters/models/OfflineEmbeddings"
import * as Catalog from "@huddle/adapters/models/Catalog"
import { Effect, FastCheck } from "effect"

const model = Catalog.defaultCatalog().models.find((m) => m.id === "offline-embed")!
const norm = (v: ReadonlyArray<number>) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0))
const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => a.reduce((sum, x, i) => sum + x * b[i]!, 0)

const word = FastCheck.stringMatching(/^[a-z]{3,9}$/)
const sentence = FastCheck.array(word, { minLength: 3, maxLength: 12 }).map((words) => words.join(" "))

describe("the offline embedding model", () => {
  it.prop("unit length and deterministic, for any text or token ids and any dimensions up to 256", [
    FastCheck.oneof(FastCheck.string({ minLength: 1 }), FastCheck.array(FastCheck.nat(100_000), { minLength: 1, maxLength: 50 })),
    FastCheck.integer({ min: 1, max: 256 })
  ], ([input, size]) => {
    const first = OfflineEmbeddings.vectorOf(input, size)
    expect(first).toHaveLength(size)
    expect(norm(first)).toBeCloseTo(1, 9)
    expect(OfflineEmbeddings.vectorOf(typeof input === "string" ? `${input}` : [...input], size)).toEqual(first)
  })

  it("a short vector still holds every feature of the text, not only those hashed into its first dimensions", () => {
    const short = OfflineEmbeddings.vectorOf("deploys on thursday", 8)
    expect(short.filter((x) => x !== 0).length).toBeGreaterThanOrEqual(3)
    expect(norm(short)).toBeCloseTo(1, 9)
  })

  it.prop("a text is closer to itself and to a near-duplicate than to an unrelated text", [sentence, sentence, word], ([text, unrelated, extra]) => {
    FastCheck.pre(new Set(text.split(" ")).size >= 3 && text.split(" ").every((w) => !unrelated.split(" ").includes(w)))
    const self = OfflineEmbeddings.vectorOf(text)
    const near = OfflineEmbeddings.vectorOf(`${text} ${extra}`)
    const far = OfflineEmbeddings.vectorOf(unrelated)
    expect(cosine(self, OfflineEmbeddings.vectorOf(text))).toBeCloseTo(1, 9)
    expect(cosine(self, near)).toBeGreaterThan(cosine(self, far))
  })

  it.effect("embeds a batch in order with its estimated tokens, and refuses more dimensions than 256 naming dimensions", () =>
    Effect.gen(function*() {
      const embedded = yield* OfflineEmbeddings.embed({ model, input: ["one text", [1, 2, 3]], dimensions: 32 })
      expect(embedded.vectors).toEqual([OfflineEmbeddings.vectorOf("one text", 32), OfflineEmbeddings.vectorOf([1, 2, 3], 32)])
      expect(embedded.inputTokens).toBe(2 + 3)
      const refused = yield* Effect.flip(OfflineEmbeddings.embed({ model, input: ["x"], dimensions: 257 }))
      expect(refused).toMatchObject({ _tag: "EmbeddingRefused", param: "dimensions" })
    }))
})
