import * as PrometheusMetrics from "@huddle/adapters/observability/PrometheusMetrics"
import * as Instruments from "@huddle/domain/observability/Instruments"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import * as Prometheus from "prom-client"

const catalogue = (Object.values(Instruments) as ReadonlyArray<unknown>).filter(Metrics.isInstrument)

interface Recording {
  readonly instrument: Metrics.Instrument
  readonly how: "add" | "set" | "observe"
  readonly labels: Record<string, string>
  readonly value: number
}

/** Label values that collide often, so that series are recorded into more than once. */
const labelValue = FastCheck.constantFrom("a", "b", "200", "/v1/chat/completions")
const recording: FastCheck.Arbitrary<Recording> = FastCheck.constantFrom(...catalogue).chain((instrument) =>
  FastCheck.record({
    labels: FastCheck.tuple(...instrument.labels.map(() => labelValue)).map((values) => Object.fromEntries(instrument.labels.map((name, i) => [name, values[i]!]))),
    value: instrument.kind === "histogram"
      // Values on, between and beyond the bounds.
      ? FastCheck.oneof(FastCheck.constantFrom(...instrument.buckets), FastCheck.double({ min: 0, max: 1_000, noNaN: true }))
      // Quarters, whose sums are exact in any order: cells add a scrape's worth before prom-client does.
      : instrument.kind === "counter"
      ? FastCheck.integer({ min: 0, max: 400 }).map((n) => n / 4)
      : FastCheck.integer({ min: -4_000, max: 4_000 }).map((n) => n / 4),
    how: instrument.kind === "histogram" ? FastCheck.constant("observe" as const) : instrument.kind === "counter" ? FastCheck.constant("add" as const) : FastCheck.constantFrom("add" as const, "set" as const)
  }).map((rest) => ({ instrument, ...rest }))
)

/** prom-client recording every call itself: what the exposition must equal. */
const reference = () => {
  const registry = new Prometheus.Registry()
  const recorders = new Map<string, Prometheus.Counter | Prometheus.Gauge | Prometheus.Histogram>()
  for (const instrument of catalogue) {
    const common = { name: instrument.name, help: instrument.help, labelNames: [...instrument.labels], registers: [registry] }
    recorders.set(
      instrument.name,
      instrument.kind === "counter"
        ? new Prometheus.Counter(common)
        : instrument.kind === "gauge"
        ? new Prometheus.Gauge(common)
        : new Prometheus.Histogram({ ...common, buckets: [...instrument.buckets] })
    )
  }
  return {
    record: ({ how, instrument, labels, value }: Recording) => {
      const r = recorders.get(instrument.name)
      if (r instanceof Prometheus.Counter) {
        if (value > 0) r.inc(labels, value)
      } else if (r instanceof Prometheus.Gauge) {
        if (how === "set") r.set(labels, value)
        else r.inc(labels, value)
      } else r?.observe(labels, value)
    },
    text: () => registry.metrics()
  }
}

/** The catalogue's lines of an exposition, in a stable order (the series' order is not the format's). */
const ours = (text: string) => text.split("\n").filter((line) => /^(# (HELP|TYPE) )?huddle_/.test(line)).sort()

describe("PrometheusMetrics", () => {
  it.effect.prop(
    "exposes what prom-client would have, had it recorded every call itself, scrape after scrape",
    [FastCheck.array(FastCheck.array(recording, { maxLength: 60 }), { minLength: 1, maxLength: 3 })],
    ([batches]) =>
      Effect.gen(function*() {
        const { exporter, metrics } = PrometheusMetrics.make()
        const expected = reference()
        for (const batch of batches) {
          for (const r of batch) {
            expected.record(r)
            if (r.how === "observe") metrics.observe(r.instrument as Metrics.Histogram<string>, r.labels, r.value)
            else if (r.how === "set") metrics.set(r.instrument as Metrics.Gauge<string>, r.labels, r.value)
            else metrics.add(r.instrument as Metrics.Counter<string>, r.labels, r.value)
          }
          const scraped = yield* Effect.promise(() => exporter.scrape())
          expect(ours(scraped.body)).toEqual(ours(yield* Effect.promise(() => expected.text())))
        }
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it("lists every instrument of the catalogue before anything is recorded", async () => {
    const { exporter } = PrometheusMetrics.make()
    const text = (await exporter.scrape()).body
    for (const instrument of catalogue) expect(text).toContain(`# TYPE ${instrument.name} ${instrument.kind}`)
  })
})
