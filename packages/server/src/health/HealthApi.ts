import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"

/** How a configured model provider has been doing on this instance (decision 0034). */
export class ProviderStatus extends Schema.Class<ProviderStatus>("ProviderStatus")({
  name: Schema.String,
  /** `failing`: its last attempt failed; `ok`: its last attempt answered. */
  state: Schema.Literal("ok", "failing"),
  /** Failed attempts since its last answer. */
  consecutive_failures: Schema.Int,
  last_failure_at: Schema.NullOr(Schema.String),
  /** Why it last failed: `connection`, `timeout`, `rate_limited (429)`, `server_error (503)` … (no upstream text). */
  last_failure: Schema.NullOr(Schema.String),
  last_success_at: Schema.NullOr(Schema.String)
}) {}

export class Health extends Schema.Class<Health>("Health")({
  status: Schema.Literal("ok", "ready"),
  /**
   * Readiness only: the model providers called since the instance started. A failing provider
   * does not make the instance unready (every instance shares the upstream: decision 0034).
   */
  providers: Schema.optional(Schema.Array(ProviderStatus))
}) {}

/** Probes for orchestrators, outside `/v1` and without authentication. */
export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .annotate(OpenApi.Summary, "Liveness")
      .addSuccess(Health)
      .annotate(OpenApi.Description, "The process is up.")
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .annotate(OpenApi.Summary, "Readiness")
      .addSuccess(Health)
      .addError(Envelope.ServiceUnavailable)
      .annotate(
        OpenApi.Description,
        "The process is up and its database answers. `providers` reports the model providers called since the instance started, each `ok` or `failing` (with its consecutive failures and last failure): a failing provider does not make the instance unready."
      )
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Liveness and readiness probes, without credentials.")
{}
