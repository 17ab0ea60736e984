/**
 * The error objects of `/v1/rpc`. Each application error's JSON-RPC code, envelope CODE
 * (`data.error`) and the HTTP status a single call answers with come from the one error table
 * (shared/ErrorTable.ts). See docs/decisions/0008-json-rpc.md.
 *
 * Every error object carries `data: { error: CODE, message }`, so that a client reads JSON-RPC
 * errors the way it reads the REST envelope. The HTTP status:
 * - a request that says `jsonrpc: "2.0"` is answered 200 whatever its error, as JSON-RPC clients
 *   expect (they take any other status for a transport failure); so is a batch;
 * - protocol errors (-32700, -32600, -32601, -32602) are answered 200 in any shape: the HTTP
 *   exchange worked, the JSON-RPC body reports what was wrong with it;
 * - the spec's bare `{method, params}` shape failing while its method runs (the application codes
 *   below and -32603) answers with the status the same failure has over REST (402, 403, 404, 409,
 *   502, 500 …): `RpcError.status`.
 */
import type * as Errors from "@huddle/domain/shared/Errors"
import { Data, ParseResult } from "effect"
import type * as EdgeErrors from "../shared/EdgeErrors.js"
import { table } from "../shared/ErrorTable.js"

export interface Issue {
  /** The parameter, as a dotted path (`input`, `settings.model_tier`, `items[2]`). */
  readonly field: string
  readonly message: string
}

export interface ErrorData {
  readonly error: string
  readonly message: string
  /** Invalid params only: the first parameter at fault, and every issue found. */
  readonly field?: string
  readonly issues?: ReadonlyArray<Issue>
  /** Rate limited calls only: seconds until the limit admits this kind of call again. */
  readonly retry_after?: number
}

/**
 * A JSON-RPC error, with the status the same failure has over REST: what a single call in the
 * bare `{method, params}` shape answers with (a JSON-RPC 2.0 request is answered 200).
 */
export class RpcError extends Data.TaggedError("RpcError")<{
  readonly code: number
  readonly message: string
  readonly data: ErrorData
  readonly status: number
}> {}

/** The JSON-RPC error object, as sent. */
export interface ErrorObject {
  readonly code: number
  readonly message: string
  readonly data: ErrorData
}

export const toObject = (error: RpcError): ErrorObject => ({ code: error.code, message: error.message, data: error.data })

// --- The codes of JSON-RPC 2.0 -----------------------------------------------------------------

export const ParseErrorCode = -32700
export const InvalidRequestCode = -32600
export const MethodNotFoundCode = -32601
export const InvalidParamsCode = -32602
export const InternalErrorCode = -32603

export const parseError = (detail: string) =>
  new RpcError({ code: ParseErrorCode, message: "Parse error", data: { error: table.InvalidRequest.code, message: detail }, status: 200 })

export const invalidRequest = (detail: string) =>
  new RpcError({ code: InvalidRequestCode, message: "Invalid Request", data: { error: table.InvalidRequest.code, message: detail }, status: 200 })

export const methodNotFound = (method: string) =>
  new RpcError({
    code: MethodNotFoundCode,
    message: "Method not found",
    data: { error: table.NotFound.code, message: `No method ${JSON.stringify(method)}; rpc.discover lists them` },
    status: 200
  })

const describe = (issues: ReadonlyArray<Issue>) =>
  issues.slice(0, 5).map((issue) => (issue.field === "" ? issue.message : `${issue.field}: ${issue.message}`)).join("; ")

export const invalidParams = (issues: ReadonlyArray<Issue>) => {
  const first = issues[0]
  return new RpcError({
    code: InvalidParamsCode,
    message: "Invalid params",
    data: {
      error: table.InvalidRequest.code,
      message: issues.length === 0 ? "The params are invalid" : describe(issues),
      ...(first === undefined || first.field === "" ? {} : { field: first.field }),
      issues
    },
    status: 200
  })
}

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => (typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`),
    ""
  )

/** The issues of a params decoding failure, each naming its field. */
export const fromParseError = (error: ParseResult.ParseError): RpcError =>
  invalidParams(
    ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
      field: formatPath(issue.path),
      message: issue.message
    }))
  )

/** A defect, as the edge classified it: never with internals. */
export const internalError = (error: EdgeErrors.Internal | EdgeErrors.ServiceUnavailable) =>
  new RpcError({
    code: InternalErrorCode,
    message: "Internal error",
    data: { error: table[error._tag].code, message: error.message },
    status: table[error._tag].status
  })

// --- Application codes: the domain's errors ----------------------------------------------------

/** The domain errors a method may fail with. */
export type DomainError =
  | Errors.InvalidRequest
  | Errors.InsufficientCredits
  | Errors.PolicyViolation
  | Errors.Forbidden
  | Errors.NotFound
  | Errors.Conflict
  | Errors.UpstreamUnavailable
  | Errors.Unauthorized

export type DomainErrorTag = DomainError["_tag"]

export interface ApplicationCode {
  readonly code: number
  readonly error: string
  readonly status: number
  /** What it means, for the OpenRPC document. */
  readonly meaning: string
}

const applicationCode = (tag: DomainErrorTag | "RateLimited"): ApplicationCode => {
  const row = table[tag]
  return { code: row.rpc.code, error: row.code, status: row.status, meaning: row.rpc.meaning }
}

export const applicationCodes: { readonly [Tag in DomainErrorTag]: ApplicationCode } = {
  InvalidRequest: applicationCode("InvalidRequest"),
  InsufficientCredits: applicationCode("InsufficientCredits"),
  PolicyViolation: applicationCode("PolicyViolation"),
  Forbidden: applicationCode("Forbidden"),
  NotFound: applicationCode("NotFound"),
  Conflict: applicationCode("Conflict"),
  UpstreamUnavailable: applicationCode("UpstreamUnavailable"),
  Unauthorized: applicationCode("Unauthorized")
}

/** A call refused by its method's rate limit (in a batch; a single call gets a plain HTTP 429). */
export const rateLimited = applicationCode("RateLimited")

export const fromDomain = (error: DomainError): RpcError => {
  const entry = applicationCodes[error._tag]
  return new RpcError({
    code: entry.code,
    message: error.message,
    data: { error: entry.error, message: error.message },
    status: entry.status
  })
}
