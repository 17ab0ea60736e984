/**
 * The error objects of `/v1/rpc`, and the one table that gives each its JSON-RPC code, its
 * envelope CODE (`data.error`) and the HTTP status a single call answers with. See
 * docs/decisions/0008-json-rpc.md.
 *
 * Every error object carries `data: { error: CODE, message }`, so that a client reads JSON-RPC
 * errors the way it reads the REST envelope. The HTTP status depends on the code alone:
 * - protocol errors (-32700, -32600, -32601, -32602) are answered 200: the HTTP exchange worked,
 *   the JSON-RPC body reports what was wrong with it;
 * - errors from running a method (the application codes below and -32603) mirror the status the
 *   same failure has over REST (402, 403, 404, 409, 502, 500 …).
 * In a batch the response is 200 whatever its members say.
 */
import type * as Errors from "@huddle/domain/Errors"
import { Data, ParseResult } from "effect"
import type * as EdgeErrors from "../api/EdgeErrors.js"

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

/** A JSON-RPC error, with the HTTP status a single (non-batch) call answers with. */
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
  new RpcError({ code: ParseErrorCode, message: "Parse error", data: { error: "INVALID_REQUEST", message: detail }, status: 200 })

export const invalidRequest = (detail: string) =>
  new RpcError({ code: InvalidRequestCode, message: "Invalid Request", data: { error: "INVALID_REQUEST", message: detail }, status: 200 })

export const methodNotFound = (method: string) =>
  new RpcError({
    code: MethodNotFoundCode,
    message: "Method not found",
    data: { error: "NOT_FOUND", message: `No method ${JSON.stringify(method)}; rpc.discover lists them` },
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
      error: "INVALID_REQUEST",
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
    data: error._tag === "Internal"
      ? { error: "INTERNAL", message: error.message }
      : { error: "SERVICE_UNAVAILABLE", message: error.message },
    status: error._tag === "Internal" ? 500 : 503
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

/**
 * -32000 … -32099 is JSON-RPC's range for implementation-defined server errors. -32007 is kept
 * for `RATE_LIMITED` (429), which per-method rate limits will use.
 */
export const applicationCodes: { readonly [Tag in DomainErrorTag]: ApplicationCode } = {
  InvalidRequest: {
    code: -32000,
    error: "INVALID_REQUEST",
    status: 400,
    meaning: "The params are well-formed but cannot be served as asked (an unknown model, an input too long for the model)"
  },
  InsufficientCredits: { code: -32001, error: "INSUFFICIENT_CREDITS", status: 402, meaning: "The credit balance cannot cover the request" },
  PolicyViolation: { code: -32002, error: "POLICY_VIOLATION", status: 403, meaning: "An enforced organization policy forbids this" },
  Forbidden: { code: -32003, error: "FORBIDDEN", status: 403, meaning: "The caller's role does not allow this operation" },
  NotFound: { code: -32004, error: "NOT_FOUND", status: 404, meaning: "No such resource, or the caller may not see it" },
  Conflict: { code: -32005, error: "CONFLICT", status: 409, meaning: "Conflicts with the resource's state" },
  UpstreamUnavailable: {
    code: -32006,
    error: "UPSTREAM_UNAVAILABLE",
    status: 502,
    meaning: "No model could answer (after retries and fallback)"
  },
  Unauthorized: {
    code: -32008,
    error: "UNAUTHORIZED",
    status: 401,
    meaning: "The credential was revoked or expired while the call was being served"
  }
}

/** A call refused by its method's rate limit (in a batch; a single call gets HTTP 429). */
export const rateLimited = {
  code: -32007,
  error: "RATE_LIMITED",
  status: 429,
  meaning: "The caller's rate limit for this kind of method is spent; retry after the window"
} as const

export const fromDomain = (error: DomainError): RpcError => {
  const entry = applicationCodes[error._tag]
  return new RpcError({
    code: entry.code,
    message: error.message,
    data: { error: entry.error, message: error.message },
    status: entry.status
  })
}
