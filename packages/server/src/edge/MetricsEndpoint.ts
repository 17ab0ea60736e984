/**
 * `GET /metrics`: the Prometheus exposition of this instance, for a scraper holding
 * `HUDDLE_METRICS_TOKEN` (a credential that can read metrics and nothing else) or the operator
 * token. Served only when one of them is set; otherwise the path does not exist.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { PrometheusExporter } from "@huddle/adapters/observability/PrometheusExporter"
import { Effect, Layer, Option, type Redacted } from "effect"
import * as ErrorTable from "../shared/ErrorTable.js"
import { bearerMatches } from "./Secrets.js"

export const path = "/metrics"

const unauthorized = () => {
  const { code, status } = ErrorTable.table.Unauthorized
  return HttpServerResponse.unsafeJson(
    { error: code, message: "Metrics need HUDDLE_METRICS_TOKEN or the operator token as a bearer credential" },
    { status, headers: { "www-authenticate": "Bearer" } }
  )
}

export const layer = (secrets: ReadonlyArray<Redacted.Redacted>) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const exporter = yield* PrometheusExporter
      yield* router.get(
        path,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const authorization = request.headers["authorization"]
          if (!secrets.some((secret) => bearerMatches(authorization, secret))) return unauthorized()
          const { body, contentType } = yield* Effect.promise(exporter.scrape)
          return HttpServerResponse.text(body, { contentType, headers: { "cache-control": "no-store" } })
        })
      )
    })
  )

/** The secrets that open `/metrics`, in the order they are tried; none: metrics are off. */
export const secretsOf = (metricsToken: Option.Option<Redacted.Redacted> | undefined, operatorToken: Option.Option<Redacted.Redacted>) =>
  [...Option.toArray(metricsToken ?? Option.none()), ...Option.toArray(operatorToken)]

/**
 * Metrics when a credential can read them: the port, recording into this instance's registry,
 * and `/metrics`. Otherwise the port's default, which records nothing, and no route; prom-client
 * is loaded only when they are on.
 */
export const configured = (options: {
  readonly metricsToken?: Option.Option<Redacted.Redacted> | undefined
  readonly operatorToken: Option.Option<Redacted.Redacted>
  readonly metricsOff?: boolean | undefined
}) => {
  const secrets = secretsOf(options.metricsToken, options.operatorToken)
  if (secrets.length === 0 || options.metricsOff === true) return Layer.empty
  const port = Layer.unwrapEffect(Effect.map(Effect.promise(() => import("@huddle/adapters/observability/PrometheusMetrics")), (_) => _.layer))
  return layer(secrets).pipe(Layer.provideMerge(port))
}
