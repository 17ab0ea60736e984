/**
 * Spans for a domain service's public methods, so that every caller (the server, an embedder)
 * sees them in its traces: each method returning an Effect or a Stream runs in a span named
 * `Service.method`. With no tracer configured the spans are Effect's own and go nowhere.
 */
import { Effect, Stream } from "effect"

const isStream = (value: unknown): value is Stream.Stream<unknown, unknown, unknown> =>
  typeof value === "object" && value !== null && Stream.StreamTypeId in value

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
      if (Effect.isEffect(result)) return Effect.withSpan(result, name)
      if (isStream(result)) return Stream.withSpan(result, name)
      return result
    }
  }
  return out as S
}
