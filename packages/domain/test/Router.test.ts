import { describe, expect, it } from "@effect/vitest"
import { CatalogModel, type ModelChunk, type ModelRequest } from "@huddle/domain/models/Model"
import { ModelProviders, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import * as Router from "@huddle/domain/models/Router"
import * as Instruments from "@huddle/domain/observability/Instruments"
import * as Metrics from "@huddle/domain/observability/Metrics"
import * as UpstreamClock from "@huddle/domain/observability/UpstreamClock"
import { Cause, Chunk, type Context, Deferred, Duration, Effect, Either, Exit, Fiber, Layer, Option, Schedule, Scope, Stream, TestClock, Tracer } from "effect"

const model = new CatalogModel({
  id: "endless",
  tier: "standard",
  provider: "endless",
  pricing: { input: 1000, output: 1000 },
  context_window: 1000,
  max_output_tokens: 100
})

/** The router over one provider that answers every call with `stream`, under a limit of 5 s; its metrics into `recorded`. */
const withProvider = (stream: (request: ModelRequest) => Stream.Stream<ModelChunk, ProviderFailure>, recorded: Array<Recorded> = []) =>
  <A, E>(effect: Effect.Effect<A, E, Router.Router>) =>
    effect.pipe(
      Effect.provide(Router.layer.pipe(
        Layer.provide(Layer.succeed(ModelProviders, {
          get: () => Option.some({ name: "endless", kind: "openai-compatible", stream })
        })),
        Layer.provide(Layer.succeed(Metrics.Metrics, recordingMetrics(recorded)))
      )),
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
  it.effect("ends a call that runs past its limit with a failure, after what it produced, counted as timed out", () => {
    const recorded: Array<Recorded> = []
    // One token a second, for ever.
    return failsAtLimit("60 seconds").pipe(
      Effect.tap(() => expect(outcomesOf(recorded)).toEqual(["timed_out"])),
      withProvider(() => Stream.repeat(Stream.make<[ModelChunk]>({ _tag: "Delta", text: "x" }), Schedule.spaced("1 second")), recorded)
    )
  })

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

  it.effect("a provider that is only a stream and goes silent is given up on at the limit, counted as timed out", () => {
    const recorded: Array<Recorded> = []
    return failsAtLimit("5 seconds").pipe(
      Effect.tap(() => expect(outcomesOf(recorded)).toEqual(["timed_out"])),
      withProvider(() => Stream.never, recorded)
    )
  })

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

/** One recording of the metrics port: the instrument's name, its labels, the value. */
interface Recorded {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}

/** The metrics port, recording into `into` (what an exporter would be handed). */
/** The outcomes counted for upstream attempts, in order. */
const outcomesOf = (recorded: ReadonlyArray<Recorded>) =>
  recorded.filter((r) => r.name === Instruments.upstreamCalls.name).map((r) => r.labels.outcome)

const recordingMetrics = (into: Array<Recorded>): Metrics.Service => ({
  enabled: true,
  add: (instrument, labels, value = 1) => void into.push({ name: instrument.name, labels: { ...labels }, value }),
  set: (instrument, labels, value) => void into.push({ name: instrument.name, labels: { ...labels }, value }),
  observe: (instrument, labels, value) => void into.push({ name: instrument.name, labels: { ...labels }, value })
})

/** A span as an exporter would receive it: every `end` it was given is kept. */
class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = Math.random().toString(16).slice(2)
  readonly traceId = "recorded"
  readonly sampled = true
  readonly attributes = new Map<string, unknown>()
  readonly links: Array<Tracer.SpanLink> = []
  readonly ends: Array<Exit.Exit<unknown, unknown>> = []
  status: Tracer.SpanStatus
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    readonly kind: Tracer.SpanKind,
    startTime: bigint
  ) {
    this.status = { _tag: "Started", startTime }
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    this.ends.push(exit)
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event() {}
  addLinks(links: ReadonlyArray<Tracer.SpanLink>) {
    this.links.push(...links)
  }
}

const recordingTracer = (into: Array<RecordedSpan>): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, _links, startTime, kind) => {
      const span = new RecordedSpan(name, parent, context, kind, startTime)
      into.push(span)
      return span
    },
    context: (f) => f()
  })

const answering: ModelChunk = { _tag: "Delta", text: "half an answer" }
const boom = new Error("the provider broke")

/** Providers of one model, as a stream or opened, that answer `answering` and then do what `then` says. */
const providers = {
  stream: (then: "hang" | "die" | "stop", closed: Array<string>) => ({
    name: "endless",
    kind: "openai-compatible" as const,
    stream: () =>
      Stream.make(answering).pipe(
        Stream.concat(then === "die" ? Stream.die(boom) : Stream.never),
        Stream.ensuring(Effect.sync(() => closed.push("upstream")))
      )
  }),
  opened: (then: "hang" | "die" | "stop", closed: Array<string>) => ({
    name: "endless",
    kind: "openai-compatible" as const,
    stream: () => Stream.never,
    open: () =>
      Effect.gen(function*() {
        yield* Scope.addFinalizer(yield* Effect.scope, Effect.sync(() => closed.push("upstream")))
        let sent = false
        const pull: Effect.Effect<Chunk.Chunk<ModelChunk>, Option.Option<ProviderFailure>> = Effect.suspend(() => {
          if (!sent) {
            sent = true
            return Effect.succeed(Chunk.of(answering))
          }
          return then === "die" ? Effect.die(boom) : Effect.never
        })
        return pull
      })
  })
}

/**
 * A call to a provider that answers part of an answer and then `then` ("hang": the client leaves,
 * the call is interrupted; "stop": its consumer stops pulling after that part, and ends well;
 * "die": the provider dies with a defect), run in a request with an
 * upstream clock, with metrics and traces recorded; `check` is given what the attempt left behind.
 */
const abnormalEnd = (
  kind: keyof typeof providers,
  then: "hang" | "die" | "stop",
  check: (left: {
    readonly exit: Exit.Exit<unknown, unknown>
    readonly spans: ReadonlyArray<RecordedSpan>
    readonly recorded: ReadonlyArray<Recorded>
    readonly clock: UpstreamClock.UpstreamClock
    readonly closed: ReadonlyArray<string>
  }) => void
) => {
  const spans: Array<RecordedSpan> = []
  const recorded: Array<Recorded> = []
  const closed: Array<string> = []
  const clock = UpstreamClock.make()
  return Effect.gen(function*() {
    const router = yield* Router.Router
    const answered = yield* Deferred.make<void>()
    const answer = router.stream([model], { messages: [], maxOutputTokens: 10 })
    const fiber = yield* (then === "stop" ? Stream.takeUntil(answer, (chunk) => chunk._tag === "Delta") : answer).pipe(
      Stream.tap((chunk) => chunk._tag === "Delta" ? Deferred.succeed(answered, undefined) : Effect.void),
      Stream.runDrain,
      Effect.locally(UpstreamClock.current, clock),
      Effect.fork
    )
    if (then === "hang") {
      // The client leaves mid-answer.
      yield* Deferred.await(answered)
      yield* Fiber.interrupt(fiber)
    }
    const exit = yield* Fiber.await(fiber)
    check({ exit, spans, recorded, clock, closed })
  }).pipe(
    Effect.provide(Router.layer.pipe(
      Layer.provide(Layer.succeed(ModelProviders, { get: () => Option.some(providers[kind](then, closed)) })),
      Layer.provide(Layer.succeed(Metrics.Metrics, recordingMetrics(recorded)))
    )),
    Effect.provide(Layer.succeed(Router.RouterPolicy, { ...Router.defaultPolicy, maxDuration: Duration.seconds(5) })),
    Effect.withTracer(recordingTracer(spans))
  )
}

type LeftBehind = Parameters<Parameters<typeof abnormalEnd>[2]>[0]

/** The attempt's span was ended once, with an exit that `endedAs` accepts: an exporter sends it, as an error or a cancellation. */
const spanEnded = (left: LeftBehind, endedAs: (exit: Exit.Exit<unknown, unknown>) => boolean) => {
  const attempts = left.spans.filter((span) => span.name === "chat endless")
  expect(attempts).toHaveLength(1)
  expect(attempts[0]!.ends).toHaveLength(1)
  expect(endedAs(attempts[0]!.ends[0]!)).toBe(true)
}

/** What the attempt leaves in the request's upstream clock and the metrics, however it ended; `outcome` counted once. */
const bookkept = (left: LeftBehind, outcome: "cancelled" | "error") => {
  // The upstream clock no longer counts the attempt: time that passes now is Huddle's own.
  expect(left.clock.inFlight).toBe(0)
  const now = performance.now()
  expect(UpstreamClock.elapsed(left.clock, now + 60_000)).toBe(UpstreamClock.elapsed(left.clock, now))
  // The attempt's duration is observed once, under its model.
  const durations = left.recorded.filter((r) => r.name === Instruments.upstreamDuration.name)
  expect(durations.map((r) => r.labels)).toEqual([{ provider: "endless", model: "endless" }])
  expect(durations[0]!.value).toBeGreaterThanOrEqual(0)
  // Counted once, as what it was (above all not an `ok`).
  expect(left.recorded.filter((r) => r.name === Instruments.upstreamCalls.name).map((r) => r.labels))
    .toEqual([{ provider: "endless", model: "endless", outcome }])
}

/** All of it, and the upstream request closed. */
const leftBehind = (left: LeftBehind, endedAs: (exit: Exit.Exit<unknown, unknown>) => boolean, outcome: "cancelled" | "error") => {
  spanEnded(left, endedAs)
  bookkept(left, outcome)
  expect(left.closed).toEqual(["upstream"])
}

const interrupted = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
/** Died with the provider's defect (a stream's channel may hand on a copy of the error, not the same object). */
const died = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return false
  const defect = Option.getOrUndefined(Cause.dieOption(exit.cause))
  return defect instanceof Error && defect.message === boom.message
}

describe("router: an attempt that does not end by itself", () => {
  for (const kind of ["stream", "opened"] as const) {
    it.effect(`a client that leaves mid-answer (${kind} provider): the span ends as interrupted, the clock stops, one duration`, () =>
      abnormalEnd(kind, "hang", (left) => {
        expect(interrupted(left.exit)).toBe(true)
        leftBehind(left, interrupted, "cancelled")
      }))

    it.effect(`a consumer that stops pulling mid-answer (${kind} provider): counted and ended as cancelled, not as an answer`, () =>
      abnormalEnd(kind, "stop", (left) => {
        expect(Exit.isSuccess(left.exit)).toBe(true)
        leftBehind(left, interrupted, "cancelled")
      }))

    it.effect(`a provider that dies mid-answer (${kind} provider): the call dies, the span ends with the defect, the clock stops, one duration`, () =>
      abnormalEnd(kind, "die", (left) => {
        expect(died(left.exit)).toBe(true)
        leftBehind(left, died, "error")
      }))
  }
})

/** A call whose provider dies as it opens it (inside its Effect), before any pull; `check` as in `abnormalEnd`. */
const diesOpening = (check: (left: LeftBehind) => void) => {
  const spans: Array<RecordedSpan> = []
  const recorded: Array<Recorded> = []
  const clock = UpstreamClock.make()
  return Effect.gen(function*() {
    const router = yield* Router.Router
    const exit = yield* router.stream([model], { messages: [], maxOutputTokens: 10 }).pipe(
      Stream.runDrain,
      Effect.locally(UpstreamClock.current, clock),
      Effect.exit
    )
    check({ exit, spans, recorded, clock, closed: [] })
  }).pipe(
    Effect.provide(Router.layer.pipe(
      Layer.provide(Layer.succeed(ModelProviders, {
        get: () =>
          Option.some({
            name: "endless",
            kind: "openai-compatible",
            stream: () => Stream.never,
            open: () => Effect.die(boom)
          })
      })),
      Layer.provide(Layer.succeed(Metrics.Metrics, recordingMetrics(recorded)))
    )),
    Effect.provide(Layer.succeed(Router.RouterPolicy, { ...Router.defaultPolicy, maxDuration: Duration.seconds(5) })),
    Effect.withTracer(recordingTracer(spans))
  )
}

describe("router: an attempt whose provider dies as it opens the call", () => {
  it.effect("the call dies; the clock stops, one duration is recorded and one error counted", () =>
    diesOpening((left) => {
      expect(died(left.exit)).toBe(true)
      bookkept(left, "error")
    }))

  // The attempt's scope closes with the call's exit, so its span ends with the defect, though
  // the attempt never became the current one.
  it.effect("the span ends with the defect, not as interrupted", () =>
    diesOpening((left) => spanEnded(left, died)))
})
