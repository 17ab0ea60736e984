/**
 * How each configured provider has been doing on this instance (`Router.health`, which `/readyz`
 * reports): consecutive failures, the last failure and success; and each failed attempt said at
 * the default log level (provider, model, reason, status, the provider's cleaned message).
 */
import { Effect } from "effect"
import { offlineProvider } from "./Catalog.js"
import type { CatalogModel } from "./Model.js"
import type { ProviderFailure } from "./ModelProviders.js"
import type { ProviderHealth } from "./Router.js"

/** A failure in a few words: its reason, and its HTTP status when it has one (`server_error (503)`). */
export const describe = (failure: ProviderFailure) => `${failure.reason}${failure.status ? ` (${failure.status})` : ""}`

/** The health of the providers called since the start (the offline model is not watched). */
export const providerWatch = () => {
  /** Per provider, mutated in place: a failure or an answer is one write, off the answer's path. */
  const healthOf = new Map<string, { -readonly [K in keyof ProviderHealth]: ProviderHealth[K] }>()
  const watched = (model: CatalogModel) => {
    let entry = healthOf.get(model.provider)
    if (entry === undefined) healthOf.set(model.provider, entry = { provider: model.provider, consecutiveFailures: 0 })
    return entry
  }
  const answered = (model: CatalogModel) => {
    if (model.provider === offlineProvider) return
    const entry = watched(model)
    entry.consecutiveFailures = 0
    entry.lastSuccessAt = Date.now()
  }
  /** A configured provider's failed attempt: kept in its health, and said at the default log level. */
  const failedAttempt = (model: CatalogModel, failure: ProviderFailure, attempt: number, willRetry: boolean) => {
    if (model.provider !== offlineProvider) {
      const entry = watched(model)
      entry.consecutiveFailures++
      entry.lastFailureAt = Date.now()
      entry.lastFailure = describe(failure)
    }
    return Effect.logWarning(`model provider ${model.provider} failed: ${describe(failure)}`).pipe(
      Effect.annotateLogs({
        provider: model.provider,
        model: model.id,
        reason: failure.reason,
        ...(failure.status === undefined ? {} : { status: failure.status }),
        attempt,
        will_retry: willRetry,
        // Cleaned by the adapter: the secret removed, one line, bounded.
        detail: failure.message
      })
    )
  }
  const health = Effect.sync((): ReadonlyArray<ProviderHealth> => [...healthOf.values()].map((entry) => ({ ...entry })))
  return { answered, failedAttempt, health }
}

export type ProviderWatch = ReturnType<typeof providerWatch>
