/** What an endpoint of the typed client answers (not the `[answer, response]` pair of its `withResponse` form). */
import type { HttpClientResponse } from "@effect/platform"
import type { Effect } from "effect"

export type Answer<F extends (...args: never) => Effect.Effect<unknown, unknown>> = Exclude<
  Effect.Effect.Success<ReturnType<F>>,
  readonly [unknown, HttpClientResponse.HttpClientResponse]
>
