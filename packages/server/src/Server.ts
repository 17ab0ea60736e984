/**
 * The composition root: which layers make the running system. `main.ts` runs it from the
 * environment; the testkit runs it in-process with its own configuration.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
// By module, not the package's index, which loads the embedded engine a server on PostgreSQL never runs.
import * as Engine from "@huddle/adapters/Engine"
import { Layer } from "effect"
import * as ApiLive from "./ApiLive.js"
import * as ApiReference from "./edge/ApiReference.js"
import * as Console from "./edge/Console.js"
import * as ErrorTranslation from "./edge/ErrorTranslation.js"
import * as MetricsEndpoint from "./edge/MetricsEndpoint.js"
import * as NodeServer from "./edge/NodeServer.js"
import * as Tracing from "./edge/Tracing.js"
import type { ServerConfig } from "./ServerConfig.js"
import * as IdempotencyLive from "./shared/IdempotencyLive.js"
import * as RateLimiting from "./shared/RateLimiting.js"

/** The engine (every domain service over storage and providers) as this server runs it. */
const domain = (config: ServerConfig) =>
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

const pages = Layer.mergeAll(HttpApiBuilder.middlewareOpenApi({ path: "/v1/openapi.json" }), ApiReference.layer, Console.layer)

/** The HTTP server with everything behind it; it listens for as long as the layer is alive. */
export const layer = (config: ServerConfig) =>
  NodeServer.layer(config, (requests) =>
    requests.pipe(
      Layer.provide(pages),
      Layer.provide(ErrorTranslation.make({ maxBodyBytes: config.maxBodyBytes })),
      Layer.provide(ApiLive.layer(config)),
      Layer.provide(RateLimiting.layer(config.rateLimits)),
      Layer.provide(IdempotencyLive.purging()),
      Layer.provide(domain(config)),
      Layer.provide(MetricsEndpoint.configured(config))
    )).pipe(
      // The tracer is in place before anything else is built, so that every span reaches it.
      // Without one, spans would be made and dropped: tracing is off, and the domain's spans cost nothing.
      Layer.provide(config.tracing === undefined ? Layer.setTracerEnabled(false) : Tracing.layer(config.tracing))
    )
