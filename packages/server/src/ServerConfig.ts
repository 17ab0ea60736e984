/**
 * Everything an operator can set, read from the environment with Effect `Config`
 * (documented in docs/operations.md).
 */
import type { Database } from "@huddle/adapters"
import * as Catalog from "@huddle/adapters/models/Catalog"
import * as Providers from "@huddle/adapters/models/Providers"
import { Config, Duration, LogLevel, Option } from "effect"

export interface ServerConfig {
  readonly host: string
  readonly port: number
  readonly engine: Database.Engine
  readonly starterCredits: number
  readonly sessionTtl: Duration.Duration
  readonly maxBodyBytes: number
  readonly shutdownGrace: Duration.Duration
  readonly logLevel: LogLevel.LogLevel
  readonly providers: Providers.Options
  readonly catalog: Catalog.Options
}

export const fromEnv: Config.Config<ServerConfig> = Config.all({
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  dataDir: Config.string("HUDDLE_DATA_DIR").pipe(Config.withDefault(".huddle")),
  starterCredits: Config.integer("HUDDLE_STARTER_CREDITS").pipe(
    Config.validate({ message: "must be zero or more", validation: (n) => n >= 0 }),
    Config.withDefault(1000)
  ),
  sessionTtl: Config.duration("HUDDLE_SESSION_TTL").pipe(Config.withDefault(Duration.days(7))),
  maxBodyBytes: Config.integer("HUDDLE_MAX_BODY_BYTES").pipe(
    Config.validate({ message: "must be positive", validation: (n) => n > 0 }),
    Config.withDefault(1024 * 1024)
  ),
  shutdownGrace: Config.duration("HUDDLE_SHUTDOWN_GRACE").pipe(Config.withDefault(Duration.seconds(10))),
  logLevel: Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
  providers: Providers.fromEnv,
  catalog: Catalog.fromEnv
}).pipe(
  Config.map(({ dataDir, databaseUrl, ...rest }): ServerConfig => ({
    ...rest,
    engine: Option.match(databaseUrl, {
      onNone: (): Database.Engine => ({ _tag: "Pglite", dataDir }),
      onSome: (url): Database.Engine => ({ _tag: "Postgres", url })
    })
  }))
)
