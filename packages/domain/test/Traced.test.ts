/**
 * The domain's spans (`Traced.span`) are made directly rather than through `Effect.withSpan`
 * (decision 0033), so they must come out as `withSpan`'s would: the same tree, parents, links,
 * annotations, attributes, kinds and exits, and ended however their effect ends. Each program
 * here runs once with `Effect.withSpan` and once with `Traced.span`, under a tracer that records
 * what it is given, and the two records must be equal.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Traced from "@huddle/domain/observability/Traced"
import { Effect, Exit, Fiber, Layer, Option, Tracer } from "effect"

interface Made {
  readonly name: string
  readonly parent: string | undefined
  readonly kind: Tracer.SpanKind
  readonly links: ReadonlyArray<string>
  readonly attributes: Record<string, unknown>
  exit?: string
  ends: number
}

/** A tracer that keeps what each span was made with, and how it ended. */
const recording = () => {
  const made: Array<Made> = []
  let next = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const record: Made = { name, parent: Option.isSome(parent) ? (parent.value as Tracer.Span).name ?? parent.value.spanId : undefined, kind, links: links.map((l) => l.span.spanId), attributes: {}, ends: 0 }
      made.push(record)
      const span: { -readonly [K in keyof Tracer.Span]: Tracer.Span[K] } = {
        _tag: "Span", name, spanId: `span-${next++}`, traceId: "trace", parent, context, status: { _tag: "Started", startTime }, attributes: new Map(), links, sampled: true, kind,
        end: (endTime, exit) => {
          span.status = { _tag: "Ended", startTime, endTime, exit }
          record.ends++
          record.exit = Exit.isSuccess(exit) ? "success" : Exit.isInterrupted(exit) ? "interrupted" : "failure"
        },
        attribute: (key, value) => {
          record.attributes[key] = value
        },
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { made, layer: Layer.setTracer(tracer) }
}

type Spanning = <A, E, R>(effect: Effect.Effect<A, E, R>, name: string, options?: Traced.SpanOptions) => Effect.Effect<A, E, R>
const withSpan: Spanning = (effect, name, options) => {
  const { leaf: _leaf, ...rest } = options ?? {}
  // The domain's spans carry no stack (Traced's header says why).
  return Effect.withSpan(effect, name, { ...rest, captureStackTrace: false })
}
/** `Traced.span`, with every leaf made current, as `withSpan` makes every span. */
const traced: Spanning = (effect, name, options) => Effect.locally(Traced.span(effect, name, options), Traced.deep, true)

const run = <A, E>(program: (span: Spanning) => Effect.Effect<A, E>, span: Spanning) => {
  const { layer, made } = recording()
  return Effect.exit(Effect.provide(program(span), layer)).pipe(Effect.map((exit) => ({ made, exit: Exit.isSuccess(exit) ? "success" : "failure" })))
}

const same = <A, E>(program: (span: Spanning) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const effects = yield* run(program, withSpan)
    const ours = yield* run(program, traced)
    expect(ours).toEqual(effects)
    return ours
  })

describe("Traced.span makes the spans Effect.withSpan would", () => {
  it.effect("a tree: children under their parent, kinds and attributes as given, each ended with its outcome", () =>
    Effect.gen(function*() {
      const { made } = yield* same((span) =>
        span(
          Effect.all([
            span(Effect.succeed(1), "Authentication.authenticate", { kind: "internal" }),
            span(span(Effect.succeed(2), "chat economy", { kind: "client", attributes: { "gen_ai.request.model": "economy", "huddle.attempt": 1 } }), "MeteredCall.run"),
            span(Effect.fail("refused").pipe(Effect.orElseSucceed(() => 3)), "Credits.reserve")
          ]),
          "POST /v1/chat/completions",
          { kind: "server" }
        )
      )
      expect(made.map((m) => [m.name, m.parent])).toEqual([
        ["POST /v1/chat/completions", undefined],
        ["Authentication.authenticate", "POST /v1/chat/completions"],
        ["MeteredCall.run", "POST /v1/chat/completions"],
        ["chat economy", "MeteredCall.run"],
        ["Credits.reserve", "POST /v1/chat/completions"]
      ])
      expect(made.every((m) => m.exit !== undefined)).toBe(true)
    }))

  it.effect("a failure ends its span as failed, and its parent", () =>
    Effect.gen(function*() {
      const { exit, made } = yield* same((span) => span(span(Effect.fail("no credit"), "Credits.reserve"), "MeteredCall.run"))
      expect(exit).toBe("failure")
      expect(made.map((m) => m.exit)).toEqual(["failure", "failure"])
    }))

  it.effect("annotations and links set around a span are on it; an explicit parent and a root are honoured", () =>
    Effect.gen(function*() {
      const outside: Tracer.ExternalSpan = Tracer.externalSpan({ spanId: "caller", traceId: "trace" })
      const { made } = yield* same((span) =>
        span(
          Effect.all([
            span(Effect.void, "annotated").pipe(Effect.annotateSpans("huddle.org", "org_1")),
            span(Effect.void, "linked").pipe(Effect.linkSpans(outside, { why: "batch" })),
            span(Effect.void, "adopted", { parent: outside }),
            span(Effect.void, "alone", { root: true })
          ]),
          "request"
        )
      )
      expect(made.find((m) => m.name === "annotated")?.attributes).toEqual({ "huddle.org": "org_1" })
      expect(made.find((m) => m.name === "linked")?.links).toEqual(["caller"])
      expect(made.find((m) => m.name === "adopted")?.parent).toBe("caller")
      expect(made.find((m) => m.name === "alone")?.parent).toBeUndefined()
    }))

  it.effect("an interrupted effect ends its span as interrupted", () =>
    Effect.gen(function*() {
      for (const span of [withSpan, traced]) {
        const { layer, made } = recording()
        const fiber = yield* Effect.fork(Effect.provide(span(span(Effect.never, "chat economy"), "MeteredCall.run"), layer))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(fiber)
        expect(made.map((m) => [m.name, m.exit])).toEqual([["MeteredCall.run", "interrupted"], ["chat economy", "interrupted"]])
      }
    }))

  it.effect("a span its effect ended itself is not ended again", () =>
    Effect.gen(function*() {
      const { made } = yield* same((span) => span(Effect.flatMap(Effect.currentSpan, (own) => Effect.sync(() => own.end(1n, Exit.void))), "Credits.settle"))
      expect(made.map((m) => [m.name, m.ends])).toEqual([["Credits.settle", 1]])
    }))

  it.effect("a leaf is recorded but not made the current span: what it runs hangs beside it", () =>
    Effect.gen(function*() {
      const { layer, made } = recording()
      yield* Effect.provide(Traced.span(Traced.span(Traced.span(Effect.void, "sql.execute"), "Credits.reserve", { leaf: true }), "MeteredCall.run"), layer)
      expect(made.map((m) => [m.name, m.parent])).toEqual([["MeteredCall.run", undefined], ["Credits.reserve", "MeteredCall.run"], ["sql.execute", "MeteredCall.run"]])
    }))

  it.effect("with the tracer disabled, nothing is made and the effect runs as it is", () =>
    Effect.gen(function*() {
      const { layer, made } = recording()
      const value = yield* Effect.provide(Traced.span(Effect.succeed(7), "Credits.reserve"), Layer.merge(layer, Layer.setTracerEnabled(false)))
      expect(value).toBe(7)
      expect(made).toEqual([])
    }))
})
