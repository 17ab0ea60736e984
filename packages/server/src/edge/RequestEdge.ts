/**
 * The outermost layer of every request: the request id (taken from `X-Request-Id` when it is
 * well-formed, made otherwise) on the response and on every log line, one structured access-log
 * line, and the request's metrics: its route, status and dialect, the whole time (to a stream's
 * last byte), the time to the first byte, and Huddle's own time (less the upstream calls'). It
 * never logs headers, bodies or query strings, which may hold secrets.
 */
import { randomUUID } from "node:crypto"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Instruments from "@huddle/domain/observability/Instruments"
import * as Metrics from "@huddle/domain/observability/Metrics"
import * as UpstreamClock from "@huddle/domain/observability/UpstreamClock"
import { Effect, FiberRef, HashMap } from "effect"
import * as Retention from "../shared/Retention.js"
import { NodeResponse } from "./NodeResponse.js"
import { routeOf } from "./Routes.js"

const requestIdShape = /^[A-Za-z0-9._:@/+=-]{1,128}$/

/** The id of the request being answered, for answers that ask the client to quote it. */
export const currentRequestId = FiberRef.unsafeMake<string | undefined>(undefined)

/**
 * The request's metrics, recorded once its answer is complete: Node's last write of it ('finish')
 * and the handler's return have both happened, in whichever order (the platform writes a whole
 * answer before the handler's caller sees it; a stream's last byte goes out long after).
 */
const measure = (metrics: Metrics.Service, request: HttpServerRequest.HttpServerRequest, started: number, clock: UpstreamClock.UpstreamClock) => {
  let answered: { readonly response: HttpServerResponse.HttpServerResponse } | undefined
  let ended: number | undefined
  let recorded = false
  const record = (status: string, firstByte: number, end: number) => {
    if (recorded) return
    recorded = true
    const route = routeOf(request.method, request.url)
    const labels = { route: route.name, dialect: route.dialect }
    metrics.add(Instruments.httpRequests, { ...labels, status })
    metrics.observe(Instruments.httpDuration, labels, (end - started) / 1000)
    metrics.observe(Instruments.httpFirstByte, labels, (firstByte - started) / 1000)
    metrics.observe(Instruments.httpAdded, labels, Math.max(0, end - started - UpstreamClock.elapsed(clock, end)) / 1000)
  }
  const complete = () => {
    if (answered !== undefined && ended !== undefined) record(String(Retention.statusOf(answered.response)), headAt() ?? ended, ended)
  }
  const node = NodeHttpServerRequest.toServerResponse(request)
  // The first byte is the status line, which Huddle's responses note (a server of another's: the end).
  const headAt = () => (node instanceof NodeResponse ? node.headAt : undefined)
  node.once("finish", () => {
    ended = performance.now()
    complete()
  })
  // The connection closed before the answer was complete: the client went away (nginx's 499).
  node.once("close", () => {
    if (ended !== undefined) return
    const now = performance.now()
    record("499", headAt() ?? now, now)
  })
  return (response: HttpServerResponse.HttpServerResponse) => {
    answered = { response }
    complete()
  }
}

/**
 * The request's locals, set for the rest of its fiber: its id on the log lines and for the
 * answers that quote it, and its upstream clock. Set, rather than each provided for a region with
 * `Effect.locally` (a release and two copies of the fiber's references each: a third of what a
 * `GET /healthz` ran). The fiber is the request's alone; what runs in it after the answer is the
 * request's scope closing, whose finalizers (a settlement, a release, what they fork to retry)
 * log with the request's id, as they should. Each is set on its own: `Effect.setFiberRefs` would
 * set every reference the fiber holds, one copy each.
 */
const enter = (requestId: string, clock: UpstreamClock.UpstreamClock) =>
  FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set("request_id", requestId as unknown)).pipe(
    Effect.zipRight(FiberRef.set(currentRequestId, requestId)),
    Effect.zipRight(FiberRef.set(UpstreamClock.current, clock))
  )

/**
 * The access-log line, its fields annotated for this line alone: the request's finalizers log
 * after it, and must not read as access lines.
 */
const accessLog = (fields: Readonly<Record<string, unknown>>) =>
  Effect.flatMap(
    FiberRef.getAndUpdate(FiberRef.currentLogAnnotations, (annotations) => {
      let out = annotations
      for (const key in fields) out = HashMap.set(out, key, fields[key])
      return out
    }),
    (before) => Effect.zipRight(Effect.logInfo("request"), FiberRef.set(FiberRef.currentLogAnnotations, before))
  )

export const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const given = request.headers["x-request-id"]
    const requestId = given !== undefined && requestIdShape.test(given) ? given : randomUUID()
    const started = performance.now()
    const clock = UpstreamClock.make()
    return Effect.flatMap(Metrics.Metrics, (metrics) => {
      const answered = metrics.enabled ? measure(metrics, request, started, clock) : undefined
      return enter(requestId, clock).pipe(
        Effect.zipRight(HttpApp.appendPreResponseHandler((_request, response) =>
          // `request-id` is Anthropic's name for it, which its SDKs read (`_request_id`).
          Effect.succeed(HttpServerResponse.setHeaders(response, { "x-request-id": requestId, "request-id": requestId }))
        )),
        Effect.zipRight(app),
        Effect.tap((response) => {
          answered?.(response)
          return accessLog({
            method: request.method,
            path: request.url.split("?")[0],
            status: response.status,
            duration_ms: Math.round((performance.now() - started) * 100) / 100
          })
        })
      )
    })
  })
