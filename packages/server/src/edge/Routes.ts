/**
 * Which route a request is for, as metrics and traces name it: the matched pattern
 * (`POST /v1/orgs/:id/members`), never the path itself, which holds ids (one series per org
 * would be unbounded). Matched against the contract's own endpoints, with the router the
 * platform routes with.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as FindMyWay from "find-my-way-ts"
import { Api } from "../Api.js"

/** The wire dialect of a route's answers: what its errors and streams look like. */
export type Dialect = "huddle" | "openai" | "anthropic" | "jsonrpc"

export interface Route {
  readonly name: string
  readonly dialect: Dialect
}

const dialectOf = (group: string): Dialect =>
  group === "openai" || group === "responses"
    ? "openai"
    : group === "anthropic"
    ? "anthropic"
    : group === "rpc"
    ? "jsonrpc"
    : "huddle"

/** Paths served beside the contract (the console, the reference, the OpenAPI document, metrics). */
const served: ReadonlyArray<readonly [method: string, path: `/${string}`]> = [
  ["GET", "/"],
  ["GET", "/assets/*"],
  ["GET", "/docs"],
  ["GET", "/v1/openapi.json"],
  ["GET", "/metrics"]
]

const router = FindMyWay.make<Route>({ ignoreTrailingSlash: true })
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, group }) => {
    router.on(endpoint.method, endpoint.path, { name: `${endpoint.method} ${endpoint.path}`, dialect: dialectOf(group.identifier) })
  }
})
for (const [method, path] of served) router.on(method, path, { name: `${method} ${path}`, dialect: "huddle" })

/** Everything no route matched: one series, whatever was asked. */
export const unmatched: Route = { name: "unmatched", dialect: "huddle" }

export const routeOf = (method: string, url: string): Route => router.find(method, url)?.handler ?? unmatched

/** The methods a route may have; `HEAD` is served wherever `GET` is (the platform's router does so). */
const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const

/**
 * The methods a path is served with, for `Allow` when `method` was refused on it (a 405): none
 * when no route has the path, or when one has it with `method` itself — a route listed here
 * that this server does not serve (`/metrics` when metrics are off), or a request its router
 * refused for another reason: a 404, as the router said. From the same routes as `routeOf`.
 */
export const allowedMethods = (method: string, url: string): ReadonlyArray<string> => {
  const allowed: ReadonlyArray<string> = methods.filter((candidate) => router.find(candidate === "HEAD" ? "GET" : candidate, url) !== undefined)
  return allowed.includes(method) ? [] : allowed
}
