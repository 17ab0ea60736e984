/**
 * The request edge's locals and its access line, on a real Node server: what the request's scope
 * finalizers (a settlement, a release) log after the answer carries the request's id, and not the
 * access line's fields.
 */
import { createServer } from "node:http"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as RequestEdge from "@huddle/server/edge/RequestEdge"
import { Effect, HashMap, Layer, Logger, Scope } from "effect"
import { expect, it } from "vitest"

it("logs the access line with its fields, and the request's finalizers with its id alone", async () => {
  const lines: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []
  const logger = Logger.make(({ annotations, message }) => {
    lines.push({ message: Array.isArray(message) ? message[0] : message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
  })
  // A finalizer on the request's scope itself, as the metered call adds its settlement.
  const app = Effect.flatMap(Effect.scope, (scope) =>
    Effect.as(Scope.addFinalizer(scope, Effect.logInfo("settled")), HttpServerResponse.text("ok")))
  const layer = HttpServer.serve(app, RequestEdge.middleware).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" })),
    Layer.provide(Logger.replace(Logger.defaultLogger, logger)),
    HttpMiddleware.withTracerDisabledWhen(() => true)
  )
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const { port } = (yield* HttpServer.HttpServer).address as HttpServer.TcpAddress
    const status = yield* Effect.promise(() =>
      fetch(`http://127.0.0.1:${port}/x?secret=1`, { headers: { "x-request-id": "edge-check-1" } }).then(async (res) => (await res.text(), res.status))
    )
    expect(status).toBe(200)
    // The finalizer runs after the answer is written.
    yield* Effect.sleep("50 millis")
  }).pipe(Effect.provide(layer))))

  const access = lines.find((line) => line.message === "request")
  expect(access?.annotations).toEqual({ request_id: "edge-check-1", method: "GET", path: "/x", status: 200, duration_ms: expect.any(Number) })
  const settled = lines.find((line) => line.message === "settled")
  expect(settled?.annotations).toEqual({ request_id: "edge-check-1" })
  expect(lines.indexOf(access!)).toBeLessThan(lines.indexOf(settled!))
})
