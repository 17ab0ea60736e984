/** The server's configuration as docs/operations.md documents it. */
import { readFileSync } from "node:fs"
import { delimiter } from "node:path"
import { describeConfigError, fromEnv } from "@huddle/server/ServerConfig"
import { ConfigProvider, Duration, Effect, Either, LogLevel } from "effect"
import { describe, expect, it } from "vitest"

const read = (env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(fromEnv, ConfigProvider.fromMap(new Map(Object.entries(env))))))

const operations = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8")

describe("LOG_LEVEL", () => {
  it("takes every value docs/operations.md lists, in any case", () => {
    const row = operations.split("\n").find((line) => line.startsWith("| `LOG_LEVEL` |"))
    const documented = [...(row?.split("|")[3] ?? "").matchAll(/`([A-Za-z]+)`/g)].map((match) => match[1]!)
    expect(documented).toEqual(expect.arrayContaining(["All", "Debug", "Info", "Warning", "Error", "None"]))
    for (const name of documented.flatMap((name) => [name, name.toLowerCase(), name.toUpperCase()])) {
      const config = read({ LOG_LEVEL: name })
      expect(Either.isRight(config), name).toBe(true)
    }
    const levelOf = (name: string) => {
      const config = read({ LOG_LEVEL: name })
      return Either.isRight(config) ? config.right.logLevel : undefined
    }
    expect(levelOf("Warning")).toBe(LogLevel.Warning)
    expect(levelOf("none")).toBe(LogLevel.None)
    expect(levelOf("ALL")).toBe(LogLevel.All)
    expect(read({}).pipe(Either.map((config) => config.logLevel))).toEqual(Either.right(LogLevel.Info))
  })

  it("refuses anything else, naming the variable and what it takes", () => {
    for (const name of ["Verbose", "warnings", "", "5"]) {
      const config = read({ LOG_LEVEL: name })
      expect(Either.isLeft(config), name).toBe(true)
      if (Either.isLeft(config)) expect(String(config.left), name).toMatch(/LOG_LEVEL.*Warning/)
    }
  })
})

describe("HUDDLE_REPO_*", () => {
  const sources = (env: Record<string, string>) => read(env).pipe(Either.map((config) => config.grounding?.sources))

  it("defaults to no local roots, https clones, and clones under the data directory", () => {
    expect(sources({ HUDDLE_DATA_DIR: "/var/lib/huddle" })).toEqual(
      Either.right({ roots: [], gitSchemes: ["https"], privateHosts: false, cloneDir: "/var/lib/huddle/repos", gitTimeout: Duration.minutes(2) })
    )
  })

  it("reads roots separated by the path delimiter, schemes in any case, and a clone directory of its own", () => {
    expect(sources({ HUDDLE_REPO_ROOTS: `/srv/a${delimiter}/srv/b${delimiter}`, HUDDLE_REPO_GIT_SCHEMES: "HTTPS, ssh", HUDDLE_REPO_DIR: "/data/clones", HUDDLE_REPO_GIT_PRIVATE_HOSTS: "on" }))
      .toEqual(Either.right({ roots: ["/srv/a", "/srv/b"], gitSchemes: ["https", "ssh"], privateHosts: true, cloneDir: "/data/clones", gitTimeout: Duration.minutes(2) }))
    expect(sources({ HUDDLE_REPO_GIT_SCHEMES: "" }).pipe(Either.map((s) => s?.gitSchemes))).toEqual(Either.right([]))
  })

  it("refuses relative roots and schemes git must never use, naming the variable", () => {
    for (const [name, value] of [["HUDDLE_REPO_ROOTS", "relative/dir"], ["HUDDLE_REPO_GIT_SCHEMES", "https,ext"], ["HUDDLE_REPO_GIT_SCHEMES", "ftp"], ["HUDDLE_REPO_GIT_PRIVATE_HOSTS", "maybe"]] as const) {
      const config = read({ [name]: value })
      expect(Either.isLeft(config), value).toBe(true)
      if (Either.isLeft(config)) expect(String(config.left), value).toContain(name)
    }
  })
})

describe("HUDDLE_COUNCIL_*", () => {
  it("defaults to three seats and 120 s, and takes 2–4 seats and any positive duration", () => {
    expect(Either.map(read({}), (config) => config.council)).toEqual(Either.right({ participants: 3, deadline: Duration.seconds(120) }))
    expect(Either.map(read({ HUDDLE_COUNCIL_PARTICIPANTS: "4", HUDDLE_COUNCIL_DEADLINE: "45 seconds" }), (config) => config.council))
      .toEqual(Either.right({ participants: 4, deadline: Duration.seconds(45) }))
  })

  it("refuses a seat count outside 2–4 or a deadline that is no time, naming the variable", () => {
    for (const [name, value] of [["HUDDLE_COUNCIL_PARTICIPANTS", "1"], ["HUDDLE_COUNCIL_PARTICIPANTS", "5"], ["HUDDLE_COUNCIL_PARTICIPANTS", "three"], ["HUDDLE_COUNCIL_DEADLINE", "0 seconds"]] as const) {
      const config = read({ [name]: value })
      expect(Either.isLeft(config), `${name}=${value}`).toBe(true)
      if (Either.isLeft(config)) expect(String(config.left), value).toContain(name)
    }
  })
})

describe("metrics and traces", () => {
  it("exports no traces and reads no metrics token by default; HUDDLE_METRICS=off turns metrics off", () => {
    expect(Either.map(read({}), (config) => [config.tracing, config.metricsToken?._tag, config.metricsOff])).toEqual(Either.right([undefined, "None", false]))
    expect(Either.map(read({ HUDDLE_METRICS: "off" }), (config) => config.metricsOff)).toEqual(Either.right(true))
  })

  it("sends traces to OTEL_EXPORTER_OTLP_ENDPOINT's /v1/traces, or to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, with the headers and service name given", () => {
    expect(Either.map(read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }), (config) => config.tracing))
      .toEqual(Either.right({ url: "http://collector:4318/v1/traces", serviceName: "huddle", headers: {}, sql: false }))
    expect(Either.map(
      read({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.com/otlp",
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%3D,tenant=team a",
        OTEL_SERVICE_NAME: "huddle-eu"
      }),
      (config) => config.tracing
    )).toEqual(Either.right({ url: "https://traces.example.com/otlp", serviceName: "huddle-eu", headers: { "x-api-key": "abc=", tenant: "team a" }, sql: false }))
  })

  it("gives each export OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT, in milliseconds (default: the exporter's 10 s)", () => {
    const timeoutOf = (env: Record<string, string>) =>
      Either.map(read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", ...env }), (config) => config.tracing?.exportTimeout)
    expect(timeoutOf({})).toEqual(Either.right(undefined))
    expect(timeoutOf({ OTEL_EXPORTER_OTLP_TIMEOUT: "2500" })).toEqual(Either.right(Duration.millis(2500)))
    expect(timeoutOf({ OTEL_EXPORTER_OTLP_TIMEOUT: "2500", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "700" })).toEqual(Either.right(Duration.millis(700)))
  })

  it("records the SQL client's spans only with HUDDLE_TRACE_SQL=on", () => {
    expect(Either.map(read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", HUDDLE_TRACE_SQL: "on" }), (config) => config.tracing?.sql)).toEqual(Either.right(true))
    expect(Either.map(read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", HUDDLE_TRACE_SQL: "off" }), (config) => config.tracing?.sql)).toEqual(Either.right(false))
  })

  it("samples by OTEL_TRACES_SAMPLER and its ratio, every trace by default", () => {
    expect(Either.map(read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" }), (config) => config.tracing?.sampler))
      .toEqual(Either.right({ parentBased: true, ratio: 0.25 }))
    expect(Either.map(read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_SAMPLER: "always_off" }), (config) => config.tracing?.sampler))
      .toEqual(Either.right({ parentBased: false, ratio: 0 }))
  })

  it("refuses an endpoint that is not an http(s) URL and a short metrics or operator token, naming the variable", () => {
    for (const [name, value] of [["OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"], ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "grpc://collector"], ["HUDDLE_METRICS_TOKEN", "short"], ["HUDDLE_OPERATOR_TOKEN", "short"], ["HUDDLE_METRICS", "maybe"], ["OTEL_TRACES_SAMPLER", "sometimes"], ["OTEL_TRACES_SAMPLER_ARG", "2"], ["HUDDLE_TRACE_SQL", "yes"], ["OTEL_EXPORTER_OTLP_TIMEOUT", "0"], ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "10s"]] as const) {
      const config = read({ [name]: value })
      expect(Either.isLeft(config), `${name}=${value}`).toBe(true)
      if (Either.isLeft(config)) expect(String(config.left), value).toContain(name)
    }
  })
})

describe("HUDDLE_TRUST_PROXY", () => {
  it("trusts no X-Forwarded-For by default, and takes a number of proxies from 0 to 10", () => {
    expect(Either.map(read({}), (config) => config.trustProxy)).toEqual(Either.right(0))
    expect(Either.map(read({ HUDDLE_TRUST_PROXY: "2" }), (config) => config.trustProxy)).toEqual(Either.right(2))
    for (const value of ["-1", "11", "true", "1.5"]) {
      const config = read({ HUDDLE_TRUST_PROXY: value })
      expect(Either.isLeft(config), value).toBe(true)
      if (Either.isLeft(config)) expect(String(config.left), value).toContain("HUDDLE_TRUST_PROXY")
    }
  })
})

describe("a refused configuration", () => {
  /** What the start-up log and the command line say (one formatter for both). */
  const refusal = (env: Record<string, string>) => {
    const config = read(env)
    return Either.isLeft(config) ? describeConfigError(config.left) : undefined
  }

  it("names HUDDLE_INSTANCE_STALE_AFTER when it is under three heartbeats, in the form the variables take", () => {
    expect(refusal({ HUDDLE_INSTANCE_STALE_AFTER: "10 seconds" })).toBe(
      "HUDDLE_INSTANCE_STALE_AFTER: must be at least three times HUDDLE_HEARTBEAT_INTERVAL (10 seconds), not 10 seconds"
    )
    expect(refusal({ HUDDLE_HEARTBEAT_INTERVAL: "20 seconds" })).toMatch(/^HUDDLE_INSTANCE_STALE_AFTER: .*\(20 seconds\), not 30 seconds$/)
    expect(refusal({ HUDDLE_HEARTBEAT_INTERVAL: "0 seconds" })).toBe("HUDDLE_HEARTBEAT_INTERVAL: must be positive")
  })

  it("names REDIS_URL when it is not a Redis URL, without repeating its value", () => {
    expect(refusal({ REDIS_URL: "http://user:secret@cache:6379" })).toBe("REDIS_URL: must be redis://[user:password@]host[:port][/db] or rediss://…")
  })

  it("says what a duration looks like", () => {
    expect(refusal({ HUDDLE_SHUTDOWN_GRACE: "10s" })).toBe("HUDDLE_SHUTDOWN_GRACE: must be a duration such as \"30 seconds\" or \"500 millis\", not \"10s\"")
  })

  it("names the variable of every refusal, for every variable docs/operations.md documents", () => {
    const documented = [...operations.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((match) => match[1]!)
    expect(documented.length).toBeGreaterThan(30)
    const refused: Array<string> = []
    for (const name of documented) {
      for (const value of ["x", "-1", "0", "1s", "http://x", "2 seconds"]) {
        const said = refusal({ [name]: value })
        if (said === undefined) continue
        refused.push(name)
        expect(said, `${name}=${value}`).toMatch(new RegExp(`^${name}: `))
      }
    }
    // The check saw refusals of most of them (the others take any text).
    expect(new Set(refused).size).toBeGreaterThan(20)
    // Several refused at once: each named.
    expect(refusal({ PORT: "abc", REDIS_URL: "http://x" })).toMatch(/^PORT: .*; REDIS_URL: /)
  })
})
