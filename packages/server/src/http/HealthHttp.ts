import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import { Duration, Effect } from "effect"
import { ServiceUnavailable } from "../api/EdgeErrors.js"
import { Health } from "../api/HealthApi.js"
import { Api } from "../Api.js"

export const HealthHttp = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ping = sql`SELECT 1`.pipe(
      Effect.timeoutFail({
        duration: Duration.seconds(2),
        onTimeout: () => new ServiceUnavailable({ message: "The database did not answer in time" })
      }),
      Effect.catchTag("SqlError", () => Effect.fail(new ServiceUnavailable({ message: "The database is unreachable" })))
    )
    return handlers
      .handle("healthz", () => Effect.succeed(new Health({ status: "ok" })))
      .handle("readyz", () => Effect.as(ping, new Health({ status: "ready" })))
  }))
