/**
 * The metrics port over `prom-client`, in a registry of its own per instance (two servers in one
 * process, as in the tests, never mix their counts). Every instrument of the catalogue is
 * registered up front, so that a scrape lists them all, and the process's own metrics (CPU,
 * memory, event-loop delay, GC) are collected beside them.
 *
 * A recording goes to a cell of our own, found by its label values in nested maps, and reaches
 * prom-client when it is scraped. prom-client's own recording validates the labels and builds a
 * key string from them every time, which cost about as much as the rest of a completion's metrics
 * (some twenty recordings a request); a cell costs a few map lookups of strings the caller
 * already holds.
 */
import * as Instruments from "@huddle/domain/observability/Instruments"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { Effect, Layer } from "effect"
import * as Prometheus from "prom-client"
import { type Exporter, PrometheusExporter } from "./PrometheusExporter.js"

type LabelValues = Readonly<Record<string, string>>

/** An instrument's series, each a cell found by its label values in the instrument's order. */
class Series<Cell> {
  private readonly root = new Map<string, unknown>()
  constructor(private readonly names: ReadonlyArray<string>, private readonly make: () => Cell) {}

  cell(labels: LabelValues): Cell {
    let map = this.root
    const last = this.names.length - 1
    for (let i = 0; i < last; i++) {
      const value = labels[this.names[i]!]!
      let next = map.get(value) as Map<string, unknown> | undefined
      if (next === undefined) map.set(value, next = new Map())
      map = next
    }
    const value = last < 0 ? "" : labels[this.names[last]!]!
    let cell = map.get(value) as Cell | undefined
    if (cell === undefined) map.set(value, cell = this.make())
    return cell
  }

  /** Every series with its labels (for a scrape). */
  entries(): Array<readonly [LabelValues, Cell]> {
    const out: Array<readonly [LabelValues, Cell]> = []
    const walk = (map: Map<string, unknown>, depth: number, labels: Record<string, string>) => {
      for (const [value, next] of map) {
        const named = depth < this.names.length ? { ...labels, [this.names[depth]!]: value } : labels
        if (depth >= this.names.length - 1) out.push([named, next as Cell])
        else walk(next as Map<string, unknown>, depth + 1, named)
      }
    }
    walk(this.root, 0, {})
    return out
  }
}

interface Amount {
  value: number
  /** Whether it changed since the last scrape. */
  changed: boolean
}

interface Distribution {
  /** Observations per bucket (not cumulative); the last is above the highest bound. */
  readonly counts: Array<number>
  sum: number
  count: number
}

/** A counter or gauge: cells, handed to prom-client at each scrape (its `collect` hook). */
const amounts = (instrument: Metrics.Counter<string> | Metrics.Gauge<string>, registry: Prometheus.Registry) => {
  const series = new Series<Amount>(instrument.labels, () => ({ value: 0, changed: true }))
  const common = { name: instrument.name, help: instrument.help, labelNames: [...instrument.labels], registers: [registry] }
  function collect(this: Prometheus.Counter | Prometheus.Gauge) {
    for (const [labels, cell] of series.entries()) {
      if (!cell.changed) continue
      cell.changed = false
      if (this instanceof Prometheus.Counter) {
        this.inc(labels, cell.value)
        cell.value = 0
      } else this.set(labels, cell.value)
    }
  }
  // A counter's cell holds what was added since the last scrape; a gauge's, its value.
  if (instrument.kind === "counter") new Prometheus.Counter({ ...common, collect })
  else new Prometheus.Gauge({ ...common, collect })
  return series
}

/**
 * A histogram whose series are cells. Its scrape is prom-client's histogram exposition
 * (cumulative `_bucket` series up to `le="+Inf"`, then `_sum` and `_count`), which `Registry`
 * formats: it reads a histogram through `getForPromString`, an untyped method of prom-client's
 * own histogram, replaced here (PrometheusMetrics.test compares the two expositions).
 */
class CellHistogram extends Prometheus.Histogram {
  constructor(
    private readonly instrument: Metrics.Histogram<string>,
    registry: Prometheus.Registry,
    private readonly series: Series<Distribution>
  ) {
    super({ name: instrument.name, help: instrument.help, labelNames: [...instrument.labels], buckets: [...instrument.buckets], registers: [registry] })
  }

  override async get(): Promise<Prometheus.MetricObjectWithValues<Prometheus.MetricValueWithName<string>>> {
    const { buckets, help, name } = this.instrument
    const values: Array<Prometheus.MetricValueWithName<string>> = []
    for (const [labels, cell] of this.series.entries()) {
      let cumulative = 0
      buckets.forEach((bound, i) => {
        cumulative += cell.counts[i]!
        values.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: `${name}_bucket` })
      })
      values.push(
        { labels: { le: "+Inf", ...labels }, value: cell.count, metricName: `${name}_bucket` },
        { labels, value: cell.sum, metricName: `${name}_sum` },
        { labels, value: cell.count, metricName: `${name}_count` }
      )
    }
    // prom-client's types declare the type as a numeric enum, which its code never exports: its own value is the word.
    return { name, help, type: "histogram" as unknown as Prometheus.MetricType, aggregator: "sum", collect: ignore, values }
  }

  getForPromString() {
    return this.get()
  }
}

const ignore = () => {}

const distributions = (instrument: Metrics.Histogram<string>, registry: Prometheus.Registry) => {
  const bounds = instrument.buckets
  const series = new Series<Distribution>(instrument.labels, () => ({ counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 }))
  new CellHistogram(instrument, registry, series)
  // A histogram without labels is listed from the start, at zero, as prom-client lists its own.
  if (instrument.labels.length === 0) series.cell({})
  return (labels: LabelValues, value: number) => {
    if (!Number.isFinite(value)) return
    const cell = series.cell(labels)
    let i = 0
    while (i < bounds.length && value > bounds[i]!) i++
    cell.counts[i]!++
    cell.sum += value
    cell.count++
  }
}

export const make = (): { readonly metrics: Metrics.Service; readonly exporter: Exporter } => {
  const registry = new Prometheus.Registry()
  Prometheus.collectDefaultMetrics({ register: registry })
  const counters = new Map<string, Series<Amount>>()
  const gauges = new Map<string, Series<Amount>>()
  const histograms = new Map<string, (labels: LabelValues, value: number) => void>()
  for (const instrument of Object.values(Instruments).filter(Metrics.isInstrument)) {
    if (instrument.kind === "counter") counters.set(instrument.name, amounts(instrument, registry))
    else if (instrument.kind === "gauge") gauges.set(instrument.name, amounts(instrument, registry))
    else histograms.set(instrument.name, distributions(instrument, registry))
  }

  // An instrument outside the catalogue is a programming error; it must not fail a request.
  const metrics: Metrics.Service = {
    enabled: true,
    add: (instrument, labels, value = 1) => {
      const series = instrument.kind === "counter" ? counters.get(instrument.name) : gauges.get(instrument.name)
      // A counter only goes up.
      if (series === undefined || !Number.isFinite(value) || (instrument.kind === "counter" && value <= 0)) return
      const cell = series.cell(labels)
      cell.value += value
      cell.changed = true
    },
    set: (instrument, labels, value) => {
      const cell = gauges.get(instrument.name)?.cell(labels)
      if (cell === undefined || !Number.isFinite(value)) return
      cell.value = value
      cell.changed = true
    },
    observe: (instrument, labels, value) => histograms.get(instrument.name)?.(labels, value)
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
