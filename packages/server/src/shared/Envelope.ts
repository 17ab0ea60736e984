/**
 * The error envelope `{ "error": CODE, "message": text }`: every typed error, domain or edge,
 * is encoded through exactly one of these schemas, each carrying the CODE, HTTP status and
 * description of its entry in the one error table (ErrorTable.ts).
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Errors from "@huddle/domain/shared/Errors"
import { Schema } from "effect"
import * as EdgeErrors from "./EdgeErrors.js"
import { type Tag, table } from "./ErrorTable.js"

interface TaggedMessage<T extends Tag> {
  readonly _tag: T
  readonly message: string
}

const envelope = <T extends Tag, A extends TaggedMessage<T>, I extends TaggedMessage<T>>(error: Schema.Schema<A, I>, tag: T) => {
  const { code, description, status } = table[tag]
  return Schema.transform(
    Schema.Struct({ error: Schema.Literal(code), message: Schema.String }),
    error,
    {
      strict: false,
      decode: (wire) => ({ _tag: tag, message: wire.message }),
      encode: (domain) => ({ error: code, message: domain.message })
    }
  ).annotations({ ...HttpApiSchema.annotations({ status }), identifier: code, description })
}

export const InvalidRequest = envelope(Errors.InvalidRequest, "InvalidRequest")
export const Unauthorized = envelope(Errors.Unauthorized, "Unauthorized")
export const InsufficientCredits = envelope(Errors.InsufficientCredits, "InsufficientCredits")
export const Forbidden = envelope(Errors.Forbidden, "Forbidden")
export const SessionRequired = envelope(Errors.SessionRequired, "SessionRequired")
export const PolicyViolation = envelope(Errors.PolicyViolation, "PolicyViolation")
export const NotFound = envelope(Errors.NotFound, "NotFound")
export const Conflict = envelope(Errors.Conflict, "Conflict")
export const MethodNotAllowed = envelope(EdgeErrors.MethodNotAllowed, "MethodNotAllowed")
export const RateLimited = envelope(EdgeErrors.RateLimited, "RateLimited")
export const IdempotencyKeyReused = envelope(EdgeErrors.IdempotencyKeyReused, "IdempotencyKeyReused")
export const IdempotencyInProgress = envelope(EdgeErrors.IdempotencyInProgress, "IdempotencyInProgress")
export const UpstreamUnavailable = envelope(Errors.UpstreamUnavailable, "UpstreamUnavailable")
export const PayloadTooLarge = envelope(EdgeErrors.PayloadTooLarge, "PayloadTooLarge")
export const Internal = envelope(EdgeErrors.Internal, "Internal")
export const ServiceUnavailable = envelope(EdgeErrors.ServiceUnavailable, "ServiceUnavailable")

/** The envelope's shape, for documentation and for tests that read error bodies. */
export const ErrorBody = Schema.Struct({ error: Schema.String, message: Schema.String })
export type ErrorBody = typeof ErrorBody.Type
