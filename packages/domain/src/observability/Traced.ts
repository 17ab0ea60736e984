/**
 * Spans for the domain, cheap when nobody traces. A span costs a context copy and, by Effect's
 * default, a captured stack; with the tracer disabled (a server that exports no traces) neither
 * is paid: the effect runs as it is. With it enabled, what is traced carries no stack.
 */
import { Effect, FiberRef, type Tracer } from "effect"

/** `effect` in a span named `name` while the tracer is enabled; as it is otherwise. */
export const span = <A, E, R>(effect: Effect.Effect<A, E, R>, name: string, options?: Tracer.SpanOptions): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.withSpan(effect, name, { ...options, captureStackTrace: false }) : effect
  )

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
