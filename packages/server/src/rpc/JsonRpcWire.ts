/**
 * The JSON-RPC 2.0 wire shapes of `POST /v1/rpc`, for the HTTP contract's documentation. The
 * protocol itself (parsing, dispatch, batches) is rpc/JsonRpc.ts; these schemas only describe it,
 * so that the contract does not depend on the implementation.
 */
import { Schema } from "effect"

const IdSchema = Schema.Union(Schema.String, Schema.Number, Schema.Null)

export const RequestObject = Schema.Struct({
  jsonrpc: Schema.optional(Schema.Literal("2.0")).annotations({
    description: "\"2.0\"; may be omitted (the bare `{method, params}` shape), and the call is then always answered"
  }),
  method: Schema.String,
  params: Schema.optional(Schema.Union(Schema.Record({ key: Schema.String, value: Schema.Unknown }), Schema.Array(Schema.Unknown))),
  id: Schema.optional(IdSchema).annotations({
    description: "Omitted with `jsonrpc: \"2.0\"`: a notification, which runs and is not answered"
  })
}).annotations({ identifier: "JsonRpcRequest" })

export const RequestBody = Schema.Union(RequestObject, Schema.Array(RequestObject)).annotations({
  description: "A JSON-RPC 2.0 request, or a batch of them"
})

const ErrorObjectSchema = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: Schema.Struct({
    error: Schema.String,
    message: Schema.String,
    field: Schema.optional(Schema.String),
    issues: Schema.optional(Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String })))
  })
}).annotations({ identifier: "JsonRpcError" })

/** A failed call's answer; also the body of a bare-shape call failing with a REST status. */
export const ErrorResponse = Schema.Struct({ jsonrpc: Schema.Literal("2.0"), error: ErrorObjectSchema, id: IdSchema })
  .annotations({ identifier: "JsonRpcErrorResponse" })

export const ResponseObject = Schema.Union(
  Schema.Struct({ jsonrpc: Schema.Literal("2.0"), result: Schema.Unknown, id: IdSchema }),
  ErrorResponse
).annotations({ identifier: "JsonRpcResponse" })

export const ResponseBody = Schema.Union(ResponseObject, Schema.Array(ResponseObject)).annotations({
  description: "A JSON-RPC 2.0 response (a result or an error object), or a batch of them"
})
