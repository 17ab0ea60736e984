/**
 * The error envelope `{ "error": CODE, "message": text }`: every typed error, domain or edge,
 * is encoded through exactly one of these schemas, each carrying its HTTP status. This file is
 * the single place where errors meet statuses.
 */
import { HttpApiSchema } from "@effect/platform"
import * as Errors from "@huddle/domain/Errors"
import { Schema } from "effect"
import * as EdgeErrors from "./EdgeErrors.js"

interface TaggedMessage {
  readonly _tag: string
  readonly message: string
}

const envelope = <A extends TaggedMessage, I extends TaggedMessage>(
  error: Schema.Schema<A, I>,
  tag: I["_tag"],
  code: string,
  status: number,
  description: string
) =>
  Schema.transform(
    Schema.Struct({ error: Schema.Literal(code), message: Schema.String }),
    error,
    {
      strict: false,
      decode: (wire) => ({ _tag: tag, message: wire.message }),
      encode: (domain) => ({ error: code, message: domain.message })
    }
  ).annotations({ ...HttpApiSchema.annotations({ status }), identifier: code, description })

export const InvalidRequest = envelope(Errors.InvalidRequest, "InvalidRequest", "INVALID_REQUEST", 400, "The request is malformed or a parameter is invalid")
export const Unauthorized = envelope(Errors.Unauthorized, "Unauthorized", "UNAUTHORIZED", 401, "Missing or invalid credentials")
export const InsufficientCredits = envelope(Errors.InsufficientCredits, "InsufficientCredits", "INSUFFICIENT_CREDITS", 402, "The credit balance cannot cover the request")
export const Forbidden = envelope(Errors.Forbidden, "Forbidden", "FORBIDDEN", 403, "The caller's role does not allow this operation")
export const SessionRequired = envelope(Errors.SessionRequired, "SessionRequired", "SESSION_REQUIRED", 403, "Needs a web-app session; an API key is not enough")
export const PolicyViolation = envelope(Errors.PolicyViolation, "PolicyViolation", "POLICY_VIOLATION", 403, "An enforced organization policy forbids this")
export const NotFound = envelope(Errors.NotFound, "NotFound", "NOT_FOUND", 404, "No such resource")
export const Conflict = envelope(Errors.Conflict, "Conflict", "CONFLICT", 409, "Conflicts with existing state")
export const RateLimited = envelope(EdgeErrors.RateLimited, "RateLimited", "RATE_LIMITED", 429, "Too many requests of this kind from this credential; retry after `Retry-After` seconds")
export const IdempotencyKeyReused = envelope(EdgeErrors.IdempotencyKeyReused, "IdempotencyKeyReused", "IDEMPOTENCY_KEY_REUSED", 422, "This `Idempotency-Key` was used in the last 24 hours with a different request (method, path, query, organization header or body)")
export const IdempotencyInProgress = envelope(EdgeErrors.IdempotencyInProgress, "IdempotencyInProgress", "IDEMPOTENCY_IN_PROGRESS", 409, "The first request with this `Idempotency-Key` is still running; retry after `Retry-After` seconds to get its answer")
export const UpstreamUnavailable = envelope(Errors.UpstreamUnavailable, "UpstreamUnavailable", "UPSTREAM_UNAVAILABLE", 502, "No model could answer (after retries and fallback)")
export const PayloadTooLarge = envelope(EdgeErrors.PayloadTooLarge, "PayloadTooLarge", "PAYLOAD_TOO_LARGE", 413, "The request body is too large")
export const Internal = envelope(EdgeErrors.Internal, "Internal", "INTERNAL", 500, "An unexpected failure; quote the request id")
export const ServiceUnavailable = envelope(EdgeErrors.ServiceUnavailable, "ServiceUnavailable", "SERVICE_UNAVAILABLE", 503, "A dependency (the database or the rate-limit store) is unavailable; retry later")

/** The envelope's shape, for documentation and for tests that read error bodies. */
export const ErrorBody = Schema.Struct({ error: Schema.String, message: Schema.String })
export type ErrorBody = typeof ErrorBody.Type
