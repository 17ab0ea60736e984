/**
 * The metrics port over `prom-client`, in a registry of its own per instance (two servers in one
 * process, as in the tests, never mix their counts). Every instrument of the catalogue is
 * registered up front, so that a scrape lists them all, and the process's own metrics (CPU,
 * memory, event-loop delay, GC) are collected beside them.
 */
import * as Instruments from "@huddle/domain/observability/Instruments"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { Effect, Layer } from "effect"
import * as Prometheus from "prom-client"
import { type Exporter, PrometheusExporter } from "./PrometheusExporter.js"

type Recorder = Prometheus.Counter | Prometheus.Gauge | Prometheus.Histogram

const isInstrument = (value: unknown): value is Metrics.Instrument =>
  typeof value === "object" && value !== null && "kind" in value && "name" in value

export const make = (): { readonly metrics: Metrics.Service; readonly exporter: Exporter } => {
  const registry = new Prometheus.Registry()
  Prometheus.collectDefaultMetrics({ register: registry })
  const recorders = new Map<string, Recorder>()
  for (const instrument of Object.values(Instruments).filter(isInstrument)) {
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
  // An instrument outside the catalogue is a programming error; it must not fail a request.
  const recorder = (instrument: Metrics.Instrument) => recorders.get(instrument.name)

  const metrics: Metrics.Service = {
    enabled: true,
    add: (instrument, labels, value = 1) => {
      const r = recorder(instrument)
      if (r instanceof Prometheus.Counter) {
        if (value > 0) r.inc(labels, value)
      } else if (r instanceof Prometheus.Gauge) r.inc(labels, value)
    },
    set: (instrument, labels, value) => {
      const r = recorder(instrument)
      if (r instanceof Prometheus.Gauge) r.set(labels, value)
    },
    observe: (instrument, labels, value) => {
      const r = recorder(instrument)
      if (r instanceof Prometheus.Histogram) r.observe(labels, value)
    }
  }
  const exporter: Exporter = {
    scrape: async () => ({ contentType: registry.contentType, body: await registry.metrics() })
  }
  return { metrics, exporter }
}

/** The port and its exporter, for a server that serves `/metrics`. */
export const layer = Layer.unwrapEffect(Effect.sync(() => {
  const { exporter, metrics } = make()
  return Layer.merge(Layer.succeed(PrometheusExporter, exporter), Layer.succeed(Metrics.Metrics, metrics))
}))
