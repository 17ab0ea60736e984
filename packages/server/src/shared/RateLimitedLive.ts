/**
 * The contract's `RateLimited` middleware (docs/decisions/0011-rate-limits.md): each endpoint's
 * declared rate class, counted by `RateLimits` before its handler runs.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpRouter from "@effect/platform/HttpRouter"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { Effect, Layer, Option } from "effect"
import { Api } from "../Api.js"
import * as RateLimit from "./RateLimit.js"
import { headersOf, RateLimits, refusal, setHeaders } from "./RateLimiting.js"

const routeKey = (method: string, path: string) => `${method} ${path}`

/** The class of every route of the contract that has one, by method and path. */
export const routeClasses = (): ReadonlyMap<string, RateLimit.RateClass> => {
  const classes = new Map<string, RateLimit.RateClass>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      const rateClass = RateLimit.classOf(endpoint.method, endpoint.path, mergedAnnotations)
      if (rateClass !== undefined) classes.set(routeKey(endpoint.method, endpoint.path), rateClass)
    }
  })
  return classes
}

/** The contract's `RateLimited` middleware: the route's class, counted before the handler runs. */
export const RateLimitedLive = Layer.effect(
  RateLimit.RateLimited,
  Effect.map(RateLimits, (limits) => {
    const classes = routeClasses()
    return Effect.gen(function*() {
      const { route } = yield* HttpRouter.RouteContext
      const rateClass = classes.get(routeKey(route.method, route.path))
      if (rateClass === undefined) return
      const principal = yield* Effect.serviceOption(CurrentPrincipal)
      if (Option.isNone(principal)) {
        return yield* Effect.dieMessage("RateLimited ran without a principal: declare it before Authenticated on the group")
      }
      const verdict = yield* limits.check(principal.value, rateClass)
      yield* setHeaders(headersOf(verdict))
      const refused = refusal(verdict, rateClass)
      if (refused !== undefined) return yield* Effect.fail(refused)
    })
  })
)
