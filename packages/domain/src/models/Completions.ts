/**
 * Chat completions as OpenAI-compatible clients ask for them: the lean path. No intent, session
 * or message is stored; what applies is what the huddle enforces — the org context's effective
 * settings, enforced policies, memories, credits — and nothing more.
 *
 * ```ts
 * const completions = yield* Completions
 * const scope = yield* (yield* RequestScopes).resolve(principal, {})
 * yield* Stream.runForEach(completions.stream({ scope, model: "economy", messages }), (event) => …) // ends with `Settled`
 * ```
 *
 * `model` names a target: a tier (`economy`, `standard`, `premium`: that tier's models, lowered
 * to an enforced `model_tier` ceiling like the huddle's tier) or a catalog model (refused when
 * an enforced policy forbids its tier). The multi-model council will be one more kind of target.
 *
 * Money: a completion is one `MeteredCall`: the worst case is reserved as the stream starts,
 * before any model is called; the events end with `Settled`; a stream that fails or is
 * interrupted is settled for what it consumed as it closes.
 */
import { Context, Effect, Layer, Stream } from "effect"
import type { InsufficientCredits, InvalidRequest, NotFound, PolicyViolation, Unauthorized, UpstreamUnavailable } from "../shared/Errors.js"
import type { CallOptions, ChatMessage } from "./Model.js"
import type { ModelTier } from "../accounts/Preferences.js"
import { Catalog } from "./Catalog.js"
import { ContextAssembly, leadingInstructions, memoryShare } from "../memories/ContextAssembly.js"
import { authorityOf } from "../credits/Credits.js"
import { type CallEvent, isTier, MeteredCall, modelNotFound, type Settled, targetOf, tiers } from "./MeteredCall.js"
import { tierAllowed } from "../orgs/Policies.js"
import { type RequestScope, settingsOf } from "../request/RequestScope.js"

export { modelNotFound, type Settled, tiers }

export interface Request {
  /** Who asks, in which org and workspace (see `RequestScope`). */
  readonly scope: RequestScope
  /** A tier name or a catalog model id. */
  readonly model: string
  /** The conversation as the client sent it; the memories are put in front of it. */
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  /** The most output tokens the client accepts; the model's own cap when absent. */
  readonly maxOutputTokens?: number | undefined
  readonly options?: CallOptions | undefined
}

/** A completion's events are the metered call's. */
export type Event = CallEvent

export type CompletionError = InvalidRequest | NotFound | PolicyViolation | InsufficientCredits | Unauthorized | UpstreamUnavailable

/** A model as listings show it: a tier alias (owned by `huddle`) or a catalog model (owned by its provider). */
export interface Listed {
  readonly id: string
  readonly owned_by: string
  readonly tier: ModelTier
}

export interface Service {
  /**
   * The answer as it streams: resolves the target, reserves the worst case as the stream starts,
   * and settles as it ends (its last event is `Settled`), fails or is interrupted.
   */
  readonly stream: (request: Request) => Stream.Stream<Event, CompletionError>
  /** What the caller may name in this scope: the tier aliases, then the catalog's models. */
  readonly list: (scope: RequestScope) => ReadonlyArray<Listed>
  /** One of `list`; anything else is not found. */
  readonly find: (scope: RequestScope, id: string) => Effect.Effect<Listed, NotFound>
}

export class Completions extends Context.Tag("@huddle/domain/Completions")<Completions, Service>() {}

/** A conservative reply's temperature under an enforced low risk tolerance. */
const lowRiskTemperature = 0.2

export const make = Effect.gen(function*() {
  const catalog = yield* Catalog
  const metered = yield* MeteredCall
  const context = yield* ContextAssembly

  const stream: Service["stream"] = (request) =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const { scope } = request
      const { principal } = scope
      const candidates = yield* metered.candidates(targetOf(request.model), scope.rules.policies?.model_tier).pipe(
        Effect.flatMap((models) => metered.fitting(models, request.options))
      )
      const settings = settingsOf(scope)
      const memories = yield* context.memoriesFor({
        userId: principal.user.id,
        orgId: scope.orgId,
        member: scope.role !== null,
        workspaceId: scope.workspaceId,
        budgetTokens: Math.floor(Math.min(...candidates.map((model) => model.context_window)) * memoryShare)
      })
      // Only an enforced low risk tolerance overrides what the client asked for.
      const lowRisk = settings.risk_tolerance.value === "low" && settings.risk_tolerance.decided_by === "org_policy"
      const system = leadingInstructions({ conservative: lowRisk, memories: memories.memories })
      const messages = system.length === 0 ? request.messages : [{ role: "system" as const, content: system }, ...request.messages]
      const quote = yield* metered.quote(candidates, messages, { maxOutputTokens: request.maxOutputTokens, options: request.options })
      const call = yield* metered.run({
        payer: {
          userId: principal.user.id,
          orgId: scope.orgId,
          creditFallback: settings.credit_fallback.value,
          authority: authorityOf(principal)
        },
        purpose: `chat completion (${request.model})`,
        candidates,
        quote,
        messages,
        temperature: lowRisk ? Math.min(request.temperature ?? lowRiskTemperature, lowRiskTemperature) : request.temperature,
        options: request.options
      })
      return call.events
    }))

  const list: Service["list"] = (scope) => {
    const { policies } = scope.rules
    return [
      ...tiers
        .filter((tier) => tierAllowed(policies, tier) && catalog.forTier(tier).length > 0)
        .map((tier): Listed => ({ id: tier, owned_by: "huddle", tier })),
      ...catalog.models
        .filter((model) => tierAllowed(policies, model.tier) && !isTier(model.id))
        .map((model): Listed => ({ id: model.id, owned_by: model.provider, tier: model.tier }))
    ]
  }

  const find: Service["find"] = (scope, id) => {
    const found = list(scope).find((model) => model.id === id)
    return found === undefined ? Effect.fail(modelNotFound(id)) : Effect.succeed(found)
  }

  return Completions.of({ stream, list, find })
})

export const layer = Layer.effect(Completions, make)
