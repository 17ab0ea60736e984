/** Starts Huddle from the environment and runs it until SIGTERM or SIGINT. */
import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Database } from "@huddle/adapters"
import { Effect, Layer, Logger } from "effect"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"

const main = Effect.gen(function*() {
  const config = yield* ServerConfig.fromEnv
  const started = performance.now()
  return Layer.effectDiscard(
    Effect.gen(function*() {
      const address = yield* HttpServer.addressFormattedWith((url) => Effect.succeed(url))
      const ms = Math.round(performance.now() - started)
      yield* Effect.logInfo("huddle ready").pipe(
        Effect.annotateLogs({ url: address, storage: Database.describe(config.engine), startup_ms: ms })
      )
      // A plain line for the person who started it.
      console.log(`\nHuddle is ready at ${address} (storage: ${Database.describe(config.engine)})\n  API reference: ${address}/docs\n  OpenAPI:       ${address}/v1/openapi.json\n  Health:        ${address}/healthz  ${address}/readyz\n`)
    })
  ).pipe(
    Layer.provideMerge(Server.layer(config)),
    Layer.provide(Logger.minimumLogLevel(config.logLevel))
  )
}).pipe(Layer.unwrapEffect, Layer.provide(Server.loggerLayer))

Layer.launch(main).pipe(
  Effect.provide(Server.loggerLayer),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
