import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Catalog from "@huddle/adapters/models/Catalog"
import * as Providers from "@huddle/adapters/models/Providers"
import { Catalog as CatalogPort } from "@huddle/domain/models/Catalog"
import { costOf } from "@huddle/domain/models/Model"
import { ConfigProvider, Effect, Layer } from "effect"

const dir = mkdtempSync(join(tmpdir(), "huddle-catalog-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
const write = (content: unknown) => {
  const path = join(dir, `catalog-${++files}.json`)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}

const valid = {
  models: [
    {
      id: "llama-small",
      tier: "economy",
      provider: "ollama",
      upstream_model: "llama3.1:8b",
      pricing: { input: 100, output: 200 },
      context_window: 8192,
      max_output_tokens: 2048
    },
    { id: "offline-economy", tier: "economy", provider: "offline", pricing: { input: 1000, output: 2000 }, context_window: 32768, max_output_tokens: 1024 }
  ]
}

const ids = (catalog: { readonly models: ReadonlyArray<{ readonly id: string; readonly tier: string; readonly kind: string }> }, tier: string) =>
  catalog.models.filter((model) => model.tier === tier && model.kind === "chat").map((model) => model.id)

describe("Catalog", () => {
  it("defaults to the three offline models, one per tier, with small nonzero prices, and offline-embed", () => {
    const catalog = Catalog.defaultCatalog()
    expect(catalog.models.map((model) => [model.id, model.tier, model.provider, model.kind])).toEqual([
      ["offline-economy", "economy", "offline", "chat"],
      ["offline-standard", "standard", "offline", "chat"],
      ["offline-premium", "premium", "offline", "chat"],
      ["offline-embed", "economy", "offline", "embedding"]
    ])
    // Credits per million tokens: 1 and 2 credits per 1,000 tokens for the economy model, as ever.
    const chat = catalog.models.filter((model) => model.kind === "chat")
    expect(chat.map((model) => model.pricing)).toEqual([
      { input: 1000, output: 2000 },
      { input: 2000, output: 4000 },
      { input: 4000, output: 8000 }
    ])
    expect(catalog.models[3]!.pricing.input).toBeGreaterThan(0)
    for (const model of chat) {
      expect(model.context_window).toBe(32768)
      expect(model.max_output_tokens).toBe(1024)
    }
  })

  it("puts OpenAI's and then Anthropic's models ahead of the offline one in each tier when configured", () => {
    const openai = Catalog.defaultCatalog({ openai: true })
    expect(ids(openai, "economy")).toEqual(["gpt-4o-mini", "offline-economy"])
    expect(ids(openai, "standard")).toEqual(["gpt-4o", "offline-standard"])
    expect(ids(openai, "premium")).toEqual(["gpt-4.1", "offline-premium"])
    const both = Catalog.defaultCatalog({ openai: true, anthropic: true })
    expect(ids(both, "economy")).toEqual(["gpt-4o-mini", "claude-haiku-4-5", "offline-economy"])
    expect(ids(both, "premium")).toEqual(["gpt-4.1", "claude-opus-4-1", "offline-premium"])
    const anthropic = Catalog.defaultCatalog({ anthropic: true })
    expect(ids(anthropic, "standard")).toEqual(["claude-sonnet-4-5", "offline-standard"])
    expect(ids(openai, "economy").length).toBe(2)
    expect(openai.models.filter((model) => model.kind === "embedding").map((model) => model.id)).toEqual(["text-embedding-3-small", "offline-embed"])
    for (const model of both.models.filter((model) => model.kind === "chat")) {
      expect(model.pricing.input).toBeGreaterThan(0)
      expect(model.pricing.output).toBeGreaterThan(0)
    }
  })

  it.effect("loads a catalog file", () =>
    Effect.gen(function*() {
      const catalog = yield* Catalog.load(write(valid))
      expect(catalog.models.map((model) => model.id)).toEqual(["llama-small", "offline-economy"])
      expect(catalog.models[0]?.upstream_model).toBe("llama3.1:8b")
      expect(catalog.models[1]?.upstream_model).toBeUndefined()
    }))

  it.effect("refuses an invalid file with a message naming the bad field", () =>
    Effect.gen(function*() {
      const badPrice = structuredClone(valid)
      badPrice.models[1]!.pricing.input = -1
      const path = write(badPrice)
      const error = yield* Effect.flip(Catalog.load(path))
      expect(error._tag).toBe("CatalogError")
      expect(error.message).toContain(path)
      expect(error.message).toContain("models[1].pricing.input")

      // Whole credits per million tokens only: a fraction is refused, not rounded.
      const fraction = { models: [{ ...valid.models[0], pricing: { input: 100, output: 200, cache_read: 12.5 } }] }
      expect((yield* Effect.flip(Catalog.load(write(fraction)))).message).toContain("models[0].pricing.cache_read: Expected an integer, actual 12.5")

      const badTier = { models: [{ ...valid.models[0], tier: "luxury", context_window: 0 }] }
      const tierError = yield* Effect.flip(Catalog.load(write(badTier)))
      expect(tierError.message).toContain("models[0].tier")
      expect(tierError.message).toContain("models[0].context_window")

      const missing = { models: [{ ...valid.models[0], provider: undefined }] }
      expect((yield* Effect.flip(Catalog.load(write(missing)))).message).toContain("models[0].provider")
      expect((yield* Effect.flip(Catalog.load(write({ models: [] })))).message).toContain("models")
    }))

  it("prices the default catalog's models at their providers' list prices, cache rates included", () => {
    const pricing = Object.fromEntries(Catalog.defaultCatalog({ openai: true, anthropic: true }).models.map((model) => [model.id, model.pricing]))
    // US$ per million tokens × 1,000: OpenAI reads its cache at ½ (gpt-4o family) or ¼ (gpt-4.1) and writes it at no extra cost.
    expect(pricing["gpt-4o-mini"]).toEqual({ input: 150, output: 600, cache_read: 75 })
    expect(pricing["gpt-4o"]).toEqual({ input: 2500, output: 10_000, cache_read: 1250 })
    expect(pricing["gpt-4.1"]).toEqual({ input: 2000, output: 8000, cache_read: 500 })
    // Anthropic: reads at 0.1×, writes at 1.25× the input price.
    expect(pricing["claude-haiku-4-5"]).toEqual({ input: 1000, output: 5000, cache_read: 100, cache_write: 1250 })
    expect(pricing["claude-sonnet-4-5"]).toEqual({ input: 3000, output: 15_000, cache_read: 300, cache_write: 3750 })
    expect(pricing["claude-opus-4-1"]).toEqual({ input: 15_000, output: 75_000, cache_read: 1500, cache_write: 18_750 })
  })

  it.effect("still reads the older price per 1,000 tokens, as the same rates per million", () =>
    Effect.gen(function*() {
      const legacy = {
        models: [
          { ...valid.models[0], pricing: undefined, price: { input_per_1k: 0.15, output_per_1k: 0.6 } },
          { ...valid.models[1], pricing: undefined, price: { input_per_1k: 1, output_per_1k: 2 } }
        ]
      }
      const catalog = yield* Catalog.load(write(legacy))
      expect(catalog.models.map((model) => model.pricing)).toEqual([{ input: 150, output: 600 }, { input: 1000, output: 2000 }])
      // What a call was charged under the old form, it is charged still: 1,234 input and 567 output tokens
      // at 1 and 2 credits per 1,000 were ceil(2.368) = 3 credits.
      expect(costOf(catalog.models[1]!, { input_tokens: 1234, output_tokens: 567 })).toBe(3)
    }))

  it.effect("refuses an older price that is no whole number of credits per million, a bad one, and both forms at once, naming the field", () =>
    Effect.gen(function*() {
      const tooFine = { models: [{ ...valid.models[0], pricing: undefined, price: { input_per_1k: 0.0005, output_per_1k: 1 } }] }
      const fineError = yield* Effect.flip(Catalog.load(write(tooFine)))
      expect(fineError.message).toContain("models[0].price.input_per_1k: 0.0005 credits per 1,000 tokens is 0.5 per million, not a whole number")
      expect(fineError.message).not.toContain("output_per_1k")

      const negative = { models: [valid.models[0], { ...valid.models[1], pricing: undefined, price: { input_per_1k: 1, output_per_1k: -2 } }] }
      expect((yield* Effect.flip(Catalog.load(write(negative)))).message).toContain("models[1].price.output_per_1k: Expected a non-negative number, actual -2")

      const both = { models: [{ ...valid.models[0], price: { input_per_1k: 0.1, output_per_1k: 0.2 } }] }
      expect((yield* Effect.flip(Catalog.load(write(both)))).message).toContain(`models[0]: give "pricing" (credits per million tokens) or the older "price" (per 1,000), not both`)

      // A bad older price does not hide the file's other problems.
      const twoProblems = { models: [{ ...valid.models[0], tier: "luxury", pricing: undefined, price: { input_per_1k: 0.0001, output_per_1k: 1 } }] }
      const message = (yield* Effect.flip(Catalog.load(write(twoProblems)))).message
      expect(message).toContain("models[0].price.input_per_1k")
      expect(message).toContain("models[0].tier")
    }))

  it.effect("refuses a repeated id, JSON that does not parse, and a file that is not there", () =>
    Effect.gen(function*() {
      const repeated = { models: [valid.models[0], valid.models[1], valid.models[0]] }
      expect((yield* Effect.flip(Catalog.load(write(repeated)))).message).toContain(`models[2].id: "llama-small" appears twice`)
      expect((yield* Effect.flip(Catalog.load(write("{ models: ")))).message).toContain("not JSON")
      const absent = join(dir, "absent.json")
      const error = yield* Effect.flip(Catalog.load(absent))
      expect(error.message).toContain("cannot read")
      expect(error.message).toContain(absent)
    }))

  it.effect("the example in docs/models.md is a valid catalog", () =>
    Effect.gen(function*() {
      const docs = readFileSync(fileURLToPath(new URL("../../../../docs/models.md", import.meta.url)), "utf8")
      const example = /```json\n([\s\S]*?)\n```/.exec(docs)?.[1]
      expect(example).toBeDefined()
      const catalog = yield* Catalog.parse(example ?? "", "docs/models.md")
      expect(catalog.models.length).toBeGreaterThan(0)
    }))

  const withEnv = (env: Record<string, string>) => Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  /** The Catalog port as the server builds it from `env`: over the providers the same variables configure. */
  const fromEnv = (env: Record<string, string>) =>
    Catalog.layerConfig(Catalog.fromEnv).pipe(Layer.provide(Providers.layerConfig(Providers.fromEnv)), Layer.provide(withEnv(env)))

  it.effect("builds the Catalog port from the environment: HUDDLE_CATALOG, or the default for the configured keys", () =>
    Effect.gen(function*() {
      // `ollama` is not configured here: the tier has no configured model, so its offline model serves it.
      const fromFile = yield* CatalogPort.pipe(Effect.provide(fromEnv({ HUDDLE_CATALOG: write(valid) })))
      expect(fromFile.forTier("economy").map((model) => model.id)).toEqual(["llama-small", "offline-economy"])
      expect(fromFile.forTier("premium")).toEqual([])

      // A configured provider's tier is its models: the offline model does not stand in for them.
      const withKeys = yield* CatalogPort.pipe(Effect.provide(fromEnv({ OPENAI_API_KEY: "sk-x", ANTHROPIC_API_KEY: "" })))
      expect(withKeys.forTier("standard").map((model) => model.id)).toEqual(["gpt-4o"])
      expect(withKeys.find("gpt-4o-mini")._tag).toBe("Some")
      // Still listed, and a client may still name it.
      expect(withKeys.find("offline-standard")._tag).toBe("Some")

      // Unless the operator opts into it as the fallback: then it comes last.
      const fallback = yield* CatalogPort.pipe(Effect.provide(fromEnv({ OPENAI_API_KEY: "sk-x", HUDDLE_OFFLINE_FALLBACK: "on" })))
      expect(fallback.forTier("standard").map((model) => model.id)).toEqual(["gpt-4o", "offline-standard"])
      const off = yield* CatalogPort.pipe(Effect.provide(fromEnv({ OPENAI_API_KEY: "sk-x", HUDDLE_OFFLINE_FALLBACK: "off" })))
      expect(off.forTier("standard").map((model) => model.id)).toEqual(["gpt-4o"])

      const bare = yield* CatalogPort.pipe(Effect.provide(fromEnv({})))
      expect(bare.models.map((model) => model.provider)).toEqual(["offline", "offline", "offline", "offline"])
      // An embedding model serves no tier.
      expect(bare.forTier("economy").map((model) => model.id)).toEqual(["offline-economy"])
    }))

  it.effect("takes a model's kind from a file (chat when absent), and refuses an embedding model on a provider that makes none", () =>
    Effect.gen(function*() {
      const embed = { id: "embed-small", tier: "economy", provider: "anthropic", kind: "embedding", price: { input_per_1k: 0.1, output_per_1k: 0 }, context_window: 8192, max_output_tokens: 1 }
      const loaded = yield* Catalog.load(write({ models: [...valid.models, { ...embed, provider: "ollama" }] }))
      expect(loaded.models.map((model) => model.kind)).toEqual(["chat", "chat", "embedding"])
      const badKind = yield* Effect.flip(Catalog.load(write({ models: [{ ...embed, kind: "rerank" }] })))
      expect(badKind.message).toContain("models[0].kind")

      const path = write({ models: [valid.models[1], embed] })
      const error = yield* Effect.flip(CatalogPort.pipe(Effect.provide(fromEnv({ HUDDLE_CATALOG: path, ANTHROPIC_API_KEY: "sk-ant" }))))
      expect(error.message).toContain(`models[1]: "embed-small" is an embedding model, and its provider anthropic makes no embeddings`)
    }))

  it.effect("refuses a HUDDLE_OFFLINE_FALLBACK other than on or off, naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(CatalogPort.pipe(Effect.provide(fromEnv({ HUDDLE_OFFLINE_FALLBACK: "yes" }))))
      expect(String(error)).toContain("HUDDLE_OFFLINE_FALLBACK")
    }))
})
