/** The keys page's data, as the typed client answers it. */
import type { HttpClientResponse } from "@effect/platform"
import type { Effect } from "effect"
import type { Client } from "../../api.js"

/** What an endpoint answers (not the `[answer, response]` pair of its `withResponse` form). */
type Answer<F extends (...args: never) => Effect.Effect<unknown, unknown>> = Exclude<
  Effect.Effect.Success<ReturnType<F>>,
  readonly [unknown, HttpClientResponse.HttpClientResponse]
>

export type KeyPage = Answer<Client["apiKeys"]["list"]>
export type ApiKey = KeyPage["data"][number]
export type CreatedKey = Answer<Client["apiKeys"]["create"]>
export type Membership = Answer<Client["me"]["me"]>["orgs"][number]
