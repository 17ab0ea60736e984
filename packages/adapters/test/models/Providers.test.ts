import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import * as Providers from "@huddle/adapters/models/Providers"
import { CatalogModel } from "@huddle/domain/models/Model"
import { ModelProviders } from "@huddle/domain/models/ModelProviders"
import * as FakeAnthropic from "@huddle/testkit/FakeAnthropic"
import * as FakeOpenAi from "@huddle/testkit/FakeOpenAi"
import { Chunk, ConfigProvider, Effect, Layer, Option, Redacted, Stream } from "effect"

const modelOf = (id: string, provider: string) =>
  new CatalogModel({ id, tier: "economy", provider, pricing: { input: 1000, output: 1000 }, context_window: 4096, max_output_tokens: 256 })

const ask = (provider: string, id: string) =>
  Effect.gen(function*() {
    const providers = yield* ModelProviders
    const found = Option.getOrThrow(providers.get(provider))
    const chunks = yield* Stream.runCollect(found.stream({ model: modelOf(id, provider), messages: [{ role: "user", content: "hi" }], maxOutputTokens: 32 }))
    return Chunk.toReadonlyArray(chunks).flatMap((chunk) => (chunk._tag === "Delta" ? [chunk.text] : [])).join("")
  })

const namesOf = (providers: ModelProviders["Type"]) =>
  ["offline", "openai", "anthropic", "ollama"].filter((name) => Option.isSome(providers.get(name)))

describe("Providers", () => {
  it.effect("offline only, when nothing is configured", () =>
    Effect.gen(function*() {
      const providers = yield* ModelProviders
      expect(namesOf(providers)).toEqual(["offline"])
      expect(Option.isNone(providers.get("openai"))).toBe(true)
      expect((yield* ask("offline", "offline-economy")).startsWith("[offline]")).toBe(true)
    }).pipe(Effect.provide(Providers.layer({}).pipe(Layer.provide(FetchHttpClient.layer)))))

  it.scopedLive("openai, anthropic and named OpenAI-compatible servers, each reaching its own upstream", () =>
    Effect.gen(function*() {
      const openai = yield* FakeOpenAi.scoped({ apiKey: "sk-openai", defaultScript: { answer: "from openai" } })
      const anthropic = yield* FakeAnthropic.scoped({ apiKey: "sk-anthropic", defaultScript: { answer: "from anthropic" } })
      const ollama = yield* FakeOpenAi.scoped({ defaultScript: { answer: "from ollama" } })
      const layer = Providers.layer({
        openai: { apiKey: Redacted.make("sk-openai"), baseUrl: openai.baseUrl },
        anthropic: { apiKey: Redacted.make("sk-anthropic"), baseUrl: anthropic.url },
        servers: [{ name: "ollama", baseUrl: ollama.baseUrl }],
        timeout: "2 seconds"
      }).pipe(Layer.provide(FetchHttpClient.layer))
      yield* Effect.gen(function*() {
        expect(namesOf(yield* ModelProviders)).toEqual(["offline", "openai", "anthropic", "ollama"])
        expect(yield* ask("openai", "gpt-4o-mini")).toBe("from openai")
        expect(yield* ask("anthropic", "claude-haiku-4-5")).toBe("from anthropic")
        expect(yield* ask("ollama", "llama3")).toBe("from ollama")
      }).pipe(Effect.provide(layer))
      expect(openai.requests[0]?.body).toMatchObject({ model: "gpt-4o-mini" })
      expect(ollama.requests[0]?.headers.authorization).toBeUndefined()
    }))

  it.effect("reads the environment: keys (empty means unset) and base URLs with their defaults", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.withConfigProvider(Providers.fromEnv, ConfigProvider.fromMap(new Map(Object.entries(env))))
      const none = yield* read({})
      expect(Providers.names(none)).toEqual(["offline"])
      expect(Providers.names(yield* read({ OPENAI_API_KEY: "  ", ANTHROPIC_API_KEY: "" }))).toEqual(["offline"])

      const both = yield* read({ OPENAI_API_KEY: "sk-1", ANTHROPIC_API_KEY: "sk-2", OPENAI_BASE_URL: "http://127.0.0.1:11434/v1" })
      expect(Providers.names(both)).toEqual(["offline", "openai", "anthropic"])
      expect(both.openai?.baseUrl).toBe("http://127.0.0.1:11434/v1")
      expect(both.openai && Redacted.value(both.openai.apiKey)).toBe("sk-1")
      expect(both.anthropic?.baseUrl).toBe("https://api.anthropic.com")
      // Redacted: the key does not show when the options are printed.
      expect(JSON.stringify(both)).not.toContain("sk-1")
      expect((yield* read({ OPENAI_API_KEY: "sk-1" })).openai?.baseUrl).toBe("https://api.openai.com/v1")
    }))
})
