/**
 * The composition root: which layers make the running system. `main.ts` runs it from the
 * environment; the testkit runs it in-process with its own configuration.
 */
import { createServer, type Server as NodeServer, STATUS_CODES } from "node:http"
import type { Socket } from "node:net"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
// By module, not the packages' indexes: `@effect/platform-node`'s index loads its cluster modules
// and `@huddle/adapters`' the embedded engine, which a server on PostgreSQL never runs.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Engine from "@huddle/adapters/Engine"
import { Accounts } from "@huddle/domain/accounts/Accounts"
import { ApiKeys } from "@huddle/domain/accounts/ApiKeys"
import { Workspaces } from "@huddle/domain/accounts/Workspaces"
import { OrgCredits } from "@huddle/domain/credits/OrgCredits"
import { Repositories } from "@huddle/domain/grounding/Repositories"
import { Huddles } from "@huddle/domain/huddle/Huddles"
import { Intents } from "@huddle/domain/huddle/Intents"
import { Memories } from "@huddle/domain/memories/Memories"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { Completions } from "@huddle/domain/models/Completions"
import { Router } from "@huddle/domain/models/Router"
import { Operator } from "@huddle/domain/operator/Operator"
import { OrgSettings } from "@huddle/domain/orgs/OrgSettings"
import { Organizations } from "@huddle/domain/orgs/Organizations"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { Spend } from "@huddle/domain/spend/Spend"
import { Duration, Effect, Layer } from "effect"
import { Api } from "./Api.js"
import * as ErrorTable from "./shared/ErrorTable.js"
import { Idempotent } from "./shared/Idempotency.js"
import { OperatorAuthenticated } from "./operator/OperatorApi.js"
import { RateLimited } from "./shared/RateLimit.js"
import { Authenticated } from "./shared/Security.js"
import * as ApiReference from "./edge/ApiReference.js"
import * as Console from "./edge/Console.js"
import * as ErrorTranslation from "./edge/ErrorTranslation.js"
import * as InFlight from "./edge/InFlight.js"
import * as JsonLogger from "./edge/JsonLogger.js"
import * as MetricsEndpoint from "./edge/MetricsEndpoint.js"
import { NodeRequest } from "./edge/NodeRequest.js"
import { NodeResponse } from "./edge/NodeResponse.js"
import * as RequestContext from "./edge/RequestContext.js"
import * as RequestEdge from "./edge/RequestEdge.js"
import * as ServerSpan from "./edge/ServerSpan.js"
import * as Tracing from "./edge/Tracing.js"
import { ApiKeysHttp } from "./accounts/ApiKeysHttp.js"
import { AuthenticatedLive } from "./shared/AuthenticatedLive.js"
import { AuthHttp } from "./accounts/AuthHttp.js"
import { HealthHttp } from "./health/HealthHttp.js"
import { HuddleHttp } from "./huddle/HuddleHttp.js"
import * as IdempotencyLive from "./shared/IdempotencyLive.js"
import { MeHttp } from "./accounts/MeHttp.js"
import { MemoriesHttp } from "./memories/MemoriesHttp.js"
import { OpenAiHttp } from "./openai/OpenAiHttp.js"
import { ResponsesHttp } from "./openai/ResponsesHttp.js"
import { OperatorAuthenticatedLive, OperatorHttp } from "./operator/OperatorHttp.js"
import { OrgAdminHttp } from "./orgs/OrgAdminHttp.js"
import { OrgsHttp } from "./orgs/OrgsHttp.js"
import { RateLimitedLive } from "./shared/RateLimitedLive.js"
import * as RateLimiting from "./shared/RateLimiting.js"
import * as SignInThrottle from "./accounts/SignInThrottle.js"
import { RpcHttp } from "./rpc/RpcHttp.js"
import { WorkspacesHttp } from "./workspaces/WorkspacesHttp.js"
import type { ServerConfig } from "./ServerConfig.js"

/** The engine (every domain service over storage and providers) as this server runs it. */
export const domainLayer = (config: ServerConfig) =>
  Engine.layer({
    storage: config.engine,
    starterCredits: config.starterCredits,
    sessionTtl: config.sessionTtl,
    providers: config.providers,
    catalog: config.catalog,
    liveness: config.liveness,
    creditLeases: config.creditLeases,
    council: config.council,
    grounding: config.grounding
  })

/** The middleware an API group's endpoints may name (their services are read as its layer is built). */
const groupMiddleware = [Authenticated, RateLimited, Idempotent] as const
const { isolated } = RequestContext

const apiLayer = (config: ServerConfig) =>
  HttpApiBuilder.api(Api).pipe(
    // Each group built among what it reads, which is then all its requests carry (RequestContext).
    Layer.provide([
      isolated(SqlClient.SqlClient, Router)(HealthHttp),
      isolated(Accounts, SignInThrottle.SignInThrottle, ...groupMiddleware)(AuthHttp),
      isolated(Accounts, ...groupMiddleware)(MeHttp),
      isolated(ApiKeys, ...groupMiddleware)(ApiKeysHttp),
      isolated(Organizations, OrgSettings, OrgCredits, ...groupMiddleware)(OrgsHttp),
      isolated(Organizations, OrgSettings, OrgCredits, Spend, ...groupMiddleware)(OrgAdminHttp),
      isolated(Memories, ...groupMiddleware)(MemoriesHttp),
      isolated(Repositories, Workspaces, ...groupMiddleware)(WorkspacesHttp),
      isolated(Huddles, RequestScopes, ...groupMiddleware)(HuddleHttp),
      isolated(Intents, RequestScopes, RateLimiting.RateLimits, ...groupMiddleware)(RpcHttp),
      isolated(Completions, RequestScopes, ...groupMiddleware)(OpenAiHttp),
      isolated(Completions, RequestScopes, ...groupMiddleware)(ResponsesHttp),
      isolated(Operator, Spend, OperatorAuthenticated)(OperatorHttp)
    ]),
    Layer.provide([
      SignInThrottle.layer({ trustedProxies: config.trustProxy ?? 0 }),
      AuthenticatedLive,
      RateLimitedLive,
      IdempotencyLive.IdempotentLive(),
      OperatorAuthenticatedLive(config.operatorToken)
    ])
  )

const docsLayer = Layer.mergeAll(HttpApiBuilder.middlewareOpenApi({ path: "/v1/openapi.json" }), ApiReference.layer, Console.layer)

/**
 * Metrics when a credential can read them: the port, recording into this instance's registry,
 * and `/metrics`. Otherwise the port's default, which records nothing, and no route; prom-client
 * is loaded only when they are on.
 */
const metricsLayer = (config: ServerConfig) => {
  const secrets = MetricsEndpoint.secretsOf(config.metricsToken, config.operatorToken)
  if (secrets.length === 0 || config.metricsOff === true) return Layer.empty
  const port = Layer.unwrapEffect(Effect.map(Effect.promise(() => import("@huddle/adapters/observability/PrometheusMetrics")), (_) => _.layer))
  return MetricsEndpoint.layer(secrets).pipe(Layer.provideMerge(port))
}

/**
 * Closes the connections no request is using: those whose last answer ended (Node's own idle
 * list) and those that never sent a byte, which Node counts as busy (it times their first
 * request's headers from the connection on). Browsers open such spare connections ahead of the
 * requests they may make; left open, each held shutdown for the whole grace period.
 */
const idleCloser = (server: NodeServer) => {
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
const drainOnShutdown = (server: NodeServer, closeIdle: () => void, inFlight: InFlight.InFlight, grace: Duration.Duration) =>
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

/** The HTTP server with everything behind it; it listens for as long as the layer is alive. */
export const layer = (config: ServerConfig) => {
  const node = createServer({ IncomingMessage: NodeRequest, ServerResponse: NodeResponse })
  // The port opens before the database is migrated; until the API's handler is attached (and
  // again after it is detached at shutdown) requests get a 503 rather than no answer — except
  // the liveness probe: the process runs, and a slow migration must not get it restarted.
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
  // Requests Node itself refuses (oversized headers, broken HTTP) still get the envelope.
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
  const inFlight = InFlight.make()
  const closeIdle = idleCloser(node)
  // `Context.Reference`s read per request, which no type asks for: `Metrics` by the request edge,
  // `MaxBodySize` by the platform as it reads a body.
  const served = RequestContext.serve([Metrics.Metrics, HttpIncomingMessage.MaxBodySize], (app) => inFlight.track(ServerSpan.middleware(RequestEdge.middleware(app)))).pipe(
    Layer.provide(docsLayer),
    Layer.provide(ErrorTranslation.make({ maxBodyBytes: config.maxBodyBytes })),
    Layer.provide(apiLayer(config)),
    Layer.provide(RateLimiting.layer(config.rateLimits)),
    Layer.provide(IdempotencyLive.purging()),
    Layer.provide(domainLayer(config)),
    Layer.provide(metricsLayer(config)),
    // The request's span is ServerSpan's.
    HttpMiddleware.withTracerDisabledWhen(() => true)
  )
  const server = drainOnShutdown(node, closeIdle, inFlight, config.shutdownGrace).pipe(
    Layer.provideMerge(served),
    Layer.provideMerge(NodeHttpServer.layer(() => node, { host: config.host, port: config.port })),
    Layer.orDie
  )
  // The tracer is in place before anything else is built, so that every span reaches it. Without
  // one, spans would be made and dropped: tracing is off, and the domain's spans cost nothing.
  return Layer.provide(server, config.tracing === undefined ? Layer.setTracerEnabled(false) : Tracing.layer(config.tracing))
}

export const loggerLayer = JsonLogger.layer
