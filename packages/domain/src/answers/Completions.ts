/**
 * Chat completions as OpenAI-compatible clients ask for them: the lean path over the answer core
 * (`Answers`), the same preparation, pricing and execution as a huddle turn's. No intent, session
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
 * to an enforced `model_tier` ceiling like the huddle's tier), a catalog model (refused when
 * an enforced policy forbids its tier), or a council: `council` (the caller's effective tier,
 * as the huddle's `model_tier` settings decide it) or `council-<tier>` (lowered like a tier).
 *
 * Money: a completion is one `MeteredCall` (`Answers.alone`): the worst case is reserved as the stream starts,
 * before any model is called; the events end with `Settled`; a stream that fails or is
 * interrupted is settled for what it consumed as it closes. A council (`Answers.convene`) reserves
 * its whole run's worst case the same way, settles each call as it ends, and its events
 * end with `Concluded` instead: the consensus (never the rounds) as `Delta`s, then the run's
 * usage, credits and report.
 */
import { Chunk, Context, Effect, Layer, Stream } from "effect"
import type { Opened } from "../shared/Streams.js"
import { wordGroups } from "../shared/Words.js"
import { type InsufficientCredits, InvalidRequest, type NotFound, type PolicyViolation, type Unauthorized, type UpstreamUnavailable } from "../shared/Errors.js"
import type { CallOptions, ChatMessage, ModelPricing, Usage } from "../models/Model.js"
import type { ModelTier } from "../settings/Preferences.js"
import { Catalog } from "../models/Catalog.js"
import { type CallEvent, isOutput as isCallOutput, isTier, modelNotFound, type Settled, targetOf, tiers } from "../models/MeteredCall.js"
import { councilRefusalOf } from "../models/ProviderSupport.js"
import { tierAllowed } from "../settings/Policies.js"
import { type RequestScope, settingsOf } from "../request/RequestScope.js"
import type { CouncilResult } from "../council/Council.js"
import type { ConsensusReport } from "../council/ConsensusReport.js"
import { traced } from "../observability/Traced.js"
import { Answers } from "./Answers.js"
import type { AnswerRequest } from "./Preparation.js"

export { modelNotFound, type Settled, tiers }

/** The council a client names: `council` for the effective tier, `council-<tier>` for one tier. */
export const councilPrefix = "council"

/**
 * The tier a council id asks for (`effective`: the caller's settings decide); undefined when the
 * id names no council.
 */
export const councilTierOf = (id: string): ModelTier | "effective" | undefined => {
  if (id === councilPrefix) return "effective"
  const tier = id.startsWith(`${councilPrefix}-`) ? id.slice(councilPrefix.length + 1) : undefined
  return tier !== undefined && isTier(tier) ? tier : undefined
}

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
  /** Where the memories go (see `Preparation`'s `Conversation`): the Messages API puts them after the client's system. */
  readonly memories?: "first" | "after-system" | undefined
}

/**
 * How a council's answer ends, once every call of its run is settled: what `Settled` is to one
 * model's answer. Its finish is always "stop" (a consensus is complete or the run failed).
 */
export interface Concluded {
  readonly _tag: "Concluded"
  readonly report: ConsensusReport
  /** Every participant's calls, every round. */
  readonly usage: Usage
  /** What the run was charged: the sum of the participants' credits in the report. */
  readonly charged: number
}

/**
 * A council's first event, once its whole run's credits are held: its rounds take long and say
 * nothing a completion can carry, so a stream starts here rather than at the consensus.
 */
export interface Convened {
  readonly _tag: "Convened"
}

/** A completion's events: the metered call's, or for a council `Convened`, its consensus and `Concluded`. */
export type Event = CallEvent | Convened | Concluded

/** Whether an event is output (text or a tool call, a council convened): what a stream is held back for. */
export const isOutput = (event: Event): boolean =>
  event._tag === "Convened" || (event._tag !== "Concluded" && isCallOutput(event))

export type CompletionError = InvalidRequest | NotFound | PolicyViolation | InsufficientCredits | Unauthorized | UpstreamUnavailable

/** A model as listings show it: a tier alias (owned by `huddle`) or a catalog model (owned by its provider). */
export interface Listed {
  readonly id: string
  readonly owned_by: string
  readonly tier: ModelTier
  /**
   * A catalog model's prices. Tiers and councils have none of their own (decision 0050): a tier's
   * call may be answered by any of its models, and a council's is many calls.
   */
  readonly pricing?: ModelPricing | undefined
}

export interface Service {
  /**
   * The answer as it streams: resolves the target, reserves the worst case as the stream starts,
   * and settles as it ends (its last event is `Settled`, or `Concluded` for a council), fails or
   * is interrupted.
   */
  readonly stream: (request: Request) => Stream.Stream<Event, CompletionError>
  /**
   * `stream` as the effect that opens its pull, in the caller's scope (which the call's credits
   * are settled with, at the latest): what the server's dialects run, a pull at a time, without
   * a stream's channels in between (`forEachPull`).
   */
  readonly open: (request: Request) => Opened<Event, CompletionError>
  /** What the caller may name in this scope: the tier aliases, the councils, then the catalog's models. */
  readonly list: (scope: RequestScope) => ReadonlyArray<Listed>
  /** One of `list`; anything else is not found. */
  readonly find: (scope: RequestScope, id: string) => Effect.Effect<Listed, NotFound>
}

export class Completions extends Context.Tag("@huddle/domain/Completions")<Completions, Service>() {}

/** The consensus as deltas of a few words, so that a streaming client sees it arrive as text does. */
const deltasOf = (text: string): ReadonlyArray<Event> => wordGroups(text).map((text) => ({ _tag: "Delta", text }))

export const make = Effect.gen(function*() {
  const catalog = yield* Catalog
  const answers = yield* Answers

  // The catalog and the providers are fixed for the process: which tiers can seat a council is
  // decided once (enough usable models, a context window that holds the rounds).
  const convenes: ReadonlySet<ModelTier> = new Set(
    yield* Effect.filter(tiers, (tier) => answers.seatable(catalog.forTier(tier)))
  )

  /** The client's conversation as the answer core prepares it, in the settings of the request's scope. */
  const asked = (request: Request, target: AnswerRequest["target"], options: CallOptions | undefined): AnswerRequest => ({
    scope: request.scope,
    settings: settingsOf(request.scope),
    target,
    framing: { _tag: "Conversation", messages: request.messages, temperature: request.temperature, options, memories: request.memories }
  })

  const purposeOf = (request: Request) => `chat completion (${request.model})`

  /** One model call (tier or model), reserved and under way. */
  const single = (request: Request) =>
    Effect.gen(function*() {
      const prepared = yield* answers.prepare(asked(request, targetOf(request.model), request.options))
      const plan = yield* answers.quote(prepared, request.maxOutputTokens)
      const call = yield* answers.alone({ plan, conversation: prepared, purpose: purposeOf(request) })
      return yield* call.open
    })

  /** Its answer: the consensus, then `Concluded` (a multi-mode run always concludes with a report). */
  const conclusion = (result: CouncilResult): Effect.Effect<ReadonlyArray<Event>> =>
    result._tag === "Council"
      ? Effect.succeed([...deltasOf(result.report.text), { _tag: "Concluded", report: result.report, usage: result.usage, charged: result.charged }])
      : Effect.dieMessage("A multi-mode council concluded without a report")

  const convene = (request: Request, tier: ModelTier | "effective") =>
    Stream.unwrapScoped(Effect.gen(function*() {
      // Refused before anything is reserved: an option the council would drop is an error, not a loss;
      // so the council's calls take none.
      const refusal = councilRefusalOf(request.options)
      if (refusal !== undefined) return yield* new InvalidRequest({ message: refusal.message, field: refusal.param })
      const prepared = yield* answers.prepare(asked(request, tier === "effective" ? undefined : { _tag: "Tier", tier }, undefined))
      if (!convenes.has(prepared.candidates[0]!.tier)) return yield* modelNotFound(request.model)
      // `max_tokens` caps the consensus: the chair's synthesis, which is the answer.
      const seated = yield* answers.seat(prepared, request.maxOutputTokens)
      const { events } = yield* answers.convene({ council: seated, conversation: prepared, purpose: purposeOf(request), mode: "multi" })
      return events.pipe(
        Stream.mapEffect((event) => event._tag === "Concluded" ? conclusion(event.result) : Effect.succeed<ReadonlyArray<Event>>([])),
        Stream.flattenIterables,
        // Its credits are held: from here the answer is under way (a stream may start, with heartbeats).
        Stream.prepend(Chunk.of<Event>({ _tag: "Convened" }))
      )
    }))

  const open: Service["open"] = (request) => {
    const asked = councilTierOf(request.model)
    return asked === undefined ? single(request) : Stream.toPull(convene(request, asked))
  }

  const stream: Service["stream"] = (request) => Stream.unwrapScoped(Effect.map(open(request), Stream.repeatEffectChunkOption))

  const list: Service["list"] = (scope) => {
    const { policies } = scope.rules
    const effective = settingsOf(scope).model_tier.value
    return [
      ...tiers
        .filter((tier) => tierAllowed(policies, tier) && catalog.forTier(tier).length > 0)
        .map((tier): Listed => ({ id: tier, owned_by: "huddle", tier })),
      ...(convenes.has(effective) ? [{ id: councilPrefix, owned_by: "huddle", tier: effective }] : []),
      ...tiers
        .filter((tier) => tierAllowed(policies, tier) && convenes.has(tier))
        .map((tier): Listed => ({ id: `${councilPrefix}-${tier}`, owned_by: "huddle", tier })),
      ...catalog.models
        .filter((model) => tierAllowed(policies, model.tier) && !isTier(model.id) && councilTierOf(model.id) === undefined)
        .map((model): Listed => ({ id: model.id, owned_by: model.provider, tier: model.tier, pricing: model.pricing }))
    ]
  }

  const find: Service["find"] = (scope, id) => {
    const found = list(scope).find((model) => model.id === id)
    return found === undefined ? Effect.fail(modelNotFound(id)) : Effect.succeed(found)
  }

  // `open` is no span of its own: it would end as the call starts; the call's is `MeteredCall.run`.
  return Completions.of({ ...traced("Completions", { stream, list, find }), open })
})

export const layer = Layer.effect(Completions, make)
