/**
 * The outermost layer of every request: the request id (taken from `X-Request-Id` when it is
 * well-formed, made otherwise) on the response and on every log line, and one structured
 * access-log line. It never logs headers, bodies or query strings, which may hold secrets.
 */
import { randomUUID } from "node:crypto"
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, FiberRef } from "effect"

const requestIdShape = /^[A-Za-z0-9._:@/+=-]{1,128}$/

/** The id of the request being answered, for answers that ask the client to quote it. */
export const currentRequestId = FiberRef.unsafeMake<string | undefined>(undefined)

export const middleware = (app: HttpApp.Default): HttpApp.Default =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const given = request.headers["x-request-id"]
    const requestId = given !== undefined && requestIdShape.test(given) ? given : randomUUID()
    const started = performance.now()
    return HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", requestId))
    ).pipe(
      Effect.zipRight(app),
      Effect.tap((response) =>
        Effect.logInfo("request").pipe(
          Effect.annotateLogs({
            method: request.method,
            path: request.url.split("?")[0],
            status: response.status,
            duration_ms: Math.round((performance.now() - started) * 100) / 100
          })
        )
      ),
      Effect.annotateLogs("request_id", requestId),
      Effect.locally(currentRequestId, requestId)
    )
  })
