/**
 * When the offline model answers (decision 0034): a tier's models by the one rule
 * (`Catalog.tierModels`), and the router telling a model which ones failed before it, keeping the
 * providers' health and logging their failures.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Catalog from "@huddle/domain/models/Catalog"
import { CatalogModel, type ModelChunk, type ModelRequest } from "@huddle/domain/models/Model"
import { ModelProviders, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import * as Router from "@huddle/domain/models/Router"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { Effect, Layer, Logger, Option, Stream } from "effect"

const entry = (id: string, provider: string) =>
  new CatalogModel({ id, tier: "standard", provider, pricing: { input: 1000, output: 1000 }, context_window: 1000, max_output_tokens: 100 })

const offline = entry("offline-standard", "offline")
const gpt = entry("gpt-4o", "openai")
const local = entry("llama", "ollama")

const ids = (models: ReadonlyArray<CatalogModel>) => models.map((model) => model.id)

describe("a tier's models", () => {
  const openaiOnly = (offlineFallback: boolean): Catalog.Routing => ({ configured: (provider) => provider === "openai", offlineFallback })

  it("leave the offline model out of a tier with a configured model", () => {
    expect(ids(Catalog.tierModels([gpt, offline], openaiOnly(false)))).toEqual(["gpt-4o"])
    // Wherever it is listed.
    expect(ids(Catalog.tierModels([offline, gpt], openaiOnly(false)))).toEqual(["gpt-4o"])
  })

  it("have it last, as the stand-in, when the operator opts in", () => {
    expect(ids(Catalog.tierModels([offline, gpt, local], openaiOnly(true)))).toEqual(["gpt-4o", "llama", "offline-standard"])
  })

  it("are served by it when no model of the tier has a configured provider", () => {
    expect(ids(Catalog.tierModels([local, offline], openaiOnly(false)))).toEqual(["llama", "offline-standard"])
    expect(ids(Catalog.tierModels([offline], openaiOnly(false)))).toEqual(["offline-standard"])
  })
})

describe("the router, when a model fails", () => {
  const down = new ProviderFailure({ provider: "openai", model: "gpt-4o", reason: "rejected", retryable: false, status: 401, message: "bad key" })

  it.effect("tells the next model and the caller which failed and why, keeps the provider's health, and logs a warning", () => {
    const asked: Array<ModelRequest> = []
    const logged: Array<{ level: string; message: unknown }> = []
    let failing = true
    const providers = Layer.succeed(ModelProviders, {
      get: (name) =>
        Option.some({
          name,
          kind: "openai-compatible" as const,
          stream: (request: ModelRequest) => {
            asked.push(request)
            return name === "openai" && failing
              ? Stream.fail(down)
              : Stream.make<Array<ModelChunk>>({ _tag: "Delta", text: "hi" }, { _tag: "Finish", reason: "stop" })
          }
        })
    })
    const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ logLevel, message }) => void logged.push({ level: logLevel.label, message })))
    return Effect.gen(function*() {
      const router = yield* Router.Router
      const chunks = yield* Stream.runCollect(router.stream([gpt, offline], { messages: [], maxOutputTokens: 10 }))
      const attempts = [...chunks].filter((chunk) => chunk._tag === "Attempt")
      expect(attempts.map((chunk) => chunk._tag === "Attempt" && [chunk.model.id, chunk.failed])).toEqual([
        ["gpt-4o", []],
        ["offline-standard", [{ model: "gpt-4o", reason: "rejected (401)" }]]
      ])
      expect(asked.map((request) => request.failed)).toEqual([undefined, [{ model: "gpt-4o", reason: "rejected (401)" }]])
      expect(logged.filter((line) => line.level === "WARN").map((line) => String(line.message))).toEqual([
        "model provider openai failed: rejected (401)"
      ])
      // Only the configured provider is watched; its failure counted, then reset by an answer.
      expect(yield* router.health).toMatchObject([{ provider: "openai", consecutiveFailures: 1, lastFailure: "rejected (401)" }])
      failing = false
      yield* Stream.runDrain(router.stream([gpt], { messages: [], maxOutputTokens: 10 }))
      const [openai] = yield* router.health
      expect(openai).toMatchObject({ provider: "openai", consecutiveFailures: 0, lastFailure: "rejected (401)" })
      expect(openai!.lastSuccessAt).toBeGreaterThanOrEqual(openai!.lastFailureAt!)
    }).pipe(
      Effect.provide(Router.layer.pipe(Layer.provide(providers), Layer.provide(Layer.succeed(Metrics.Metrics, Metrics.disabled)))),
      Effect.provide(logger)
    )
  })
})
