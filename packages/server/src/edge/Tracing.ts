/**
 * Exporting traces: Effect's own spans (every request's server span, the domain services', the
 * upstream calls') sent as OTLP over HTTP to the collector the operator names, for the share of
 * traces the sampler keeps. Without a collector, no exporter is loaded and nothing leaves the
 * process.
 */
import * as Traced from "@huddle/domain/observability/Traced"
import { randomFillSync } from "node:crypto"
import { Duration, Effect, Layer, Option, Tracer } from "effect"

/**
 * Which traces are kept (OpenTelemetry's samplers): a new trace with probability `ratio`, decided
 * on its trace id; with `parentBased`, a span whose parent made the decision (a caller's
 * `traceparent`, or a span of this process) follows it.
 */
export interface Sampler {
  readonly parentBased: boolean
  readonly ratio: number
}

export interface Options {
  /** The OTLP/HTTP traces endpoint (`…/v1/traces`). */
  readonly url: string
  readonly serviceName: string
  /** Sent with every export (e.g. a collector's API key), from `OTEL_EXPORTER_OTLP_HEADERS`. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** How often spans are sent (default 5 s; tests use less). */
  readonly exportInterval?: Duration.DurationInput | undefined
  /** The longest one export may take (default 10 s, OpenTelemetry's; tests use less). */
  readonly exportTimeout?: Duration.DurationInput | undefined
  /** Default: every trace (`parentbased_always_on`). */
  readonly sampler?: Sampler | undefined
  /** Record the SQL client's spans too (`HUDDLE_TRACE_SQL=on`); default: they are left out. */
  readonly sql?: boolean | undefined
}

export const samplerNames = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const
export type SamplerName = (typeof samplerNames)[number]

/** `OTEL_TRACES_SAMPLER` and its `OTEL_TRACES_SAMPLER_ARG` (the ratio of the `traceidratio` ones; default 1). */
export const samplerOf = (name: SamplerName, arg: number | undefined): Sampler => ({
  parentBased: name.startsWith("parentbased_"),
  ratio: name.endsWith("always_on") ? 1 : name.endsWith("always_off") ? 0 : arg ?? 1
})

const ignore = () => {}

/**
 * Random ids as hex, cut from a pool filled 4 KiB at a time: one call into the system's source
 * per 256 trace ids. A call per id was measured at about a third of an unrecorded trace's cost.
 */
const randomHex = (() => {
  const pool = Buffer.alloc(4096)
  let at = pool.length
  return (bytes: number): string => {
    if (at + bytes > pool.length) {
      randomFillSync(pool)
      at = 0
    }
    const hex = pool.toString("hex", at, at + bytes)
    at += bytes
    return hex
  }
})()

/** The fields of a span that records nothing, whatever is done with it. */
interface Inert {
  readonly spanId: string
  readonly traceId: string
  readonly parent: Option.Option<Tracer.AnySpan>
  readonly sampled: boolean
}

const inert = (name: string, ids: Inert, context: Tracer.Span["context"], links: ReadonlyArray<Tracer.SpanLink>, startTime: bigint, kind: Tracer.SpanKind): Tracer.Span => ({
  _tag: "Span",
  name,
  ...ids,
  context,
  status: { _tag: "Started", startTime },
  attributes: new Map(),
  links,
  kind,
  end: ignore,
  attribute: ignore,
  event: ignore,
  addLinks: ignore
})

/** A span that is not recorded: it carries the ids (for `traceparent`, with the sampled flag off) and nothing else. */
const unsampled = (parent: Option.Option<Tracer.AnySpan>, traceId: string): Inert => ({
  spanId: randomHex(8),
  traceId,
  parent,
  sampled: false
})

/**
 * A span that records nothing and stands for its parent: whatever is made under it hangs under
 * the parent, as though it were not there.
 */
const transparent = (parent: Tracer.AnySpan): Inert => ({ spanId: parent.spanId, traceId: parent.traceId, parent: Option.some(parent), sampled: parent.sampled })

/**
 * A span of no trace: recorded nowhere and passed to no one (the SQL client does not propagate
 * its spans), so it needs no ids; W3C's all-zero ids say so. What is made under it is unrecorded
 * too.
 */
const unrecorded: Inert = { spanId: "0000000000000000", traceId: "00000000000000000000000000000000", parent: Option.none(), sampled: false }

/** Whether a trace id falls within `ratio` (its last 52 bits, as a fraction). */
const withinRatio = (traceId: string, ratio: number) => ratio >= 1 || (ratio > 0 && Number.parseInt(traceId.slice(-13), 16) / 2 ** 52 < ratio)

/** `inner`, for the spans `sampler` keeps; the others unrecorded. */
export const sampling = (inner: Tracer.Tracer, sampler: Sampler): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      if (sampler.parentBased && Option.isSome(parent)) {
        return parent.value.sampled
          ? inner.span(name, parent, context, links, startTime, kind, options)
          : inert(name, unsampled(parent, parent.value.traceId), context, links, startTime, kind)
      }
      if (sampler.ratio >= 1) return inner.span(name, parent, context, links, startTime, kind, options)
      // Decided on the trace id it would have: a caller's, or a new one, which an unrecorded span keeps.
      const traceId = Option.isSome(parent) ? parent.value.traceId : randomHex(16)
      return withinRatio(traceId, sampler.ratio)
        ? inner.span(name, parent, context, links, startTime, kind, options)
        : inert(name, unsampled(parent, traceId), context, links, startTime, kind)
    },
    // The inner tracer's own: the fiber runtime calls it around every step it runs.
    context: inner.context
  })

/**
 * `inner` without the SQL client's spans (`sql.execute` for every statement, `sql.transaction`):
 * each is transparent, so what runs in a transaction hangs under the transaction's parent; made
 * with no parent (the server's background work: lease batches, heartbeats, the change feed), it
 * is unrecorded, and starts no trace of its own.
 */
export const withoutSql = (inner: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      // Under an unrecorded span, nothing is recorded (whatever made the span: ours, Effect's, a library's).
      if (Option.isSome(parent) && parent.value.traceId === unrecorded.traceId) return inert(name, unrecorded, context, links, startTime, kind)
      if (!name.startsWith("sql.")) return inner.span(name, parent, context, links, startTime, kind, options)
      return inert(name, Option.isSome(parent) ? transparent(parent.value) : unrecorded, context, links, startTime, kind)
    },
    // The inner tracer's own: the fiber runtime calls it around every step it runs.
    context: inner.context
  })

/**
 * The tracer, for the layers built after it. The exporter's modules are loaded here, so that a
 * server that exports nothing never loads them.
 */
export const layer = (options: Options) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const [OtlpTracer, OtlpSerialization, HttpBody, HttpClient, HttpClientError, NodeHttpClient] = yield* Effect.promise(() =>
      Promise.all([
        import("@effect/opentelemetry/OtlpTracer"),
        import("@effect/opentelemetry/OtlpSerialization"),
        import("@effect/platform/HttpBody"),
        import("@effect/platform/HttpClient"),
        import("@effect/platform/HttpClientError"),
        import("@effect/platform-node/NodeHttpClient")
      ])
    )
    // Posted through an undici pool rather than `fetch`, which copies each batch into a web
    // stream (about 7 % of what a span costs to end and export, measured apart). The pool leaves
    // timeouts to its caller (it waits an hour for headers), so each export has OpenTelemetry's
    // default of 10 s: a collector that takes connections but never answers costs a batch, not
    // an hour of them. Built in this scope, before the tracer: it is closed after the tracer's
    // last export at shutdown.
    const client = Layer.effect(
      HttpClient.HttpClient,
      Effect.map(HttpClient.HttpClient, HttpClient.transform((response, request) =>
        Effect.timeoutFail(response, {
          duration: options.exportTimeout ?? Duration.seconds(10),
          onTimeout: () => new HttpClientError.RequestError({ request, reason: "Transport", description: "the collector did not answer in time" })
        })))
    ).pipe(Layer.provide(NodeHttpClient.layerUndici))
    // OTLP's JSON, as `OtlpSerialization.layerJson` writes it, turned into bytes by `Buffer.from`
    // rather than the `TextEncoder` it uses: eight times faster on a batch (0.12 against 0.95 µs
    // a span, measured apart), and the largest single share of a recorded span's export.
    const json = (data: unknown) => HttpBody.uint8Array(Buffer.from(JSON.stringify(data), "utf8"), "application/json")
    const serialization = Layer.succeed(OtlpSerialization.OtlpSerialization, OtlpSerialization.OtlpSerialization.of({ traces: json, metrics: json, logs: json }))
    const exporter = yield* Layer.build(Layer.merge(serialization, client))
    const exporting = yield* OtlpTracer.make({
      url: options.url,
      resource: { serviceName: options.serviceName },
      headers: options.headers,
      exportInterval: options.exportInterval ?? Duration.seconds(5),
      shutdownTimeout: Duration.seconds(3)
    }).pipe(Effect.provide(exporter))
    const sampler = options.sampler ?? { parentBased: true, ratio: 1 }
    // Even when every new trace is kept, a caller's traceparent that says not sampled is obeyed.
    const sampled = sampling(exporting, sampler)
    // With SQL spans recorded, the domain's leaves become parents, for the statements they run.
    return options.sql === true
      ? Layer.merge(Layer.setTracer(sampled), Layer.locallyScoped(Traced.deep, true))
      : Layer.setTracer(withoutSql(sampled))
  }))

/**
 * The OpenTelemetry SDK's variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` appended; `OTEL_SERVICE_NAME` (default
 * `huddle`); `OTEL_EXPORTER_OTLP_HEADERS` as `key=value,key=value` (values URL-encoded);
 * `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT`, in milliseconds.
 */
export const fromVariables = (env: {
  readonly endpoint?: string | undefined
  readonly tracesEndpoint?: string | undefined
  readonly timeoutMillis?: number | undefined
  readonly tracesTimeoutMillis?: number | undefined
  readonly serviceName?: string | undefined
  readonly headers?: string | undefined
  readonly sampler?: Sampler | undefined
  readonly sql?: boolean | undefined
}): Options | undefined => {
  const url = env.tracesEndpoint ?? (env.endpoint === undefined ? undefined : `${env.endpoint.replace(/\/+$/, "")}/v1/traces`)
  if (url === undefined) return undefined
  const headers: Record<string, string> = {}
  for (const pair of (env.headers ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at > 0) headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
  }
  const timeout = env.tracesTimeoutMillis ?? env.timeoutMillis
  return {
    url,
    serviceName: env.serviceName ?? "huddle",
    headers,
    ...(env.sampler === undefined ? {} : { sampler: env.sampler }),
    ...(timeout === undefined ? {} : { exportTimeout: Duration.millis(timeout) }),
    sql: env.sql === true
  }
}
