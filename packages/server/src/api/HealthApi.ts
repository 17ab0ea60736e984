import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import * as Envelope from "./Envelope.js"

export class Health extends Schema.Class<Health>("Health")({
  status: Schema.Literal("ok", "ready")
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
      .annotate(OpenApi.Description, "The process is up and its database answers.")
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Liveness and readiness probes, without credentials.")
{}
