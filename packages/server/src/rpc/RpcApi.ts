/**
 * `POST /v1/rpc`: JSON-RPC 2.0 (docs/decisions/0008-json-rpc.md). The body is read and parsed by
 * the handler itself (`handleRaw`), so that malformed JSON is answered with a JSON-RPC parse
 * error (-32700) rather than the edge's 400; the payload schema here documents the shape only.
 * The methods, with their params and results, are described by `rpc.discover` (OpenRPC).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Dialect } from "../shared/ErrorTable.js"
import { OrgHeaders } from "../shared/Headers.js"
import * as Idempotency from "../shared/Idempotency.js"
import { RateLimited } from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"
import * as JsonRpcWire from "./JsonRpcWire.js"

export class RpcApi extends HttpApiGroup.make("rpc")
  .add(
    HttpApiEndpoint.post("call", "/rpc")
      .annotate(OpenApi.Summary, "Call JSON-RPC methods")
      .annotateContext(Idempotency.keyed)
      .setPayload(JsonRpcWire.RequestBody)
      .setHeaders(OrgHeaders)
      .addSuccess(JsonRpcWire.ResponseBody)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(
        OpenApi.Description,
        [
          "JSON-RPC 2.0: a request `{jsonrpc: \"2.0\", method, params, id}`, a notification (no `id`) or a batch (an array).",
          "The bare `{method, params}` shape is answered too. Methods: `intent.submit`, `intent.get`, `intent.list`,",
          "`intent.approve`, `intent.reject` and `rpc.discover`, which answers with an OpenRPC 1.2 document describing them.",
          "Errors are JSON-RPC error objects whose `data` is `{error: CODE, message}`. A request that says `\"jsonrpc\": \"2.0\"`",
          "and a batch are answered 200 whatever their errors, as JSON-RPC clients expect; the bare shape answers protocol",
          "errors (-32700, -32600, -32601, -32602) 200 and a call failing in its method with the REST status of its error",
          "(400, 402, 403, 404, 409, 502, 500) and a JSON-RPC body. Only notifications: 204.",
          "Missing or invalid credentials (401) and too large a body (413) are plain HTTP errors, before any call runs.",
          "Each call counts against its method's rate class (`intent` for intent.submit and intent.approve, `read` for the",
          "others): a single call over the limit is a plain HTTP 429 `RATE_LIMITED` with `Retry-After`; in a batch, a call",
          "over the limit is answered with error -32007 (`data.error` `RATE_LIMITED`) and the others still run."
        ].join(" ")
      )
  )
  // Each call counts against its method's rate class (`x-rate-class` in rpc.discover; rpc/RpcHttp.ts).
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "JSON-RPC")
  .annotate(OpenApi.Description, "JSON-RPC 2.0 entry point for intents; errors are JSON-RPC error objects.")
  .annotate(Dialect, "json-rpc")
{}
