import { describe, expect, it } from "@effect/vitest"
import { CatalogModel, type ModelChunk, type ModelRequest } from "@huddle/domain/models/Model"
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

/** The router over one provider that answers every call with `stream`, under a limit of 5 s. */
const withProvider = (stream: (request: ModelRequest) => Stream.Stream<ModelChunk, ProviderFailure>) =>
  <A, E>(effect: Effect.Effect<A, E, Router.Router>) =>
    effect.pipe(
      Effect.provide(Router.layer.pipe(Layer.provide(Layer.succeed(ModelProviders, {
        get: () => Option.some({ name: "endless", kind: "openai-compatible", stream })
      })))),
      Effect.provide(Layer.succeed(Router.RouterPolicy, { ...Router.defaultPolicy, maxDuration: Duration.seconds(5) }))
    )

/** A call, with the test clock moved on by `after`: it must have failed at its limit. */
const failsAtLimit = (after: Duration.DurationInput) =>
  Effect.gen(function*() {
    const router = yield* Router.Router
    const fiber = yield* router.stream([model], { messages: [], maxOutputTokens: 10 }).pipe(Stream.runCollect, Effect.either, Effect.fork)
    yield* TestClock.adjust(after)
    const outcome = yield* Fiber.join(fiber)
    expect(Either.isLeft(outcome)).toBe(true)
    if (Either.isLeft(outcome)) expect(outcome.left.message).toContain("ran past its limit of 5s")
  })

describe("router", () => {
  it.effect("ends a call that runs past its limit with a failure, after what it produced", () =>
    // One token a second, for ever.
    failsAtLimit("60 seconds").pipe(
      withProvider(() => Stream.repeat(Stream.make<[ModelChunk]>({ _tag: "Delta", text: "x" }), Schedule.spaced("1 second")))
    ))

  it.effect("hands on what arrived past the limit (it was produced, and is paid for), then fails at the limit", () => {
    const seen: Array<string> = []
    return Effect.gen(function*() {
      const router = yield* Router.Router
      const fiber = yield* router.stream([model], { messages: [], maxOutputTokens: 10 }).pipe(
        Stream.tap((chunk) => Effect.sync(() => chunk._tag === "Delta" && seen.push(chunk.text))),
        Stream.runDrain,
        Effect.either,
        Effect.fork
      )
      yield* TestClock.adjust("6 seconds")
      const outcome = yield* Fiber.join(fiber)
      expect(seen).toEqual(["late"])
      expect(Either.isLeft(outcome) && outcome.left.message).toContain("ran past its limit of 5s")
    }).pipe(
      // An opened call whose one batch arrives a second past the limit.
      Effect.provide(Router.layer.pipe(Layer.provide(Layer.succeed(ModelProviders, {
        get: () =>
          Option.some({
            name: "endless",
            kind: "openai-compatible",
            stream: () => Stream.never,
            open: () => Effect.succeed(Effect.as(Effect.sleep("6 seconds"), Chunk.of<ModelChunk>({ _tag: "Delta", text: "late" })))
          })
      })))),
      Effect.provide(Layer.succeed(Router.RouterPolicy, { ...Router.defaultPolicy, maxDuration: Duration.seconds(5) }))
    )
  })

  it.effect("a retry that would start past the limit is not waited for: the call fails at its limit", () =>
    // Always busy, asking to be tried again in 8 seconds.
    failsAtLimit("5 seconds").pipe(
      withProvider(() =>
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
      )
    ))

  it.effect("a provider that is only a stream and goes silent is given up on at the limit", () =>
    failsAtLimit("5 seconds").pipe(withProvider(() => Stream.never)))

  it.effect("tells the provider its deadline by the wall clock, whatever clock the router runs on", () => {
    const asked: Array<number | undefined> = []
    return Effect.gen(function*() {
      const router = yield* Router.Router
      yield* router.stream([model], { messages: [], maxOutputTokens: 10 }).pipe(Stream.runDrain)
      expect(asked).toHaveLength(1)
      // The test clock starts at the epoch; the deadline is the limit from now, as Date.now counts.
      expect(Math.abs(asked[0]! - (Date.now() + 5_000))).toBeLessThan(2_000)
    }).pipe(withProvider((request) => {
      asked.push(request.deadline)
      return Stream.make<[ModelChunk]>({ _tag: "Finish", reason: "stop" })
    }))
  })
})
