/**
 * Node's HTTP server as Huddle runs it: what it answers before the API is attached (and after it
 * is detached), the envelope for requests Node itself refuses, the request edge every request
 * goes through, and shutdown, which drains before anything else closes.
 */
import { createServer, type Server, STATUS_CODES } from "node:http"
import type { Socket } from "node:net"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
// By module, not the package's index, which loads its cluster modules.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { Duration, Effect, Layer } from "effect"
import * as ErrorTable from "../shared/ErrorTable.js"
import * as InFlight from "./InFlight.js"
import { NodeRequest } from "./NodeRequest.js"
import { NodeResponse } from "./NodeResponse.js"
import * as RequestContext from "./RequestContext.js"
import * as RequestEdge from "./RequestEdge.js"
import * as ServerSpan from "./ServerSpan.js"

export interface Options {
  readonly host: string
  readonly port: number
  /** How long shutdown waits for the requests in flight before closing their connections. */
  readonly shutdownGrace: Duration.Duration
}

/**
 * The port opens before the database is migrated; until the API's handler is attached (and
 * again after it is detached at shutdown) requests get a 503 rather than no answer — except the
 * liveness probe: the process runs, and a slow migration must not get it restarted.
 */
const answerUntilServed = (node: Server) =>
  node.on("request", (request, response) => {
    if (node.listenerCount("request") > 1) return
    if (request.method === "GET" && request.url?.split("?")[0] === "/healthz") {
      response.writeHead(200, { "content-type": "application/json" })
      return response.end(JSON.stringify({ status: "ok" }))
    }
    const { code, status } = ErrorTable.table.ServiceUnavailable
    response.writeHead(status, { "content-type": "application/json", "retry-after": "1" })
    response.end(JSON.stringify({ error: code, message: "The server is starting or stopping; retry shortly" }))
  })

/** Requests Node itself refuses (oversized headers, broken HTTP) still get the envelope. */
const answerClientErrors = (node: Server) =>
  node.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy()
    const [{ code, status }, message] = error.code === "HPE_HEADER_OVERFLOW"
      ? [ErrorTable.table.RequestHeadersTooLarge, "The request headers are too large"]
      : [ErrorTable.table.InvalidRequest, "The request is not valid HTTP"]
    const body = JSON.stringify({ error: code, message })
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
    )
  })

/**
 * Closes the connections no request is using: those whose last answer ended (Node's own idle
 * list) and those that never sent a byte, which Node counts as busy (it times their first
 * request's headers from the connection on). Browsers open such spare connections ahead of the
 * requests they may make; left open, each held shutdown for the whole grace period.
 */
const idleCloser = (server: Server) => {
  const open = new Set<Socket>()
  server.on("connection", (socket: Socket) => {
    open.add(socket)
    // Not a "data" listener: one would take the socket off Node's native parsing path.
    socket.once("close", () => open.delete(socket))
  })
  return () => {
    server.closeIdleConnections()
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy()
  }
}

/**
 * Shutdown drains before anything else closes: this layer is built last, so its finalizer runs
 * first. It stops accepting connections, closes the idle ones at once (and each as it becomes
 * idle) and waits for the requests in flight, while the database and the request handler are
 * still there; connections still busy after the grace period are closed, so that shutdown
 * always ends. Then it waits for the handlers themselves: a request whose client is gone (or
 * was cut at the grace) is still settling its credits.
 */
const drainOnShutdown = (server: Server, closeIdle: () => void, inFlight: InFlight.InFlight, grace: Duration.Duration) =>
  Layer.scopedDiscard(
    Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        if (!server.listening) return resume(Effect.void)
        const force = setTimeout(() => server.closeAllConnections(), Duration.toMillis(grace))
        // Keep-alive connections become idle as their last response ends: close them then.
        const sweep = setInterval(closeIdle, 50)
        server.close(() => {
          clearTimeout(force)
          clearInterval(sweep)
          resume(Effect.void)
        })
        closeIdle()
      }).pipe(
        // Their clients are gone, so they were interrupted: what is left is their finalizers.
        Effect.zipRight(inFlight.drained(grace)),
        Effect.flatMap((drained) =>
          drained ? Effect.void : Effect.logWarning("requests still running at shutdown").pipe(Effect.annotateLogs({ requests: inFlight.count() }))
        )
      )
    )
  )

/**
 * Every request through the edge (its id, span, access log, in-flight count) to the API's
 * router. `Context.Reference`s read per request, which no type asks for: `Metrics` by the
 * request edge, `MaxBodySize` by the platform as it reads a body.
 */
const requestsThrough = (inFlight: InFlight.InFlight) =>
  RequestContext.serve(
    [Metrics.Metrics, HttpIncomingMessage.MaxBodySize],
    (app) => inFlight.track(ServerSpan.middleware(RequestEdge.middleware(app)))
  )

/**
 * The HTTP server with everything behind it; it listens for as long as the layer is alive.
 * `behind` provides the requests' edge with the API and what it runs on; the port opens before
 * it is built.
 */
export const layer = <A, E, R>(options: Options, behind: (requests: ReturnType<typeof requestsThrough>) => Layer.Layer<A, E, R>) => {
  const node = createServer({ IncomingMessage: NodeRequest, ServerResponse: NodeResponse })
  answerUntilServed(node)
  answerClientErrors(node)
  const inFlight = InFlight.make()
  // The request's span is ServerSpan's.
  const served = behind(requestsThrough(inFlight)).pipe(HttpMiddleware.withTracerDisabledWhen(() => true))
  return drainOnShutdown(node, idleCloser(node), inFlight, options.shutdownGrace).pipe(
    Layer.provideMerge(served),
    Layer.provideMerge(NodeHttpServer.layer(() => node, { host: options.host, port: options.port })),
    Layer.orDie
  )
}
