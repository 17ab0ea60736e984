/**
 * The single-mode pipeline every intent runs through, from the huddle, JSON-RPC or an embedding
 * service: context assembly → planning → review gate → execution → completion. Each stage is
 * reported as it starts and ends; tokens are passed on as the model produces them.
 *
 * Money: the worst-case cost is reserved before any model is called (402 otherwise); after the
 * call the reservation is settled to the real usage, on success, failure or cancellation alike.
 */
import { Cause, Context, DateTime, Effect, Exit, Layer, Option, Predicate, Stream } from "effect"
import {
  codeOf,
  type InsufficientCredits,
  InvalidRequest,
  type NotFound,
  PolicyViolation,
  type Unauthorized,
  type UpstreamUnavailable
} from "../Errors.js"
import { Ids } from "../Ids.js"
import { Intent, IntentError, Plan } from "../Intent.js"
import { type CatalogModel, type ChatMessage, costOf, estimateTokens, Usage } from "../Model.js"
import type { DecidedBy, EffectiveSettings } from "../Policy.js"
import type { HuddleMode, Preferences } from "../Preferences.js"
import type { Principal } from "../Principal.js"
import { riskFlags } from "../RiskFlags.js"
import { Catalog } from "../ports/Catalog.js"
import { IntentRepository } from "../ports/IntentRepository.js"
import { ContextAssembly } from "./ContextAssembly.js"
import type { Authority } from "../ports/CreditStore.js"
import { authorityOf, Credits, type Reservation } from "./Credits.js"
import { OrgSettings } from "./OrgSettings.js"
import { tierAllowed } from "./Policies.js"
import { Router } from "./Router.js"
import { OrgSettingsRepository } from "../ports/OrgSettingsRepository.js"

export type StageName = "context" | "planning" | "review" | "execution" | "completion"

export type PipelineEvent =
  | {
    readonly _tag: "Stage"
    readonly stage: StageName
    readonly status: "started" | "completed" | "skipped"
    readonly detail: Readonly<Record<string, unknown>>
  }
  | { readonly _tag: "Token"; readonly text: string }

export type Emit = (event: PipelineEvent) => Effect.Effect<void>

export const ignoreEvents: Emit = () => Effect.void

export interface Submission {
  readonly principal: Principal
  readonly orgId: string | null
  readonly workspaceId: string | null
  readonly sessionId: string | null
  readonly input: string
  /** Per-request settings (`mode`, `model_tier`), below enforced policies and above preferences. */
  readonly request?: Preferences | undefined
  /** An explicitly named catalog model; refused (403) when a policy forbids its tier. */
  readonly model?: string | undefined
  /** Earlier turns of the conversation, oldest first. */
  readonly history?: ReadonlyArray<ChatMessage> | undefined
  /**
   * What the caller records of the request (a huddle's session and message). It runs once every
   * check that can refuse the request has passed (credits reserved), just before the intent's
   * row is written: a refused request leaves nothing behind.
   */
  readonly accepted?: Effect.Effect<void> | undefined
}

export interface Outcome {
  readonly intent: Intent
  /** The mode the settings chose (requested, preferred or default); `auto` runs as `single` for now. */
  readonly requestedMode: HuddleMode
  /** Whether the answer came from the offline provider. */
  readonly offline: boolean
}

export type PipelineError = InvalidRequest | NotFound | PolicyViolation | InsufficientCredits | UpstreamUnavailable | Unauthorized

export interface Service {
  readonly submit: (submission: Submission, emit: Emit) => Effect.Effect<Outcome, PipelineError>
  /**
   * An intent awaiting review, decided again under the rules in force now, for its submitter:
   * the effective settings (credit fallback, risk, tier), and the plan when a policy now forbids
   * its models (a plan for a tier is re-planned within the new ceiling; a named model is refused).
   */
  readonly replan: (intent: Intent, submitterId: string) => Effect.Effect<Intent, PolicyViolation | InvalidRequest>
  /**
   * Runs execution and completion of an intent approved after review: `payer` is its submitter,
   * `authority` the approver acting now.
   */
  readonly execute: (intent: Intent, payer: string, authority: Authority, emit: Emit) => Effect.Effect<Outcome, PipelineError>
}

export class IntentPipeline extends Context.Tag("@huddle/domain/IntentPipeline")<IntentPipeline, Service>() {}

/** How much of a model's context the memories may take. */
const memoryShare = 0.25
const historyLimit = 40

const temperatureFor = (settings: EffectiveSettings): number =>
  settings.risk_tolerance.value === "low" ? 0.2 : settings.risk_tolerance.value === "high" ? 1 : 0.7

const systemPrompt = (settings: EffectiveSettings, memories: ReadonlyArray<string>): string => {
  const lines = ["You are Huddle, a team AI assistant. Answer clearly and say when you are unsure."]
  if (settings.risk_tolerance.value === "low") {
    lines.push(
      "Be conservative: prefer safe, well-established approaches, state risks and uncertainty, and never recommend irreversible actions without a warning."
    )
  }
  if (memories.length > 0) {
    lines.push("Remembered context for this team and user:")
    for (const memory of memories) lines.push(`- ${memory}`)
  }
  return lines.join("\n")
}

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

/** The most a call to any of `candidates` may cost: the reservation a plan needs. */
const worstCaseOf = (candidates: ReadonlyArray<CatalogModel>, estimatedInput: number, maxOutput: number): number =>
  Math.max(1, ...candidates.map((model) => costOf(model, { input_tokens: estimatedInput, output_tokens: maxOutput })))

const maxOutputOf = (candidates: ReadonlyArray<CatalogModel>): number => Math.min(...candidates.map((model) => model.max_output_tokens))

/** The per-request parameters a submission gave, as its effective settings recorded them. */
const requestOf = (settings: EffectiveSettings): Preferences => {
  const byRequest = <A>(setting: { readonly value: A; readonly decided_by: DecidedBy }) =>
    setting.decided_by === "request" ? setting.value : undefined
  const request: { -readonly [K in keyof Preferences]: Preferences[K] } = {}
  const model_tier = byRequest(settings.model_tier)
  const risk_tolerance = byRequest(settings.risk_tolerance)
  const auto_execute = byRequest(settings.auto_execute)
  const mode = byRequest(settings.mode)
  if (model_tier !== undefined) request.model_tier = model_tier
  if (risk_tolerance !== undefined) request.risk_tolerance = risk_tolerance
  if (auto_execute !== undefined) request.auto_execute = auto_execute
  if (mode !== undefined) request.mode = mode
  return request
}

const failure = (error: { readonly _tag: string; readonly message: string }) =>
  new IntentError({
    error: codeOf(error),
    message: error.message
  })

export const make = Effect.gen(function*() {
  const ids = yield* Ids
  const intents = yield* IntentRepository
  const catalog = yield* Catalog
  const router = yield* Router
  const credits = yield* Credits
  const orgSettings = yield* OrgSettings
  const orgSettingsRepo = yield* OrgSettingsRepository
  const context = yield* ContextAssembly

  const save = (intent: Intent, changes: Partial<Intent>) =>
    Effect.gen(function*() {
      const next = new Intent({ ...intent, ...changes, updated_at: yield* DateTime.now }, { disableValidation: true })
      yield* intents.update(next)
      return next
    })

  const forTier = (settings: EffectiveSettings) => {
    const models = catalog.forTier(settings.model_tier.value)
    return models.length > 0 ? models : catalog.models
  }

  const candidatesFor = (submission: Submission, settings: EffectiveSettings) =>
    Effect.gen(function*() {
      if (submission.model === undefined) return forTier(settings)
      const named = catalog.find(submission.model)
      if (Option.isNone(named)) {
        return yield* new InvalidRequest({ message: `Unknown model: ${submission.model}` })
      }
      const policies = submission.orgId === null ? undefined : yield* orgSettingsRepo.policies(submission.orgId)
      if (!tierAllowed(policies, named.value.tier)) {
        return yield* new PolicyViolation({
          message: `The organization's policy allows models up to the ${policies?.model_tier} tier; ${named.value.id} is ${named.value.tier}`
        })
      }
      return [named.value]
    })

  const closeWith = (exit: Exit.Exit<unknown, unknown>): IntentError | undefined => {
    if (Exit.isSuccess(exit)) return undefined
    if (Exit.isInterrupted(exit)) {
      return new IntentError({ error: "CANCELLED", message: "The request was cancelled before the answer was complete" })
    }
    const error = Cause.failureOption(exit.cause)
    return Option.isSome(error) && Predicate.hasProperty(error.value, "_tag") && Predicate.hasProperty(error.value, "message")
      ? failure(error.value as { _tag: string; message: string })
      : new IntentError({ error: "INTERNAL", message: "The request failed" })
  }

  /**
   * Reserves the worst case of the intent's plan for `payer`, then records the intent as
   * executing (`begin`) and calls the model. A refused reservation fails before `begin` (after
   * `refused`), so whatever `begin` writes is written only for a request that will run.
   */
  const executeIntent = (
    intent: Intent,
    payer: string,
    authority: Authority,
    emit: Emit,
    requestedMode: HuddleMode,
    steps: { readonly begin: Effect.Effect<Intent>; readonly refused: (error: InsufficientCredits | Unauthorized | NotFound) => Effect.Effect<unknown> }
  ) =>
    Effect.gen(function*() {
      const plan = intent.plan!
      const models = plan.models.flatMap((id) => Option.toArray(catalog.find(id)))
      if (models.length === 0) {
        return yield* new InvalidRequest({ message: "The planned models are no longer in the catalog" })
      }

      const progress = { text: "", usage: undefined as Usage | undefined, model: undefined as CatalogModel | undefined }
      const consumed = () =>
        progress.usage ?? new Usage({
          input_tokens: progress.text.length > 0 ? plan.estimated_input_tokens : 0,
          output_tokens: estimateTokens(progress.text)
        })
      let executing: Intent | undefined
      let final = intent

      const reserve = credits.reserve({
        userId: payer,
        orgId: intent.org_id,
        amount: plan.worst_case_credits,
        creditFallback: intent.settings.credit_fallback.value,
        purpose: `intent ${intent.id}`,
        authority
      }).pipe(Effect.tapError(steps.refused))

      const start = Effect.gen(function*() {
        executing = yield* steps.begin
        final = executing
        yield* emit({ _tag: "Stage", stage: "execution", status: "started", detail: { models: plan.models } })
      })

      const call = router.stream(models, {
        messages: plan.messages ?? [],
        temperature: plan.temperature,
        maxOutputTokens: plan.max_output_tokens
      }).pipe(
        Stream.runForEach((chunk) => {
          switch (chunk._tag) {
            case "Attempt":
              progress.model = chunk.model
              return Effect.void
            case "Failed":
              return emit({
                _tag: "Stage",
                stage: "execution",
                status: "started",
                detail: { model: chunk.model.id, failed: chunk.reason, retrying: chunk.willRetry }
              })
            case "Delta":
              progress.text += chunk.text
              return emit({ _tag: "Token", text: chunk.text })
            case "ToolCallDelta":
              // The huddle offers no tools, so a model has none to call.
              return Effect.void
            case "Usage":
              progress.usage = chunk.usage
              return Effect.void
            case "Finish":
              return Effect.void
          }
        })
      )

      // However the call ends (answer, failure, the client going away), the reservation is closed
      // for what was consumed and the intent records the outcome. This runs uninterruptibly.
      const close = (reservation: Reservation, exit: Exit.Exit<void, UpstreamUnavailable>) =>
        Effect.gen(function*() {
          const used = progress.text.length > 0 || progress.usage !== undefined
          const charged = used && progress.model !== undefined
            ? yield* credits.settle(reservation, costOf(progress.model, consumed()))
            : yield* credits.release(reservation).pipe(Effect.as(0))
          // Interrupted before it was recorded, there is no intent to close.
          if (executing === undefined) return
          const error = closeWith(exit)
          final = yield* save(executing, {
            status: error === undefined ? "completed" : "failed",
            error: error ?? null,
            output: progress.text.length > 0 ? progress.text : null,
            usage: used ? consumed() : null,
            credits_charged: charged,
            models: progress.model ? [progress.model.id] : []
          })
        })

      yield* Effect.acquireUseRelease(reserve, () => Effect.zipRight(start, call), close)
      yield* emit({
        _tag: "Stage",
        stage: "execution",
        status: "completed",
        detail: { model: final.models[0] ?? null, output_tokens: final.usage?.output_tokens ?? 0 }
      })
      yield* emit({ _tag: "Stage", stage: "completion", status: "completed", detail: { credits_charged: final.credits_charged } })
      return { intent: final, requestedMode, offline: progress.model?.provider === "offline" } satisfies Outcome
    })

  const submit: Service["submit"] = (submission, emit) =>
    Effect.gen(function*() {
      const { principal } = submission
      const now = yield* DateTime.now

      // Context: effective settings, memories, conversation.
      yield* emit({ _tag: "Stage", stage: "context", status: "started", detail: {} })
      const settings = yield* orgSettings.effective(principal, submission.orgId, submission.request)
      const requestedMode = settings.mode.value
      if (requestedMode === "multi") {
        return yield* new InvalidRequest({ message: "mode \"multi\" is not available yet; use \"single\" or \"auto\"" })
      }
      const candidates = yield* candidatesFor(submission, settings)
      const primary = candidates[0]!
      const memories = yield* context.memoriesFor({
        userId: principal.user.id,
        orgId: submission.orgId,
        workspaceId: submission.workspaceId,
        budgetTokens: Math.floor(primary.context_window * memoryShare)
      })
      const system = systemPrompt(settings, memories.memories.map((memory) => memory.content))
      const maxOutput = maxOutputOf(candidates)
      const inputBudget = Math.min(...candidates.map((model) => model.context_window)) - maxOutput -
        estimateTokens(system) - estimateTokens(submission.input)
      if (inputBudget < 0) {
        return yield* new InvalidRequest({ message: "The input is too long for the model's context window" })
      }
      const history = fitHistory(submission.history ?? [], inputBudget)
      const messages: ReadonlyArray<ChatMessage> = [
        { role: "system", content: system },
        ...history,
        { role: "user", content: submission.input }
      ]
      yield* emit({
        _tag: "Stage",
        stage: "context",
        status: "completed",
        detail: { memories: memories.memories.length, history_messages: history.length, model_tier: settings.model_tier.value }
      })

      // Planning: which models, what it may cost at most.
      yield* emit({ _tag: "Stage", stage: "planning", status: "started", detail: {} })
      const estimatedInput = messages.reduce((sum, message) => sum + estimateTokens(message.content), 0)
      const worstCase = worstCaseOf(candidates, estimatedInput, maxOutput)
      const flags = settings.risk_tolerance.value === "low" ? riskFlags(submission.input) : []
      const plan = new Plan({
        models: candidates.map((model) => model.id),
        max_output_tokens: maxOutput,
        estimated_input_tokens: estimatedInput,
        worst_case_credits: worstCase,
        temperature: temperatureFor(settings),
        memories_used: memories.memories.length,
        history_messages: history.length,
        messages,
        ...(submission.model === undefined ? {} : { requested_model: submission.model }),
        flags
      })
      const planned = new Intent({
        id: yield* ids.next("int"),
        status: "planning",
        input: submission.input,
        mode: "single",
        org_id: submission.orgId,
        session_id: submission.sessionId,
        settings,
        plan,
        output: null,
        models: [],
        usage: null,
        credits_charged: 0,
        error: null,
        created_at: now,
        updated_at: now
      })
      // Nothing is written before this point: a request refused above leaves no trace.
      const record = (status: "awaiting_review" | "executing") =>
        Effect.gen(function*() {
          const intent = new Intent({ ...planned, status }, { disableValidation: true })
          // Not one transaction: a transaction empties this instance's caches, and only a defect
          // (a 500) could come between these writes.
          yield* submission.accepted ?? Effect.void
          yield* intents.insert(intent, { userId: principal.user.id, workspaceId: submission.workspaceId })
          yield* emit({
            _tag: "Stage",
            stage: "planning",
            status: "completed",
            detail: { intent_id: intent.id, models: plan.models, worst_case_credits: worstCase }
          })
          return intent
        })

      // Review gate: with auto_execute off, a person approves before anything runs or is charged.
      if (!settings.auto_execute.value) {
        const waiting = yield* record("awaiting_review")
        yield* emit({
          _tag: "Stage",
          stage: "review",
          status: "started",
          detail: { intent_id: waiting.id, awaiting: "approval", decided_by: settings.auto_execute.decided_by, flags }
        })
        return { intent: waiting, requestedMode, offline: false } satisfies Outcome
      }
      return yield* executeIntent(planned, principal.user.id, authorityOf(principal), emit, requestedMode, {
        begin: record("executing").pipe(Effect.tap(() => emit({ _tag: "Stage", stage: "review", status: "skipped", detail: { flags } }))),
        refused: () => Effect.void
      })
    })

  const replan: Service["replan"] = (intent, submitterId) =>
    Effect.gen(function*() {
      const settings = yield* orgSettings.effectiveFor(submitterId, intent.org_id, requestOf(intent.settings))
      const plan = intent.plan
      if (plan === null) return new Intent({ ...intent, settings }, { disableValidation: true })
      const policies = intent.org_id === null ? undefined : yield* orgSettingsRepo.policies(intent.org_id)
      const planned = plan.models.flatMap((id) => Option.toArray(catalog.find(id)))
      let models: ReadonlyArray<CatalogModel> = planned
      if (planned.some((model) => !tierAllowed(policies, model.tier))) {
        if (plan.requested_model !== undefined) {
          return yield* new PolicyViolation({
            message: `The organization's policy now allows models up to the ${policies?.model_tier} tier; ` +
              `${plan.requested_model} was approved too late to run`
          })
        }
        models = forTier(settings)
      }
      const maxOutput = Math.min(plan.max_output_tokens, maxOutputOf(models))
      const next = new Plan({
        ...plan,
        models: models.map((model) => model.id),
        max_output_tokens: maxOutput,
        worst_case_credits: worstCaseOf(models, plan.estimated_input_tokens, maxOutput),
        temperature: temperatureFor(settings)
      }, { disableValidation: true })
      return new Intent({ ...intent, settings, plan: next }, { disableValidation: true })
    })

  const execute: Service["execute"] = (intent, payer, authority, emit) =>
    executeIntent(intent, payer, authority, emit, intent.mode, {
      begin: save(intent, { status: "executing" }),
      // An approved intent is already recorded: a refused reservation is its outcome.
      refused: (error) => save(intent, { status: "failed", error: failure(error) })
    })

  return IntentPipeline.of({ submit, replan, execute })
})

export const layer = Layer.effect(IntentPipeline, make)
