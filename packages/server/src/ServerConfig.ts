/**
 * Everything an operator can set, read from the environment with Effect `Config`
 * (documented in docs/operations.md).
 */
import { delimiter, isAbsolute, join } from "node:path"
import type * as Engine from "@huddle/adapters/Engine"
import type * as Database from "@huddle/adapters/sql/Database"
import * as NodeRepositorySources from "@huddle/adapters/grounding/NodeRepositorySources"
import * as Catalog from "@huddle/adapters/models/Catalog"
import * as Providers from "@huddle/adapters/models/Providers"
import * as RateLimitStore from "@huddle/adapters/RateLimitStore"
import { Config, ConfigError, Duration, Either, LogLevel, Option, Redacted } from "effect"
import * as Tracing from "./edge/Tracing.js"
import * as RateLimiting from "./shared/RateLimiting.js"

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
  readonly rateLimits: RateLimiting.Options
  /** How many proxies in front append to `X-Forwarded-For` (`HUDDLE_TRUST_PROXY`); 0 or absent: the socket's address. */
  readonly trustProxy?: number | undefined
  /** The operator API's credential (`HUDDLE_OPERATOR_TOKEN`); none: the operator API is off. */
  readonly operatorToken: Option.Option<Redacted.Redacted>
  /** A credential that opens `GET /metrics` and nothing else (`HUDDLE_METRICS_TOKEN`); the operator token opens it too. */
  readonly metricsToken?: Option.Option<Redacted.Redacted> | undefined
  /** `HUDDLE_METRICS=off`: no metrics are recorded and `/metrics` does not exist, whatever credential is set. */
  readonly metricsOff?: boolean | undefined
  /** Where traces are exported (`OTEL_EXPORTER_OTLP_ENDPOINT` …); none: nothing is exported. */
  readonly tracing?: Tracing.Options | undefined
  /** Heartbeats of instances sharing the database (`HUDDLE_HEARTBEAT_INTERVAL`, `HUDDLE_INSTANCE_STALE_AFTER`). */
  readonly liveness?: { readonly every?: Duration.Duration; readonly staleAfter?: Duration.Duration } | undefined
  /** Credit leases (decision 0021); the defaults when absent. */
  readonly creditLeases?: Engine.Options["creditLeases"]
  /** Multi mode (`HUDDLE_COUNCIL_PARTICIPANTS`, `HUDDLE_COUNCIL_DEADLINE`). */
  readonly council?: { readonly participants?: number; readonly deadline?: Duration.Duration } | undefined
  /** Connected repositories (`HUDDLE_REPO_ROOTS`, `HUDDLE_REPO_GIT_SCHEMES`, `HUDDLE_REPO_GIT_PRIVATE_HOSTS`, `HUDDLE_REPO_DIR`, `HUDDLE_REPO_GIT_TIMEOUT`). */
  readonly grounding?: Engine.GroundingOptions | undefined
}

/**
 * A refused configuration as an operator reads it: each variable with what is wrong with it
 * (`REDIS_URL: must be redis://…`), for the start-up log and the command line alike. Every
 * refusal names its variable: a check of one variable is made on that variable, a check across
 * several fails on the one it names (`HUDDLE_INSTANCE_STALE_AFTER`).
 */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  const lines: Array<string> = []
  const walk = (node: ConfigError.ConfigError): void => {
    switch (node._op) {
      case "And":
      case "Or":
        walk(node.left)
        walk(node.right)
        return
      case "MissingData":
        lines.push(`${node.path.join(".")}: is not set`)
        return
      default: {
        const line = node.path.length > 0 ? `${node.path.join(".")}: ${node.message}` : node.message
        if (!lines.includes(line)) lines.push(line)
      }
    }
  }
  walk(error)
  return lines.join("; ")
}

/**
 * A duration (`30 seconds`, `500 millis`); Effect's own refusal does not say what it takes.
 * Nested under its name, as Effect's own are: a check made on it then still names the variable.
 */
const duration = (name: string) =>
  Config.nested(
    Config.string().pipe(
      Config.mapOrFail((text) =>
        Either.fromOption(
          Duration.decodeUnknown(text.trim()),
          () => ConfigError.InvalidData([], `must be a duration such as "30 seconds" or "500 millis", not ${JSON.stringify(text)}`)
        )
      )
    ),
    name
  )

/** A duration as the variables are written (`Duration.format`'s `10s` is not a form they take). */
const seconds = (d: Duration.Duration) => `${Duration.toMillis(d) / 1000} seconds`

/** Long enough that guessing it is hopeless (e.g. `openssl rand -hex 32`). */
export const minOperatorTokenLength = 32

/**
 * The most requests per minute a limit may allow: more (17 000 a second from one credential) is a
 * typo rather than a limit, and the counters' sub-millisecond steps lose precision beyond it.
 */
export const maxPerMinute = 1_000_000

/** A count from 1 to `maxPerMinute`, `per` what it counts ("requests per minute"). */
const countOf = (per: string) => (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({
      message: `must be a whole number of ${per}, from 1 to ${maxPerMinute}`,
      validation: (n) => Number.isSafeInteger(n) && n >= 1 && n <= maxPerMinute
    }),
    Config.withDefault(fallback)
  )

const perMinute = countOf("requests per minute")

/** A sign-in throttle: a whole number of attempts per window (`HUDDLE_SIGNIN_WINDOW`). */
const throttleLimit = countOf("attempts per window")

const isRedisUrl = (url: string) => {
  try {
    RateLimitStore.redisOptions(url)
    return true
  } catch {
    return false
  }
}

/** Rate limits: `HUDDLE_RATE_*`, and `REDIS_URL` for counters shared by every instance. */
export const rateLimitsFromEnv: Config.Config<RateLimiting.Options> = Config.all({
  intent: perMinute("HUDDLE_RATE_INTENT", 60),
  chat: perMinute("HUDDLE_RATE_CHAT", 60),
  read: perMinute("HUDDLE_RATE_READ", 120),
  // Validated as text, then redacted: a validated `Config.redacted` loses the variable's name.
  redisUrl: Config.option(
    Config.string("REDIS_URL").pipe(
      Config.validate({ message: "must be redis://[user:password@]host[:port][/db] or rediss://…", validation: isRedisUrl }),
      Config.map(Redacted.make)
    )
  ),
  prefix: Config.string("HUDDLE_RATE_LIMIT_PREFIX").pipe(Config.withDefault(RateLimitStore.defaultPrefix)),
  timeout: duration("HUDDLE_RATE_LIMIT_STORE_TIMEOUT").pipe(Config.withDefault(RateLimitStore.defaultTimeout)),
  onStoreError: Config.literal("open", "closed")("HUDDLE_RATE_LIMIT_ON_STORE_ERROR").pipe(Config.withDefault("open" as const)),
  throttleWindow: duration("HUDDLE_SIGNIN_WINDOW").pipe(
    Config.validate({ message: "must be from 1 second to 1 day", validation: (d) => Duration.toMillis(d) >= 1000 && Duration.toMillis(d) <= 86_400_000 }),
    Config.withDefault(RateLimiting.defaultThrottles.window)
  ),
  failuresPerAccount: throttleLimit("HUDDLE_SIGNIN_FAILURES_PER_ACCOUNT", RateLimiting.defaultThrottles.failuresPerAccount),
  failuresPerAddress: throttleLimit("HUDDLE_SIGNIN_FAILURES_PER_ADDRESS", RateLimiting.defaultThrottles.failuresPerAddress),
  signupsPerAddress: throttleLimit("HUDDLE_SIGNUPS_PER_ADDRESS", RateLimiting.defaultThrottles.signupsPerAddress)
}).pipe(
  Config.map(({ chat, failuresPerAccount, failuresPerAddress, intent, onStoreError, prefix, read, redisUrl, signupsPerAddress, throttleWindow, timeout }): RateLimiting.Options => ({
    limits: { intent, chat, read },
    throttles: { window: throttleWindow, failuresPerAccount, failuresPerAddress, signupsPerAddress },
    store: Option.match(redisUrl, {
      onNone: (): RateLimitStore.Options => ({ _tag: "Memory" }),
      onSome: (url): RateLimitStore.Options => ({ _tag: "Redis", url, prefix, timeout })
    }),
    onStoreError
  }))
)

const listOf = (value: string, separator: string) => value.split(separator).map((item) => item.trim()).filter((item) => item !== "")

const isGitScheme = (scheme: string): scheme is NodeRepositorySources.GitScheme =>
  (NodeRepositorySources.gitSchemes as ReadonlyArray<string>).includes(scheme)

/** Where repositories may come from: local roots, git schemes, the clone directory (default: under the data directory). */
export const repositorySourcesFromEnv = (dataDir: Config.Config<string>): Config.Config<NodeRepositorySources.Options> =>
  Config.all({
    dataDir,
    roots: Config.string("HUDDLE_REPO_ROOTS").pipe(
      Config.validate({ message: `must be absolute directories separated by "${delimiter}"`, validation: (value) => listOf(value, delimiter).every(isAbsolute) }),
      Config.withDefault(""),
      Config.map((value) => listOf(value, delimiter))
    ),
    gitSchemes: Config.string("HUDDLE_REPO_GIT_SCHEMES").pipe(
      Config.validate({
        message: `must be a comma-separated list of ${NodeRepositorySources.gitSchemes.join(", ")} (ext is never allowed), or empty for none`,
        validation: (value) => listOf(value.toLowerCase(), ",").every(isGitScheme)
      }),
      Config.withDefault("https"),
      Config.map((value) => listOf(value.toLowerCase(), ",").filter(isGitScheme))
    ),
    privateHosts: Config.boolean("HUDDLE_REPO_GIT_PRIVATE_HOSTS").pipe(Config.withDefault(false)),
    cloneDir: Config.option(Config.string("HUDDLE_REPO_DIR")),
    gitTimeout: duration("HUDDLE_REPO_GIT_TIMEOUT").pipe(
      Config.validate({ message: "must be positive", validation: (d) => Duration.toMillis(d) > 0 }),
      Config.withDefault(NodeRepositorySources.defaultGitTimeout)
    )
  }).pipe(Config.map(({ cloneDir, dataDir, ...rest }) => ({ ...rest, cloneDir: Option.getOrElse(cloneDir, () => join(dataDir, "repos")) })))

/** `LOG_LEVEL`'s values, in any case; `Warn` and `Off` are Effect's own names for two of them. */
export const logLevels: Readonly<Record<string, LogLevel.LogLevel>> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None,
  off: LogLevel.None
}

const dataDirConfig = Config.string("HUDDLE_DATA_DIR").pipe(Config.withDefault(".huddle"))

const logLevel = Config.string("LOG_LEVEL").pipe(
  Config.validate({
    message: "must be one of All, Trace, Debug, Info, Warning, Error, Fatal, None (in any case)",
    validation: (name) => Object.hasOwn(logLevels, name.trim().toLowerCase())
  }),
  Config.map((name) => logLevels[name.trim().toLowerCase()] ?? LogLevel.Info),
  Config.withDefault(LogLevel.Info)
)

/**
 * A credential the operator sets: long enough to be unguessable. Validated as text, then
 * redacted, so that a refusal names the variable (a validated `Config.redacted` loses its name).
 */
const secretToken = (name: string) =>
  Config.string(name).pipe(
    Config.validate({
      message: `must be at least ${minOperatorTokenLength} characters (e.g. openssl rand -hex 32)`,
      validation: (token) => token.length >= minOperatorTokenLength
    }),
    Config.map(Redacted.make)
  )

/** An http(s) URL (an OTLP collector's). */
const httpUrl = (name: string) =>
  Config.string(name).pipe(
    Config.validate({
      message: "must be an http:// or https:// URL",
      validation: (url) => URL.canParse(url) && ["http:", "https:"].includes(new URL(url).protocol)
    })
  )

/** A positive whole number of milliseconds (OpenTelemetry's timeouts). */
const millis = (name: string) =>
  Config.integer(name).pipe(Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 }))

export const fromEnv: Config.Config<ServerConfig> = Config.all({
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  dataDir: dataDirConfig,
  repositories: repositorySourcesFromEnv(dataDirConfig),
  starterCredits: Config.integer("HUDDLE_STARTER_CREDITS").pipe(
    Config.validate({ message: "must be zero or more", validation: (n) => n >= 0 }),
    Config.withDefault(1000)
  ),
  sessionTtl: duration("HUDDLE_SESSION_TTL").pipe(Config.withDefault(Duration.days(7))),
  maxBodyBytes: Config.integer("HUDDLE_MAX_BODY_BYTES").pipe(
    Config.validate({ message: "must be positive", validation: (n) => n > 0 }),
    Config.withDefault(1024 * 1024)
  ),
  shutdownGrace: duration("HUDDLE_SHUTDOWN_GRACE").pipe(Config.withDefault(Duration.seconds(10))),
  logLevel,
  providers: Providers.fromEnv,
  catalog: Catalog.fromEnv,
  rateLimits: rateLimitsFromEnv,
  trustProxy: Config.integer("HUDDLE_TRUST_PROXY").pipe(
    Config.validate({ message: "must be the number of proxies in front that append to X-Forwarded-For, from 0 to 10", validation: (n) => n >= 0 && n <= 10 }),
    Config.withDefault(0)
  ),
  operatorToken: Config.option(secretToken("HUDDLE_OPERATOR_TOKEN")),
  metricsToken: Config.option(secretToken("HUDDLE_METRICS_TOKEN")),
  metricsOff: Config.literal("on", "off")("HUDDLE_METRICS").pipe(Config.withDefault("on" as const), Config.map((value) => value === "off")),
  otlpEndpoint: Config.option(httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT")),
  otlpTracesEndpoint: Config.option(httpUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  otlpHeaders: Config.option(Config.string("OTEL_EXPORTER_OTLP_HEADERS")),
  otlpTimeout: Config.option(millis("OTEL_EXPORTER_OTLP_TIMEOUT")),
  otlpTracesTimeout: Config.option(millis("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")),
  otelServiceName: Config.option(Config.string("OTEL_SERVICE_NAME")),
  otelSampler: Config.option(Config.literal(...Tracing.samplerNames)("OTEL_TRACES_SAMPLER")),
  traceSql: Config.literal("on", "off")("HUDDLE_TRACE_SQL").pipe(Config.withDefault("off" as const), Config.map((value) => value === "on")),
  otelSamplerArg: Config.option(
    Config.number("OTEL_TRACES_SAMPLER_ARG").pipe(
      Config.validate({ message: "must be a ratio from 0 to 1", validation: (n) => n >= 0 && n <= 1 })
    )
  ),
  heartbeat: duration("HUDDLE_HEARTBEAT_INTERVAL").pipe(
    Config.validate({ message: "must be positive", validation: (d) => Duration.toMillis(d) > 0 }),
    Config.withDefault(Duration.seconds(10))
  ),
  staleAfter: duration("HUDDLE_INSTANCE_STALE_AFTER").pipe(Config.withDefault(Duration.seconds(30))),
  councilParticipants: Config.integer("HUDDLE_COUNCIL_PARTICIPANTS").pipe(
    Config.validate({ message: "must be 2, 3 or 4", validation: (n) => n >= 2 && n <= 4 }),
    Config.withDefault(3)
  ),
  councilDeadline: duration("HUDDLE_COUNCIL_DEADLINE").pipe(
    Config.validate({ message: "must be positive", validation: (d) => Duration.toMillis(d) > 0 }),
    Config.withDefault(Duration.seconds(120))
  )
}).pipe(
  // A check across variables fails on the one it is about, so that the refusal names it.
  Config.mapOrFail((config) =>
    Duration.toMillis(config.staleAfter) >= 3 * Duration.toMillis(config.heartbeat)
      ? Either.right(config)
      : Either.left(ConfigError.InvalidData(
        ["HUDDLE_INSTANCE_STALE_AFTER"],
        `must be at least three times HUDDLE_HEARTBEAT_INTERVAL (${seconds(config.heartbeat)}), not ${seconds(config.staleAfter)}`
      ))
  ),
  Config.map((
    {
      councilDeadline,
      councilParticipants,
      dataDir,
      databaseUrl,
      heartbeat,
      otelSampler,
      otelSamplerArg,
      otelServiceName,
      otlpEndpoint,
      otlpHeaders,
      otlpTimeout,
      otlpTracesEndpoint,
      otlpTracesTimeout,
      repositories,
      staleAfter,
      traceSql,
      ...rest
    }
  ): ServerConfig => ({
    ...rest,
    tracing: Tracing.fromVariables({
      endpoint: Option.getOrUndefined(otlpEndpoint),
      tracesEndpoint: Option.getOrUndefined(otlpTracesEndpoint),
      headers: Option.getOrUndefined(otlpHeaders),
      timeoutMillis: Option.getOrUndefined(otlpTimeout),
      tracesTimeoutMillis: Option.getOrUndefined(otlpTracesTimeout),
      serviceName: Option.getOrUndefined(otelServiceName),
      sampler: Option.getOrUndefined(Option.map(otelSampler, (name) => Tracing.samplerOf(name, Option.getOrUndefined(otelSamplerArg)))),
      sql: traceSql
    }),
    grounding: { sources: repositories },
    liveness: { every: heartbeat, staleAfter },
    council: { participants: councilParticipants, deadline: councilDeadline },
    engine: Option.match(databaseUrl, {
      onNone: (): Database.Engine => ({ _tag: "Pglite", dataDir }),
      onSome: (url): Database.Engine => ({ _tag: "Postgres", url })
    })
  }))
)
