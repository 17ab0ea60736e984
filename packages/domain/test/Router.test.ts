import { describe, expect, it } from "@effect/vitest"
import { CatalogModel, type ModelChunk } from "@huddle/domain/models/Model"
import { ModelProviders, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import * as Router from "@huddle/domain/models/Router"
import { Chunk, Duration, Effect, Either, Fiber, Layer, Option, Schedule, Stream, TestClock } from "effect"

const model = new CatalogModel({
  id: "endless",
  tier: "standard",
  provider: "endless",
  price: { input_per_1k: 1, output_per_1k: 1 },
  context_window: 1000,
  max_output_tokens: 100
})

// A provider that never stops: one token a second.
const endless = Layer.succeed(ModelProviders, {
  get: () =>
    Option.some({
      name: "endless",
      kind: "openai-compatible",
      stream: () => Stream.repeat(Stream.make<[ModelChunk]>({ _tag: "Delta", text: "x" }), Schedule.spaced("1 second"))
    })
})

// A provider that is always busy, and asks to be tried again in 8 seconds.
const busy = Layer.succeed(ModelProviders, {
  get: () =>
    Option.some({
      name: "endless",
      kind: "openai-compatible",
      stream: () =>
        Stream.fail(
          new ProviderFailure({
            provider: "endless",
            model: "endless",
            reason: "rate_limited",
            retryable: true,
            retryAfter: Duration.seconds(8),
            message: "busy"
          })
        )
    })
})

describe("router", () => {
  it.effect("ends a call that runs past its limit with a failure, after what it produced", () =>
    Effect.gen(function*() {
      const router = yield* Router.Router
      const fiber = yield* router.stream([model], { messages: [], maxOutputTokens: 10 }).pipe(
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray),
        Effect.either,
        Effect.fork
      )
      yield* TestClock.adjust(Duration.seconds(60))
      const outcome = yield* Fiber.join(fiber)
      expect(Either.isLeft(outcome)).toBe(true)
      if (Either.isLeft(outcome)) expect(outcome.left.message).toContain("ran past its limit of 5s")
    }).pipe(
      Effect.provide(Router.layer.pipe(Layer.provide(endless))),
      Effect.provide(Layer.succeed(Router.RouterPolicy, { ...Router.defaultPolicy, maxDuration: Duration.seconds(5) }))
    ))

  it.effect("a retry that would start past the limit is not waited for: the call fails at its limit", () =>
    Effect.gen(function*() {
      const router = yield* Router.Router
      const fiber = yield* router.stream([model], { messages: [], maxOutputTokens: 10 }).pipe(
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray),
        Effect.either,
        Effect.fork
      )
      yield* TestClock.adjust(Duration.seconds(5))
      const outcome = yield* Fiber.join(fiber)
      expect(Either.isLeft(outcome)).toBe(true)
      if (Either.isLeft(outcome)) expect(outcome.left.message).toContain("ran past its limit of 5s")
    }).pipe(
      Effect.provide(Router.layer.pipe(Layer.provide(busy))),
      Effect.provide(Layer.succeed(Router.RouterPolicy, { ...Router.defaultPolicy, maxDuration: Duration.seconds(5) }))
    ))

  it.effect("a provider that is only a stream and goes silent is given up on at the limit", () =>
    Effect.gen(function*() {
      const router = yield* Router.Router
      const fiber = yield* router.stream([model], { messages: [], maxOutputTokens: 10 }).pipe(Stream.runCollect, Effect.either, Effect.fork)
      yield* TestClock.adjust(Duration.seconds(5))
      const outcome = yield* Fiber.join(fiber)
      expect(Either.isLeft(outcome)).toBe(true)
      if (Either.isLeft(outcome)) expect(outcome.left.message).toContain("ran past its limit of 5s")
    }).pipe(
      Effect.provide(Router.layer.pipe(Layer.provide(Layer.succeed(ModelProviders, {
        get: () => Option.some({ name: "endless", kind: "openai-compatible", stream: () => Stream.never })
      })))),
      Effect.provide(Layer.succeed(Router.RouterPolicy, { ...Router.defaultPolicy, maxDuration: Duration.seconds(5) }))
    ))

  it.effect("tells the provider its deadline by the wall clock, whatever clock the router runs on", () => {
    const asked: Array<number | undefined> = []
    return Effect.gen(function*() {
      const router = yield* Router.Router
      yield* router.stream([model], { messages: [], maxOutputTokens: 10 }).pipe(Stream.runDrain)
      expect(asked).toHaveLength(1)
      // The test clock starts at the epoch; the deadline is the limit from now, as Date.now counts.
      expect(Math.abs(asked[0]! - (Date.now() + 5_000))).toBeLessThan(2_000)
    }).pipe(
      Effect.provide(Router.layer.pipe(Layer.provide(Layer.succeed(ModelProviders, {
        get: () =>
          Option.some({
            name: "endless",
            kind: "openai-compatible",
            stream: (request) => {
              asked.push(request.deadline)
              return Stream.make<[ModelChunk]>({ _tag: "Finish", reason: "stop" })
            }
          })
      })))),
      Effect.provide(Layer.succeed(Router.RouterPolicy, { ...Router.defaultPolicy, maxDuration: Duration.seconds(5) }))
    )
  })
})
