/**
 * Chat completions as OpenAI-compatible clients ask for them: the lean path. No intent, session
 * or message is stored; what applies is what the huddle enforces — the org context's effective
 * settings, enforced policies, memories, credits — and nothing more.
 *
 * ```ts
 * const completions = yield* Completions
 * const started = yield* completions.start({ principal, orgId: null, workspaceId: null, model: "economy", messages })
 * yield* Stream.runForEach(started.events, (event) => …) // ends with `Settled`
 * ```
 *
 * `model` names a target: a tier (`economy`, `standard`, `premium`: that tier's models, lowered
 * to an enforced `model_tier` ceiling like the huddle's tier) or a catalog model (refused when
 * an enforced policy forbids its tier). The multi-model council will be one more kind of target.
 *
 * Money: `start` reserves the worst case (the estimated input with some headroom, plus the
 * output cap, at the dearest candidate) before any model is called, in the caller's scope. The events end with
 * `Settled`, once the reservation has been settled to the provider's reported usage; when the
 * stream fails or is interrupted instead, closing the scope settles for what was consumed (an
 * estimate from the output when the provider reported nothing) or releases it if nothing was.
 */
import { Chunk, Context, Effect, Layer, Option, type Scope, Stream } from "effect"
import { InvalidRequest, NotFound, PolicyViolation, type InsufficientCredits, type Unauthorized, type UpstreamUnavailable } from "../Errors.js"
import {
  type CallOptions,
  type CatalogModel,
  type ChatMessage,
  costOf,
  estimateTokens,
  type ToolCallDelta,
  Usage
} from "../Model.js"
import type { EffectiveSettings, OrgPolicies } from "../Policy.js"
import { tierRank } from "../Policy.js"
import { ModelTier, Preferences } from "../Preferences.js"
import type { Principal } from "../Principal.js"
import { Catalog } from "../ports/Catalog.js"
import { ContextAssembly } from "./ContextAssembly.js"
import { authorityOf, Credits, type Reservation } from "./Credits.js"
import { OrgSettings } from "./OrgSettings.js"
import { tierAllowed } from "./Policies.js"
import { Router } from "./Router.js"

export interface Request {
  readonly principal: Principal
  /** The org context, already resolved (see `RequestContext`). */
  readonly orgId: string | null
  /** Whose workspace memories count; the caller's personal workspace when null. */
  readonly workspaceId: string | null
  /** A tier name or a catalog model id. */
  readonly model: string
  /** The conversation as the client sent it; the memories are put in front of it. */
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  /** The most output tokens the client accepts; the model's own cap when absent. */
  readonly maxOutputTokens?: number | undefined
  readonly options?: CallOptions | undefined
}

/** How a completion ended, once its credits are settled. */
export interface Settled {
  readonly _tag: "Settled"
  readonly model: CatalogModel
  /** The provider's counts when it reported them (`reported`), else an estimate. */
  readonly usage: Usage
  readonly reported: boolean
  readonly charged: number
}

export type Event =
  /** The model being tried; a later one replaces it when it fails before any output. */
  | { readonly _tag: "Answering"; readonly model: CatalogModel }
  | { readonly _tag: "Delta"; readonly text: string }
  | ToolCallDelta
  | { readonly _tag: "Finish"; readonly reason: string }
  /** Always the last event of a stream that did not fail. */
  | Settled

export interface Started {
  /** The model tried first. */
  readonly model: CatalogModel
  readonly events: Stream.Stream<Event, UpstreamUnavailable>
}

export type StartError = InvalidRequest | NotFound | PolicyViolation | InsufficientCredits | Unauthorized

/** A model as listings show it: a tier alias (owned by `huddle`) or a catalog model (owned by its provider). */
export interface Listed {
  readonly id: string
  readonly owned_by: string
  readonly tier: ModelTier
}

export interface Service {
  /** Resolves the target, reserves the worst case and returns the answer as it streams. */
  readonly start: (request: Request) => Effect.Effect<Started, StartError, Scope.Scope>
  /** What the caller may name in this org context: the tier aliases, then the catalog's models. */
  readonly list: (principal: Principal, orgId: string | null) => Effect.Effect<ReadonlyArray<Listed>, NotFound>
  /** One of `list`; anything else is not found. */
  readonly find: (principal: Principal, orgId: string | null, id: string) => Effect.Effect<Listed, NotFound>
}

export class Completions extends Context.Tag("@huddle/domain/Completions")<Completions, Service>() {}

/** What a `model` may name. Each kind is one case of `targetOf` and of `candidatesFor`. */
export type Target =
  | { readonly _tag: "Tier"; readonly tier: ModelTier }
  | { readonly _tag: "Model"; readonly model: CatalogModel }

export const tiers: ReadonlyArray<ModelTier> = ModelTier.literals

const isTier = (id: string): id is ModelTier => (tiers as ReadonlyArray<string>).includes(id)

/** OpenAI's wording for a model that does not exist, so that clients recognise it. */
export const modelNotFound = (id: string) =>
  new NotFound({ message: `The model \`${id}\` does not exist or you do not have access to it.` })

/** How much of a model's context the memories may take (as in the huddle). */
const memoryShare = 0.25
/** Tokens of framing per message and for priming the reply (OpenAI's counting). */
const perMessage = 4
const perReply = 3

const conservative =
  "Be conservative: prefer safe, well-established approaches, state risks and uncertainty, and never recommend irreversible actions without a warning."

/**
 * Headroom on the estimated input in the reservation: a settlement never charges more than was
 * reserved, so the reservation must cover a real token count somewhat above the estimate.
 */
const inputMargin = 1.25

/** A conservative reply's temperature under an enforced low risk tolerance. */
const lowRiskTemperature = 0.2

/** The estimated input tokens of a call: messages with their framing, and the tool definitions. */
export const estimateInput = (messages: ReadonlyArray<ChatMessage>, options: CallOptions | undefined): number => {
  let tokens = perReply
  for (const message of messages) {
    tokens += perMessage + estimateTokens(message.content)
    if (message.tool_calls !== undefined) tokens += estimateTokens(JSON.stringify(message.tool_calls))
    if (message.name !== undefined) tokens += estimateTokens(message.name)
  }
  if (options?.tools !== undefined) tokens += estimateTokens(JSON.stringify(options.tools))
  if (options?.response_format?.type === "json_schema") tokens += estimateTokens(JSON.stringify(options.response_format))
  return tokens
}

const leadingSystem = (lowRisk: boolean, memories: ReadonlyArray<string>): ChatMessage | undefined => {
  const lines: Array<string> = []
  if (lowRisk) lines.push(conservative)
  if (memories.length > 0) {
    lines.push("Remembered context for this team and user:")
    for (const memory of memories) lines.push(`- ${memory}`)
  }
  return lines.length === 0 ? undefined : { role: "system", content: lines.join("\n") }
}

export const make = Effect.gen(function*() {
  const catalog = yield* Catalog
  const router = yield* Router
  const credits = yield* Credits
  const orgSettings = yield* OrgSettings
  const context = yield* ContextAssembly

  const targetOf = (id: string): Option.Option<Target> =>
    isTier(id)
      ? Option.some({ _tag: "Tier", tier: id })
      : Option.map(catalog.find(id), (model): Target => ({ _tag: "Model", model }))

  /** The tier a target asks for: a per-request setting, below enforced policies. */
  const tierOf = (target: Target): ModelTier => {
    switch (target._tag) {
      case "Tier":
        return target.tier
      case "Model":
        return target.model.tier
    }
  }

  /**
   * The models to try, in order. `settings.model_tier` is the tier asked for, lowered to an
   * enforced ceiling if there is one: a tier is served at that level, a named model is refused.
   */
  const candidatesFor = (
    id: string,
    target: Target,
    settings: EffectiveSettings
  ): Effect.Effect<ReadonlyArray<CatalogModel>, NotFound | PolicyViolation> => {
    const allowed = settings.model_tier.value
    switch (target._tag) {
      case "Tier": {
        const models = catalog.forTier(allowed)
        return models.length > 0 ? Effect.succeed(models) : Effect.fail(modelNotFound(id))
      }
      case "Model":
        return tierRank[target.model.tier] > tierRank[allowed]
          ? Effect.fail(
            new PolicyViolation({
              message: `The organization's policy allows models up to the ${allowed} tier; ${target.model.id} is ${target.model.tier}`
            })
          )
          : Effect.succeed([target.model])
    }
  }

  const start: Service["start"] = (request) =>
    Effect.gen(function*() {
      const { principal } = request
      const target = targetOf(request.model)
      if (Option.isNone(target)) return yield* modelNotFound(request.model)
      const settings = yield* orgSettings.effective(
        principal,
        request.orgId,
        new Preferences({ model_tier: tierOf(target.value) }, { disableValidation: true })
      )
      const candidates = yield* candidatesFor(request.model, target.value, settings)
      const primary = candidates[0]!
      const contextWindow = Math.min(...candidates.map((model) => model.context_window))
      const modelCap = Math.max(...candidates.map((model) => model.max_output_tokens))

      const memories = yield* context.memoriesFor({
        userId: principal.user.id,
        orgId: request.orgId,
        workspaceId: request.workspaceId,
        budgetTokens: Math.floor(contextWindow * memoryShare)
      })
      // Only an enforced low risk tolerance overrides what the client asked for.
      const lowRisk = settings.risk_tolerance.value === "low" && settings.risk_tolerance.decided_by === "org_policy"
      const system = leadingSystem(lowRisk, memories.memories.map((memory) => memory.content))
      const messages = system === undefined ? request.messages : [system, ...request.messages]

      const inputTokens = estimateInput(messages, request.options)
      if (inputTokens >= contextWindow) {
        return yield* new InvalidRequest({
          message: `This model's maximum context length is ${contextWindow} tokens; the messages take about ${inputTokens}`
        })
      }
      const maxOutput = Math.min(request.maxOutputTokens ?? modelCap, modelCap)
      const worstCase = Math.max(
        1,
        ...candidates.map((model) =>
          costOf(model, {
            input_tokens: Math.ceil(inputTokens * inputMargin),
            output_tokens: Math.min(maxOutput, model.max_output_tokens)
          })
        )
      )

      const progress = {
        model: primary,
        usage: undefined as Usage | undefined,
        /** Characters of output (text and tool calls) so far. */
        chars: 0,
        settled: undefined as Settled | undefined
      }
      const consumed = () =>
        progress.usage ?? new Usage({
          input_tokens: progress.chars > 0 ? inputTokens : 0,
          output_tokens: Math.ceil(progress.chars / 4)
        })

      // Settles once: at the end of the stream, or (failure, interruption) when the scope closes.
      const settle = (reservation: Reservation): Effect.Effect<Settled> =>
        Effect.uninterruptible(Effect.suspend(() => {
          if (progress.settled !== undefined) return Effect.succeed(progress.settled)
          const usage = consumed()
          const used = progress.chars > 0 || progress.usage !== undefined
          const settled: Settled = { _tag: "Settled", model: progress.model, usage, reported: progress.usage !== undefined, charged: 0 }
          progress.settled = settled
          return used
            ? Effect.map(credits.settle(reservation, costOf(progress.model, usage)), (charged) => {
              progress.settled = { ...settled, charged }
              return progress.settled
            })
            : Effect.as(credits.release(reservation), settled)
        }))

      const reservation = yield* Effect.acquireRelease(
        credits.reserve({
          userId: principal.user.id,
          orgId: request.orgId,
          amount: worstCase,
          creditFallback: settings.credit_fallback.value,
          purpose: `chat completion (${request.model})`,
          authority: authorityOf(principal)
        }),
        settle
      )

      const temperature = lowRisk ? Math.min(request.temperature ?? lowRiskTemperature, lowRiskTemperature) : request.temperature
      const events: Stream.Stream<Event, UpstreamUnavailable> = router.stream(candidates, {
        messages,
        temperature,
        maxOutputTokens: maxOutput,
        options: request.options
      }).pipe(
        Stream.mapChunks((chunks) => {
          const out: Array<Event> = []
          for (const chunk of chunks) {
            switch (chunk._tag) {
              case "Attempt":
                progress.model = chunk.model
                out.push({ _tag: "Answering", model: chunk.model })
                break
              case "Delta":
                progress.chars += chunk.text.length
                out.push(chunk)
                break
              case "ToolCallDelta":
                progress.chars += (chunk.name?.length ?? 0) + (chunk.arguments?.length ?? 0)
                out.push(chunk)
                break
              case "Usage":
                progress.usage = chunk.usage
                break
              case "Finish":
                out.push(chunk)
                break
              case "Failed":
                break
            }
          }
          return Chunk.unsafeFromArray(out)
        }),
        Stream.concat(Stream.fromEffect(settle(reservation)))
      )
      return { model: primary, events } satisfies Started
    })

  const listFor = (policies: OrgPolicies | undefined): ReadonlyArray<Listed> => [
    ...tiers
      .filter((tier) => tierAllowed(policies, tier) && catalog.forTier(tier).length > 0)
      .map((tier): Listed => ({ id: tier, owned_by: "huddle", tier })),
    ...catalog.models
      .filter((model) => tierAllowed(policies, model.tier) && !isTier(model.id))
      .map((model): Listed => ({ id: model.id, owned_by: model.provider, tier: model.tier }))
  ]

  const policiesOf = (principal: Principal, orgId: string | null) =>
    orgId === null ? Effect.succeed(undefined) : orgSettings.policies(principal, orgId)

  const list: Service["list"] = (principal, orgId) => Effect.map(policiesOf(principal, orgId), listFor)

  const find: Service["find"] = (principal, orgId, id) =>
    Effect.flatMap(list(principal, orgId), (listed) => {
      const found = listed.find((model) => model.id === id)
      return found === undefined ? Effect.fail(modelNotFound(id)) : Effect.succeed(found)
    })

  return Completions.of({ start, list, find })
})

export const layer = Layer.effect(Completions, make)
