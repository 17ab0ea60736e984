/**
 * Exporting traces: Effect's own spans (every request's server span, the domain services', the
 * upstream calls') sent as OTLP over HTTP to the collector the operator names. Without one, no
 * exporter is loaded and nothing leaves the process.
 */
import { Duration, Effect, Layer } from "effect"

export interface Options {
  /** The OTLP/HTTP traces endpoint (`…/v1/traces`). */
  readonly url: string
  readonly serviceName: string
  /** Sent with every export (e.g. a collector's API key), from `OTEL_EXPORTER_OTLP_HEADERS`. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** How often spans are sent (default 5 s; tests use less). */
  readonly exportInterval?: Duration.DurationInput | undefined
}

/**
 * The tracer, for the layers built after it. The exporter's modules are loaded here, so that a
 * server that exports nothing never loads them.
 */
export const layer = (options: Options) =>
  Layer.unwrapEffect(Effect.promise(async () => {
    const [OtlpTracer, OtlpSerialization, FetchHttpClient] = await Promise.all([
      import("@effect/opentelemetry/OtlpTracer"),
      import("@effect/opentelemetry/OtlpSerialization"),
      import("@effect/platform/FetchHttpClient")
    ])
    return OtlpTracer.layer({
      url: options.url,
      resource: { serviceName: options.serviceName },
      headers: options.headers,
      exportInterval: options.exportInterval ?? Duration.seconds(5),
      shutdownTimeout: Duration.seconds(3)
    }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
  }))

/**
 * The OpenTelemetry SDK's variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` appended; `OTEL_SERVICE_NAME` (default
 * `huddle`); `OTEL_EXPORTER_OTLP_HEADERS` as `key=value,key=value` (values URL-encoded).
 */
export const fromVariables = (env: {
  readonly endpoint?: string | undefined
  readonly tracesEndpoint?: string | undefined
  readonly serviceName?: string | undefined
  readonly headers?: string | undefined
}): Options | undefined => {
  const url = env.tracesEndpoint ?? (env.endpoint === undefined ? undefined : `${env.endpoint.replace(/\/+$/, "")}/v1/traces`)
  if (url === undefined) return undefined
  const headers: Record<string, string> = {}
  for (const pair of (env.headers ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at > 0) headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
  }
  return { url, serviceName: env.serviceName ?? "huddle", headers }
}
