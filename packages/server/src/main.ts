/** Starts Huddle from the environment and runs it until SIGTERM or SIGINT. */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Database from "@huddle/adapters/sql/Database"
import { Cause, ConfigError, Effect, Layer, Logger, LogLevel } from "effect"
import { describeDefect } from "./edge/ErrorTranslation.js"
import * as JsonLogger from "./edge/JsonLogger.js"
import * as Ready from "./Ready.js"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"

/** Logs that the server is ready, and (first thing at shutdown) that it is shutting down. */
const announced = (config: ServerConfig.ServerConfig, started: number) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const address = yield* HttpServer.addressFormattedWith((url) => Effect.succeed(url))
      const storage = Database.describe(config.engine)
      yield* Effect.logInfo("huddle ready").pipe(
        Effect.annotateLogs({ ...Ready.addresses(address), storage, startup_ms: Math.round(performance.now() - started) })
      )
      // A plain banner for a person at a terminal; a log collector (no terminal) gets JSON only.
      if (process.stdout.isTTY) console.log(Ready.banner(address, storage))
      // Built last, released first: logged before the server drains and the database closes.
      yield* Effect.addFinalizer(() => Effect.logInfo("shutting down"))
    })
  )

/** Why the start failed, as the rest of the log says things: kind and message, down the causes. */
const describeCause = (cause: Cause.Cause<unknown>): string =>
  [
    ...Array.from(Cause.failures(cause), (error) => ConfigError.isConfigError(error) ? ServerConfig.describeConfigError(error) : describeDefect(error)),
    ...Array.from(Cause.defects(cause), describeDefect)
  ].join("; ")

/** A failure to start, logged once; the stack only when the operator asked for debug logs. */
const startFailed = (cause: Cause.Cause<unknown>, level: LogLevel.LogLevel) =>
  Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("start-up failed").pipe(
    Effect.annotateLogs({
      error: describeCause(cause),
      ...(LogLevel.lessThanEqual(level, LogLevel.Debug) ? { stack: Cause.pretty(cause) } : {})
    })
  )

const main = ServerConfig.fromEnv.pipe(
  // A configuration that cannot be read is refused before the log level is known.
  Effect.tapErrorCause((cause) => startFailed(cause, LogLevel.Info)),
  Effect.flatMap((config) => {
    const started = performance.now()
    return Layer.launch(announced(config, started).pipe(Layer.provideMerge(Server.layer(config)))).pipe(
      // Interrupted only by SIGTERM or SIGINT (NodeRuntime.runMain), once everything is closed.
      Effect.onInterrupt(() => Effect.logInfo("stopped")),
      Logger.withMinimumLogLevel(config.logLevel),
      // Whatever LOG_LEVEL says: a server that does not start must say why.
      Effect.tapErrorCause((cause) => startFailed(cause, config.logLevel))
    )
  }),
  Effect.provide(JsonLogger.layer)
)

// runMain stops listening at the first SIGTERM or SIGINT, so a second one would kill the process
// mid-drain, and one comes at once under `npm start`: Ctrl-C reaches npm and the server, and npm
// forwards its own. Listened to for the whole run, they are ignored while shutdown, bounded by
// HUDDLE_SHUTDOWN_GRACE, goes on (docs/decisions/0038-npm-start-execs-node.md).
const ignoreRepeat = () => {}
process.on("SIGTERM", ignoreRepeat)
process.on("SIGINT", ignoreRepeat)

NodeRuntime.runMain(main, { disablePrettyLogger: true, disableErrorReporting: true })
