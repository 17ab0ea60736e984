/**
 * Spans for the domain, cheap when nobody traces. A span costs a context copy and, by Effect's
 * default, a captured stack; with the tracer disabled (a server that exports no traces), or in a
 * trace the sampler left out, neither is paid: the effect runs as it is. What is traced carries
 * no stack.
 */
import { Context, Effect, FiberRef, Option, Tracer } from "effect"

/**
 * `effect` in a span named `name` while the tracer is enabled and the trace is recorded; as it is
 * otherwise (a trace the sampler left out gets no more spans under its unrecorded ones).
 */
export const span = <A, E, R>(effect: Effect.Effect<A, E, R>, name: string, options?: Tracer.SpanOptions): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => {
    if (!fiber.getFiberRef(FiberRef.currentTracerEnabled)) return effect
    const parent = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
    return Option.isSome(parent) && !parent.value.sampled ? effect : Effect.withSpan(effect, name, { ...options, captureStackTrace: false })
  })

/**
 * A service's public methods, each returning an Effect run in a span named `Service.method`, so
 * that every caller (the server, an embedder) sees them in its traces. Methods returning streams
 * are left as they are: what they run is traced inside them.
 */
export const traced = <S extends object>(service: string, methods: S): S => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(methods)) {
    if (typeof value !== "function") {
      out[key] = value
      continue
    }
    const name = `${service}.${key}`
    out[key] = (...args: Array<unknown>) => {
      const result = value(...args)
      return Effect.isEffect(result) ? span(result, name) : result
    }
  }
  return out as S
}
