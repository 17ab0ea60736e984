/** What serves `/metrics`: the Prometheus exposition of this instance's registry (see PrometheusMetrics). */
import { Context } from "effect"

export interface Exporter {
  /** What `/metrics` answers, in the registry's exposition format. */
  readonly scrape: () => Promise<{ readonly contentType: string; readonly body: string }>
}

export class PrometheusExporter extends Context.Tag("@huddle/adapters/PrometheusExporter")<PrometheusExporter, Exporter>() {}
