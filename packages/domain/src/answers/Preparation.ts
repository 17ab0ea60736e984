/**
 * What every answer needs before it is planned, decided once for every entry point: the models
 * that may answer (a tier or a named model, under an enforced ceiling), the memories put in front
 * of the conversation, the workspace's repository (a huddle turn's), the payer, the temperature.
 *
 * Two framings of the conversation:
 * - a huddle turn (`Turn`): Huddle's own instructions, the settings' risk tolerance, excerpts of
 *   the workspace's repository, and the earlier turns, oldest dropped first until they fit;
 * - a client's conversation (`Conversation`: chat completions, Responses, the Messages API): the
 *   memories in front of what the client sent, and nothing else, but for an enforced low risk
 *   tolerance, which caps the client's temperature and asks for caution.
 */
import { Effect, Option } from "effect"
import type { Grounded } from "../grounding/Grounding.js"
import type { Grounding } from "../grounding/Grounding.js"
import { InvalidRequest, type NotFound, type PolicyViolation } from "../shared/Errors.js"
import type { ContextAssembly } from "../memories/ContextAssembly.js"
import { leadingInstructions, memoryShare } from "../memories/ContextAssembly.js"
import type { MeteredCall, Payer, Target } from "../models/MeteredCall.js"
import { type CallOptions, type CatalogModel, type ChatMessage, estimateTokens } from "../models/Model.js"
import type { EffectiveSettings } from "../settings/Policy.js"
import type { RequestScope } from "../request/RequestScope.js"
import { payerOf } from "./Payer.js"

export type Framing =
  | {
    readonly _tag: "Turn"
    /** The question. */
    readonly input: string
    /** Earlier turns of the conversation, oldest first. */
    readonly history: ReadonlyArray<ChatMessage>
  }
  | {
    readonly _tag: "Conversation"
    readonly messages: ReadonlyArray<ChatMessage>
    readonly temperature?: number | undefined
    /** Tools, response formats…: only models whose provider honours them are candidates. */
    readonly options?: CallOptions | undefined
    /**
     * Where the memories go: `first` (the default), or `after-system`, after the client's leading
     * system messages, so that a prompt cache keyed on the client's prefix still hits.
     */
    readonly memories?: "first" | "after-system" | undefined
  }

export interface AnswerRequest {
  /** Who asks, in which org and workspace. */
  readonly scope: RequestScope
  /** The settings in force for this request (`settingsOf(scope, request)`). */
  readonly settings: EffectiveSettings
  /** A tier or a named model; the tier the settings decide when absent. */
  readonly target?: Target | undefined
  readonly framing: Framing
}

export interface Prepared {
  readonly scope: RequestScope
  readonly settings: EffectiveSettings
  /** The models to try, in order. */
  readonly candidates: ReadonlyArray<CatalogModel>
  /** What the models are sent: instructions and memories first, the question last. */
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature: number | undefined
  readonly options: CallOptions | undefined
  readonly payer: Payer
  /** How many memories were put in front. */
  readonly memories: number
  /** How many earlier turns were kept (a turn's). */
  readonly history: number
  /** Excerpts of the workspace's repository (a turn's, when one is connected and indexed). */
  readonly grounded: Grounded | undefined
  /** The smallest output cap of the candidates. */
  readonly maxOutput: number
}

export type PrepareError = InvalidRequest | NotFound | PolicyViolation

export interface Ports {
  readonly metered: MeteredCall["Type"]
  readonly context: ContextAssembly["Type"]
  readonly grounding: Grounding["Type"]
}

/** The most earlier turns a huddle turn carries. */
const historyLimit = 40

/** A conservative reply's temperature under an enforced low risk tolerance. */
const lowRiskTemperature = 0.2

const huddleIntro = "You are Huddle, a team AI assistant. Answer clearly and say when you are unsure."

/** A huddle turn's temperature: the settings' risk tolerance. */
export const temperatureFor = (settings: EffectiveSettings): number =>
  settings.risk_tolerance.value === "low" ? 0.2 : settings.risk_tolerance.value === "high" ? 1 : 0.7

/** Drops the oldest turns until the conversation fits the model's input budget. */
const fitHistory = (history: ReadonlyArray<ChatMessage>, budgetTokens: number): ReadonlyArray<ChatMessage> => {
  const kept: Array<ChatMessage> = []
  let used = 0
  for (let i = history.length - 1; i >= 0 && kept.length < historyLimit; i--) {
    const turn = history[i]!
    const cost = estimateTokens(turn.content)
    if (used + cost > budgetTokens) break
    used += cost
    kept.unshift(turn)
  }
  return kept
}

/** How many system messages open a conversation. */
const leadingSystem = (messages: ReadonlyArray<ChatMessage>): number => {
  const at = messages.findIndex((message) => message.role !== "system")
  return at === -1 ? messages.length : at
}

export const prepare = (ports: Ports) => (request: AnswerRequest): Effect.Effect<Prepared, PrepareError> =>
  Effect.gen(function*() {
    const { framing, scope, settings } = request
    const { principal } = scope
    const target = request.target ?? { _tag: "Tier", tier: settings.model_tier.value }
    const listed = yield* ports.metered.candidates(target, scope.rules.policies?.model_tier)
    const candidates = framing._tag === "Conversation" ? yield* ports.metered.fitting(listed, framing.options) : listed
    // Any candidate may answer: what goes in front must fit the smallest window.
    const contextWindow = Math.min(...candidates.map((model) => model.context_window))
    const memories = yield* ports.context.memoriesFor({
      userId: principal.user.id,
      orgId: scope.orgId,
      member: scope.role !== null,
      workspaceId: scope.workspaceId,
      personal: scope.personal,
      budgetTokens: Math.floor(contextWindow * memoryShare)
    })
    const common = {
      scope,
      settings,
      candidates,
      payer: payerOf({ userId: principal.user.id, orgId: scope.orgId, settings, actor: principal }),
      memories: memories.memories.length,
      maxOutput: Math.min(...candidates.map((model) => model.max_output_tokens))
    }
    if (framing._tag === "Conversation") {
      // Only an enforced low risk tolerance overrides what the client asked for.
      const lowRisk = settings.risk_tolerance.value === "low" && settings.risk_tolerance.decided_by === "org_policy"
      const system = leadingInstructions({ conservative: lowRisk, memories: memories.memories })
      const at = framing.memories === "after-system" ? leadingSystem(framing.messages) : 0
      return {
        ...common,
        messages: system.length === 0
          ? framing.messages
          : [...framing.messages.slice(0, at), { role: "system", content: system, source: "huddle" }, ...framing.messages.slice(at)],
        temperature: lowRisk ? Math.min(framing.temperature ?? lowRiskTemperature, lowRiskTemperature) : framing.temperature,
        options: framing.options,
        history: 0,
        grounded: undefined
      }
    }
    const leading = leadingInstructions({ conservative: settings.risk_tolerance.value === "low", memories: memories.memories })
    const system = leading.length === 0 ? huddleIntro : `${huddleIntro}\n${leading}`
    // The workspace's repository, when one is connected and indexed: excerpts within a share of the window.
    const grounded = Option.getOrUndefined(yield* ports.grounding.ground({
      userId: principal.user.id,
      workspaceId: scope.workspaceId,
      personal: scope.personal,
      question: framing.input,
      contextWindow
    }))
    const inputBudget = contextWindow - common.maxOutput - estimateTokens(system) - estimateTokens(framing.input) -
      (grounded === undefined ? 0 : estimateTokens(grounded.instructions))
    if (inputBudget < 0) {
      return yield* new InvalidRequest({ message: "The input is too long for the model's context window" })
    }
    const history = fitHistory(framing.history, inputBudget)
    return {
      ...common,
      messages: [
        { role: "system", content: system, source: "huddle" },
        ...(grounded === undefined ? [] : [{ role: "system" as const, content: grounded.instructions, source: "huddle" as const }]),
        ...history,
        { role: "user", content: framing.input }
      ],
      temperature: temperatureFor(settings),
      options: undefined,
      history: history.length,
      grounded
    }
  })
