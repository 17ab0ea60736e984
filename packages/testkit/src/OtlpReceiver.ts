/**
 * An OTLP/HTTP trace receiver on loopback, as a collector would be: it accepts `POST /v1/traces`
 * in OTLP's JSON encoding and keeps the spans, flattened, for tests to read as a tree.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface Span {
  readonly traceId: string
  readonly spanId: string
  /** Empty for a root span. */
  readonly parentSpanId: string
  readonly name: string
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly status: number
  readonly service: string
}

export interface OtlpReceiver {
  /** The traces endpoint to export to. */
  readonly url: string
  readonly spans: () => ReadonlyArray<Span>
  /** The spans of one trace, once `done` says they are all there; rejects after `timeoutMs`. */
  readonly trace: (traceId: string, done: (spans: ReadonlyArray<Span>) => boolean, timeoutMs?: number) => Promise<ReadonlyArray<Span>>
  readonly stop: () => Promise<void>
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean }
type KeyValue = { key: string; value: AnyValue }
type Export = {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<KeyValue> }
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string
        spanId: string
        parentSpanId?: string
        name: string
        kind?: number
        attributes?: Array<KeyValue>
        status?: { code?: number }
      }>
    }>
  }>
}

const valueOf = (value: AnyValue): string | number | boolean =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue ?? value.boolValue ?? "")

const attributesOf = (list: Array<KeyValue> | undefined) => Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]))

export const start = async (): Promise<OtlpReceiver> => {
  const received: Array<Span> = []
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end()
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Export
      for (const resource of body.resourceSpans ?? []) {
        const service = String(attributesOf(resource.resource?.attributes)["service.name"] ?? "")
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            received.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              kind: span.kind ?? 0,
              attributes: attributesOf(span.attributes),
              status: span.status?.code ?? 0,
              service
            })
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans: () => received,
    trace: async (traceId, done, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const spans = received.filter((span) => span.traceId === traceId)
        if (done(spans)) return spans
        if (Date.now() > deadline) throw new Error(`trace ${traceId}: not complete after ${timeoutMs} ms (${spans.map((s) => s.name).join(", ")})`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
