import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { RequestScope } from "@huddle/domain/request/RequestScope"
import { Effect } from "effect"
import { contextHeader, contextOf } from "./Headers.js"

/** Says in the response which context (org id or `personal`) the request ran in, and so who pays. */
export const reportContext = (scope: RequestScope) =>
  HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeader(response, contextHeader, contextOf(scope.orgId)))
  )
