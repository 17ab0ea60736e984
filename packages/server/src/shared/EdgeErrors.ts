/**
 * Errors that only the HTTP edge raises: they describe the transport, not the domain.
 */
import { Schema } from "effect"

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  message: Schema.String
}) {}

/** A known path asked with a method it is not served with (edge/ErrorTranslation.ts adds `Allow`). */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  message: Schema.String
}) {}

/** Too many requests of one rate class from one credential (shared/RateLimit.ts). */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  message: Schema.String
}) {}

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  message: Schema.String
}) {}

/** A defect: the client is told only that it happened and the request id to quote. */
export class Internal extends Schema.TaggedError<Internal>()("Internal", {
  message: Schema.String
}) {}

/** An `Idempotency-Key` sent again with a different request (shared/Idempotency.ts). */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  message: Schema.String
}) {}

/** An `Idempotency-Key` whose first request is still running. */
export class IdempotencyInProgress extends Schema.TaggedError<IdempotencyInProgress>()("IdempotencyInProgress", {
  message: Schema.String
}) {}
