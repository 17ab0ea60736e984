/**
 * The handler of `POST /v1/rpc`: reads the body as text (so that malformed JSON is a JSON-RPC
 * parse error), answers it with the JSON-RPC dispatcher over the method table, and turns the
 * answer into an HTTP response. Failing to read the body (too large, connection lost) is left to
 * the edge, which answers it as a plain HTTP error.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { answerDefect } from "../edge/ErrorTranslation.js"
import { orgAsked } from "../shared/Headers.js"
import * as Retention from "../shared/Retention.js"
import * as JsonRpc from "./JsonRpc.js"
import * as Methods from "./Methods.js"
import * as RpcAdmission from "./RpcAdmission.js"
import * as RpcErrors from "./RpcErrors.js"

/** A defect inside a method: logged with its cause, answered as -32603 without internals. */
export const onDefect = (defect: unknown, method: string) =>
  Effect.map(answerDefect(defect, { rpc_method: method }), RpcErrors.internalError)

const rpcPath = "/v1/rpc"

/**
 * This endpoint's absolute URL as the caller reached it (for `rpc.discover`): the request's
 * `Host` header, and `https` when `X-Forwarded-Proto` says so (a TLS-terminating proxy), else
 * `http`, as the server itself speaks. Without a readable host, `localhost`.
 */
const endpointUrl = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.match(HttpServerRequest.toURL(request), {
    onNone: () => `http://localhost${rpcPath}`,
    onSome: (url) => `${url.origin}${rpcPath}`
  })

/** Whether a body is a batch: JSON whose first token is `[`. */
const isBatch = (text: string) => /^[ \t\n\r]*\[/.test(text)

export const RpcHttp = HttpApiBuilder.group(Api, "rpc", (handlers) =>
  Effect.gen(function*() {
    const admission = yield* RpcAdmission.rpcAdmission
    const rpc = JsonRpc.make(yield* Methods.make, { onDefect, admit: admission.admit })
    return handlers.handleRaw("call", ({ headers, request }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const text = yield* Effect.orDie(request.text)
        const caller: Methods.Caller = { principal, headerOrgId: orgAsked(headers), endpointUrl: endpointUrl(request) }
        const answer = yield* admission.answering(caller, isBatch(text), rpc.answer(text, caller))
        return answer.body === undefined
          ? HttpServerResponse.empty({ status: 204 })
          : Retention.keepAs(HttpServerResponse.unsafeJson(answer.body, { status: answer.status }), () => answer.restStatus)
      }))
  }))
