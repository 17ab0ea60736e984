import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import { Router } from "@huddle/domain/models/Router"
import { Duration, Effect } from "effect"
import { Api } from "../Api.js"
import { ServiceUnavailable } from "../shared/EdgeErrors.js"
import { Health, ProviderStatus } from "./HealthApi.js"

export const HealthHttp = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const router = yield* Router
    const at = (millis: number | undefined) => (millis === undefined ? null : new Date(millis).toISOString())
    // Reported, never a reason to be unready: an upstream outage is every instance's (decision 0034).
    const providers = Effect.map(router.health, (all) =>
      all.map((health) =>
        new ProviderStatus({
          name: health.provider,
          state: health.consecutiveFailures > 0 ? "failing" : "ok",
          consecutive_failures: health.consecutiveFailures,
          last_failure_at: at(health.lastFailureAt),
          last_failure: health.lastFailure ?? null,
          last_success_at: at(health.lastSuccessAt)
        })
      ))
    const ping = sql`SELECT 1`.pipe(
      Effect.timeoutFail({
        duration: Duration.seconds(2),
        onTimeout: () => new ServiceUnavailable({ message: "The database did not answer in time" })
      }),
      Effect.catchTag("SqlError", () => Effect.fail(new ServiceUnavailable({ message: "The database is unreachable" })))
    )
    return handlers
      .handle("healthz", () => Effect.succeed(new Health({ status: "ok" })))
      .handle("readyz", () => Effect.zipRight(ping, Effect.map(providers, (providers) => new Health({ status: "ready", providers }))))
  }))
