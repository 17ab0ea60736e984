/**
 * Spans for the domain, cheap when nobody traces. A span costs a context copy and, by Effect's
 * default, a captured stack; with the tracer disabled (a server that exports no traces), or in a
 * trace the sampler left out, neither is paid: the effect runs as it is. What is traced carries
 * no stack, and is made through the fiber's tracer directly (`open`, decision 0033): the spans
 * `Effect.withSpan` would make, for whichever tracer is installed (an embedder's too).
 *
 * A leaf (a call that traces nothing of its own below it: a credit reservation, a policy lookup)
 * is recorded with its start and end but not made the current span: Effect keeps the current span
 * as a service of the fiber's context, and providing one copies the whole context (some 75
 * services in a request: about as much as making and exporting the span itself). Deep traces
 * (`deep`, set by whoever records spans below the leaves, such as an adapter's) make every span
 * the current one, so that what a leaf ran hangs under it.
 */
import { Chunk, Clock, Context, Effect, type Exit, type Fiber, FiberRef, HashMap, Option, Tracer } from "effect"

/** Whether spans are recorded below the domain's leaves (its adapters'); off by default. */
export const deep: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

export interface SpanOptions extends Tracer.SpanOptions {
  /** Nothing below it makes spans worth keeping: it is not made the current span (unless `deep`). */
  readonly leaf?: boolean | undefined
}

/**
 * `effect` in a span named `name` while the tracer is enabled and the trace is recorded; as it is
 * otherwise (a trace the sampler left out gets no more spans under its unrecorded ones).
 */
export const span = <A, E, R>(effect: Effect.Effect<A, E, R>, name: string, options?: SpanOptions): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => {
    if (!recordedIn(fiber)) return effect
    const { context, leaf, ...spanOptions } = options ?? {}
    // A span given a context of its own (one that may ask that nothing propagate from it) is
    // left to Effect's path.
    if (context !== undefined) return Effect.withSpan(effect, name, { ...spanOptions, context, captureStackTrace: false })
    const opened = open(fiber, name, spanOptions)
    return Effect.onExit(
      leaf === true && !fiber.getFiberRef(deep) ? effect : Effect.locallyWith(effect, FiberRef.currentContext, Context.add(Tracer.ParentSpan, opened.span)),
      (exit) => Effect.sync(() => opened.end(exit))
    )
  })

/**
 * The span Effect's `useSpan` would make in `fiber` (its parent, links, annotations, start
 * time), and its end. Made directly: Effect's own path first copies all of the fiber's
 * references to read two of them, a copy per span (about half of Effect's own share of a
 * recorded span, measured apart). For the server's span as for the domain's.
 */
export const open = (fiber: Fiber.RuntimeFiber<unknown, unknown>, name: string, options: Omit<Tracer.SpanOptions, "context">): {
  readonly span: Tracer.Span
  readonly end: (exit: Exit.Exit<unknown, unknown>) => void
} => {
  const current = fiber.currentSpan
  const parent = options.parent !== undefined ? Option.some(options.parent) : options.root === true || current === undefined ? Option.none() : Option.some(current)
  const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
  const timing = fiber.getFiberRef(FiberRef.currentTracerTimingEnabled)
  const inherited = fiber.getFiberRef(FiberRef.currentTracerSpanLinks)
  const links = Chunk.isEmpty(inherited) ? options.links ?? [] : [...Chunk.toReadonlyArray(inherited), ...(options.links ?? [])]
  const made = fiber.currentTracer.span(name, parent, Context.empty(), links, timing ? clock.unsafeCurrentTimeNanos() : 0n, options.kind ?? "internal", options)
  HashMap.forEach(fiber.getFiberRef(FiberRef.currentTracerSpanAnnotations), (value, key) => made.attribute(key, value))
  if (options.attributes !== undefined) for (const [key, value] of Object.entries(options.attributes)) made.attribute(key, value)
  return {
    span: made,
    // As Effect's: a span something else has ended already is left as it is.
    end: (exit) => {
      if (made.status._tag !== "Ended") made.end(timing ? clock.unsafeCurrentTimeNanos() : 0n, exit)
    }
  }
}

/** Whether a span made in `fiber` would be recorded: the tracer is enabled and the trace is sampled. */
const recordedIn = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean => {
  if (!fiber.getFiberRef(FiberRef.currentTracerEnabled)) return false
  const parent = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
  return Option.isNone(parent) || parent.value.sampled
}

/** Whether a span made here would be recorded (see `span`). */
export const recording: Effect.Effect<boolean> = Effect.withFiberRuntime((fiber) => Effect.succeed(recordedIn(fiber)))

/**
 * A service's public methods, each returning an Effect run in a span named `Service.method`, so
 * that every caller (the server, an embedder) sees them in its traces. Methods returning streams
 * are left as they are: what they run is traced inside them. `leaves` names the methods that
 * call no traced service (their spans are leaves, see above): a method added to them that later
 * calls one would see that call's span hang beside its own rather than under it.
 */
export const traced = <S extends object>(service: string, methods: S, options?: { readonly leaves?: ReadonlyArray<keyof S & string> }): S => {
  const leaves = new Set<string>(options?.leaves ?? [])
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(methods)) {
    if (typeof value !== "function") {
      out[key] = value
      continue
    }
    const name = `${service}.${key}`
    const spanOptions = leaves.has(key) ? { leaf: true } : undefined
    out[key] = (...args: Array<unknown>) => {
      const result = value(...args)
      return Effect.isEffect(result) ? span(result, name, spanOptions) : result
    }
  }
  return out as S
}
