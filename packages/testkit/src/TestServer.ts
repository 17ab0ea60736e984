/**
 * The real Huddle server, in-process on a free loopback port, over a fresh database. Tests talk
 * to it over HTTP exactly as clients do.
 *
 * ```ts
 * const server = await TestServer.start()
 * const res = await server.request("GET", "/healthz")
 * await server.stop()
 * ```
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as NodeRepositorySources from "@huddle/adapters/grounding/NodeRepositorySources"
import type * as Catalog from "@huddle/adapters/models/Catalog"
import type * as IndexJobs from "@huddle/domain/grounding/IndexJobs"
import type { RepositoryIndexer } from "@huddle/domain/grounding/RepositoryIndexer"
import type * as Providers from "@huddle/adapters/models/Providers"
import * as RateLimitStore from "@huddle/adapters/RateLimitStore"
import * as RateLimiting from "@huddle/server/shared/RateLimiting"
import * as JsonLogger from "@huddle/server/edge/JsonLogger"
import * as Server from "@huddle/server/Server"
import type { ServerConfig } from "@huddle/server/ServerConfig"
import { Context, Duration, Effect, Exit, Layer, Logger, LogLevel, Option, Redacted, Scope } from "effect"
import * as TestDatabase from "./TestDatabase.js"

export interface Options {
  readonly engine?: TestDatabase.EngineName
  readonly starterCredits?: number
  readonly maxBodyBytes?: number
  readonly sessionTtl?: Duration.Duration
  /** Model providers (default: offline only) and the catalog (default: the offline models). */
  readonly providers?: Providers.Options
  readonly catalog?: Catalog.Options
  readonly rateLimits?: RateLimitOptions
  /** `HUDDLE_TRUST_PROXY` (default 0: the socket's address). */
  readonly trustProxy?: number
  /** The operator token (default: a random one, so that tests can mint; null: the operator API is off). */
  readonly operatorToken?: string | null
  /** `HUDDLE_METRICS_TOKEN` (default: none; the operator token opens `/metrics` too). */
  readonly metricsToken?: string
  /** `HUDDLE_METRICS=off` (default: on). */
  readonly metricsOff?: boolean
  /** OTLP trace export (default: none). */
  readonly tracing?: ServerConfig["tracing"]
  /** Instance heartbeats (default: the service's). */
  readonly liveness?: ServerConfig["liveness"]
  /** Credit leases (default: the service's: on, a batch every 20 ms). */
  readonly creditLeases?: ServerConfig["creditLeases"]
  readonly council?: ServerConfig["council"]
  /** SQL run on the fresh database before the server starts (see `TestDatabase.fresh`). */
  readonly setupSql?: string
  /**
   * A database to start on instead of a fresh one, for several servers sharing one (instances of
   * one deployment); `stop` leaves it (its owner drops it).
   */
  readonly database?: TestDatabase.FreshDatabase
  readonly grounding?: GroundingOptions
}

/** Connected repositories of a test server. */
export interface GroundingOptions {
  /** `HUDDLE_REPO_ROOTS` (default: none). */
  readonly roots?: ReadonlyArray<string>
  /** `HUDDLE_REPO_GIT_SCHEMES` (default: `https`). */
  readonly gitSchemes?: ReadonlyArray<NodeRepositorySources.GitScheme>
  /** `HUDDLE_REPO_GIT_PRIVATE_HOSTS` (default: off). */
  readonly privateHosts?: boolean
  /** Where clones go (default: a directory of the server's own, removed by `stop`). */
  readonly cloneDir?: string
  readonly gitTimeout?: Duration.DurationInput
  /** The indexer (default: the engine's). */
  readonly indexer?: Layer.Layer<RepositoryIndexer>
  /** Leases and polling of index runs. */
  readonly jobs?: Partial<IndexJobs.Settings>
}

/** Rate limits of a test server: small limits make them reachable in a test. */
export interface RateLimitOptions {
  /** Requests per minute per credential (defaults: the service's 60, 60 and 120). */
  readonly intent?: number
  readonly chat?: number
  readonly read?: number
  /** Counters in this Redis (`REDIS_URL`) rather than in memory. */
  readonly redisUrl?: string
  /** The Redis key prefix; default: one of its own for each server, so that runs never share counters. */
  readonly redisPrefix?: string
  readonly redisTimeout?: Duration.DurationInput
  /** `HUDDLE_RATE_LIMIT_ON_STORE_ERROR` (default `open`). */
  readonly onStoreError?: "open" | "closed"
  /**
   * The sign-in throttles. Per account, the service's default; per address (every test client is
   * 127.0.0.1, and suites sign up many users), effectively none unless a test sets them.
   */
  readonly throttles?: Partial<RateLimiting.Throttles>
}

export const rateLimitsFor = (options: RateLimitOptions = {}): ServerConfig["rateLimits"] => ({
  limits: {
    intent: options.intent ?? RateLimiting.defaultLimits.intent,
    chat: options.chat ?? RateLimiting.defaultLimits.chat,
    read: options.read ?? RateLimiting.defaultLimits.read
  },
  store: options.redisUrl === undefined
    ? { _tag: "Memory" }
    : {
      _tag: "Redis",
      url: Redacted.make(options.redisUrl),
      prefix: options.redisPrefix ?? `huddle-test:${randomBytes(6).toString("hex")}:`,
      timeout: options.redisTimeout ?? RateLimitStore.defaultTimeout
    },
  onStoreError: options.onStoreError ?? "open",
  throttles: {
    window: options.throttles?.window ?? RateLimiting.defaultThrottles.window,
    failuresPerAccount: options.throttles?.failuresPerAccount ?? RateLimiting.defaultThrottles.failuresPerAccount,
    failuresPerAddress: options.throttles?.failuresPerAddress ?? 1_000_000,
    signupsPerAddress: options.throttles?.signupsPerAddress ?? 1_000_000
  }
})

export interface Response {
  readonly status: number
  readonly headers: Headers
  /** The parsed JSON body, or `undefined` for an empty body. */
  readonly body: any
  readonly text: string
}

export interface RequestOptions {
  readonly body?: unknown
  readonly token?: string
  readonly headers?: Record<string, string>
}

export interface TestServer {
  readonly url: string
  readonly engine: TestDatabase.EngineName
  /** Every log line the server wrote, as JSON strings. */
  readonly logs: ReadonlyArray<string>
  /** The operator token this server accepts, if the operator API is on. */
  readonly operatorToken: string | null
  readonly request: (method: string, path: string, options?: RequestOptions) => Promise<Response>
  readonly stop: () => Promise<void>
}

export const request = async (
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {}
): Promise<Response> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  let body: string | undefined
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
    headers["content-type"] ??= "application/json"
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
  const text = await res.text()
  let parsed: unknown = undefined
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
  }
  return { status: res.status, headers: res.headers, body: parsed, text }
}

export const configFor = (engine: ServerConfig["engine"], options: Options = {}): ServerConfig => ({
  host: "127.0.0.1",
  port: 0,
  engine,
  starterCredits: options.starterCredits ?? 1000,
  sessionTtl: options.sessionTtl ?? Duration.days(7),
  maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
  shutdownGrace: Duration.seconds(2),
  logLevel: LogLevel.Info,
  providers: options.providers ?? {},
  catalog: options.catalog ?? {},
  rateLimits: rateLimitsFor(options.rateLimits),
  trustProxy: options.trustProxy,
  operatorToken: options.operatorToken === null
    ? Option.none()
    : Option.some(Redacted.make(options.operatorToken ?? `op-${randomBytes(24).toString("hex")}`)),
  metricsToken: options.metricsToken === undefined ? Option.none() : Option.some(Redacted.make(options.metricsToken)),
  metricsOff: options.metricsOff,
  tracing: options.tracing,
  liveness: options.liveness,
  creditLeases: options.creditLeases,
  council: options.council,
  grounding: {
    sources: {
      roots: options.grounding?.roots ?? [],
      gitSchemes: options.grounding?.gitSchemes ?? ["https"],
      cloneDir: options.grounding?.cloneDir ?? join(tmpdir(), "huddle-test-repos"),
      gitTimeout: Duration.decode(options.grounding?.gitTimeout ?? "2 minutes"),
      privateHosts: options.grounding?.privateHosts ?? false
    },
    indexer: options.grounding?.indexer,
    jobs: options.grounding?.jobs
  }
})

export const start = async (options: Options = {}): Promise<TestServer> => {
  const engineName = options.engine ?? (options.database?.engine._tag === "Postgres" ? "postgres" : "pglite")
  const database = options.database === undefined
    ? await TestDatabase.fresh(engineName, options.setupSql)
    : { ...options.database, drop: async () => {} }
  // Clones of its own: a server prunes those its database does not know.
  const cloneDir = options.grounding?.cloneDir ?? mkdtempSync(join(tmpdir(), "huddle-clones-"))
  const logs: Array<string> = []
  const logger = Logger.replace(
    Logger.defaultLogger,
    Logger.map(JsonLogger.lines, (line) => {
      logs.push(line)
    })
  )
  const scope = Effect.runSync(Scope.make())
  const config = configFor(database.engine, { ...options, grounding: { ...options.grounding, cloneDir } })
  const context = await Effect.runPromise(
    Layer.buildWithScope(Server.layer(config).pipe(Layer.provide(logger)), scope)
  )
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const url = `http://127.0.0.1:${address.port}`
  return {
    url,
    engine: engineName,
    logs,
    operatorToken: Option.getOrNull(Option.map(config.operatorToken, Redacted.value)),
    request: (method, path, requestOptions) => request(url, method, path, requestOptions),
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await database.drop()
      if (options.grounding?.cloneDir === undefined) rmSync(cloneDir, { recursive: true, force: true })
    }
  }
}
