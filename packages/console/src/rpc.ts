/**
 * A JSON-RPC method through the typed client of `POST /v1/rpc`: the params encoded with the
 * contract's schema of them, the request and its answer with the contract's JSON-RPC wire
 * schemas, the result decoded with the contract's schema of it. A JSON-RPC error object fails
 * with its envelope (`data`: CODE and message), which the console shows like any other.
 */
import { Effect, Schema } from "effect"
import type { Client } from "./api.js"

export class RpcRefused extends Schema.TaggedError<RpcRefused>()("RpcRefused", {
  error: Schema.String,
  message: Schema.String
}) {}

export const rpc = <P, PI, A, AI>(
  client: Client,
  method: string,
  params: { readonly schema: Schema.Schema<P, PI>; readonly value: P },
  result: Schema.Schema<A, AI>
) =>
  Effect.gen(function*() {
    const encoded = yield* Schema.encode(params.schema)(params.value)
    const answer = yield* client.rpc.call({
      payload: { jsonrpc: "2.0", method, params: encoded as Record<string, unknown>, id: 1 },
      headers: {}
    })
    // One request, so one response (a batch or a notification would be otherwise).
    const response = Array.isArray(answer) ? answer[0] : answer
    if (response === undefined || response === null || typeof response !== "object") {
      return yield* new RpcRefused({ error: "INTERNAL", message: "The server sent no answer to the call." })
    }
    if ("error" in response) return yield* new RpcRefused({ error: response.error.data.error, message: response.error.data.message })
    return yield* Schema.decodeUnknown(result)(response.result)
  })
