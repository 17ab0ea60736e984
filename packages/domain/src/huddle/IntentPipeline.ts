/**
 * The pipeline every intent runs through, from the huddle, JSON-RPC or an embedding service:
 * context assembly → planning → review gate → execution → completion. A run is a `Stream` of
 * events: each stage as it starts and ends, the answer's tokens, and, last, `Done` with the
 * outcome. Execution is one model (single mode) or a council (multi mode; `council/Council`),
 * whose rounds are stages of their own; auto mode decides between them (`council/AutoMode`).
 *
 * Money: single mode's execution is one `MeteredCall`: the plan's worst case is reserved before
 * any model is called (402 otherwise) and settled to the real usage on success, failure or
 * cancellation alike. A council reserves its whole run's worst case the same way, before its
 * first call, and settles each call as it ends.
 */
import { Cause, Chunk, Context, DateTime, Effect, Exit, Layer, Option, Predicate, Stream } from "effect"
import { Council, type CouncilEvent, type Spent } from "../council/Council.js"
import { ConsensusReport, type CouncilRound } from "../council/ConsensusReport.js"
import * as AutoMode from "../council/AutoMode.js"
import { CitationFilter, type Context as CitableContext, verify } from "../grounding/Citations.js"
import { Grounding, withCitations } from "../grounding/Grounding.js"
import { codeOf, type InsufficientCredits, InvalidRequest, type NotFound, PolicyViolation, type Unauthorized, type UpstreamUnavailable } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { Intent, IntentError, Plan } from "./Intent.js"
import { type CatalogModel, type ChatMessage, estimateTokens, type FailedModel } from "../models/Model.js"
import type { DecidedBy, EffectiveSettings } from "../settings/Policy.js"
import type { HuddleMode, Preferences } from "../settings/Preferences.js"
import { riskFlags } from "./RiskFlags.js"
import { lastOf } from "../shared/Streams.js"
import type { HuddleMessage } from "./Huddle.js"
import { IntentRepository, type Question } from "./IntentRepository.js"
import { ContextAssembly, leadingInstructions, memoryShare } from "../memories/ContextAssembly.js"
import { authorityOf } from "../credits/Credits.js"
import * as HeldCalls from "../models/HeldCalls.js"
import { floorOf, type Metered, MeteredCall, offlineFallbackOf, type Payer, type Settled, worstCaseOf } from "../models/MeteredCall.js"
import { OrgSettings } from "../orgs/OrgSettings.js"
import { type RequestScope, settingsOf } from "../request/RequestScope.js"
import { traced } from "../observability/Traced.js"

/** The stages of a run; a council's rounds are stages of its execution. */
export type StageName = "context" | "retrieval" | "planning" | "review" | "execution" | CouncilRound | "completion"

/** `progress`: something happened within a stage (a council participant finished its round). */
export type StageStatus = "started" | "progress" | "completed" | "skipped"

export type PipelineEvent =
  | {
    readonly _tag: "Stage"
    readonly stage: StageName
    readonly status: StageStatus
    readonly detail: Readonly<Record<string, unknown>>
  }
  | { readonly _tag: "Token"; readonly text: string }
  /** Always the last event of a run that did not fail. */
  | { readonly _tag: "Done"; readonly outcome: Outcome }

export interface Submission {
  /** Who submits, in which org and workspace (see `RequestScope`). */
  readonly scope: RequestScope
  readonly sessionId: string | null
  readonly input: string
  /** Per-request settings (`mode`, `model_tier`), below enforced policies and above preferences. */
  readonly request?: Preferences | undefined
  /** An explicitly named catalog model; refused (403) when a policy forbids its tier. */
  readonly model?: string | undefined
  /** Earlier turns of the conversation, oldest first. */
  readonly history?: ReadonlyArray<ChatMessage> | undefined
  /**
   * A huddle's question (and its session, when new), written with the intent's first row once
   * every check that can refuse the request has passed (credits reserved): a refused request
   * leaves nothing behind.
   */
  readonly question?: Question | undefined
  /**
   * A huddle's answer: the message to record in the session, made from the intent as it completes
   * and written with it (a turn that fails or awaits review has none).
   */
  readonly answer?: Answer | undefined
}

/** The message recording a completed intent's answer in its session. */
export type Answer = (completed: Intent) => Effect.Effect<HuddleMessage>

export interface Outcome {
  /** Its `mode` is the mode that answered (`auto` only while it awaits review). */
  readonly intent: Intent
  /** The mode the settings chose (requested, preferred or default). */
  readonly requestedMode: HuddleMode
  /** Whether the answer came from the offline provider. */
  readonly offline: boolean
  /** Set when the offline model answered in place of configured models that failed: which, and why. */
  readonly offlineFallback?: ReadonlyArray<FailedModel> | undefined
  /** The answer recorded with the completed intent (with the submission's `answer` only). */
  readonly answer?: HuddleMessage | undefined
}

/** Whether a run has started spending: from here on a streamed failure is framed, not an HTTP error. */
export const isCommitted = (event: PipelineEvent): boolean =>
  event._tag === "Token" || (event._tag === "Stage" && event.stage === "proposals")

export type PipelineError = InvalidRequest | NotFound | PolicyViolation | InsufficientCredits | UpstreamUnavailable | Unauthorized

export interface Service {
  readonly submit: (submission: Submission) => Stream.Stream<PipelineEvent, PipelineError>
  /**
   * An intent awaiting review, decided again under the rules in force now, for its submitter:
   * the effective settings (credit fallback, risk, tier), and the plan when a policy now forbids
   * its models (a plan for a tier is re-planned within the new ceiling; a named model is refused).
   */
  readonly replan: (intent: Intent, submitterId: string) => Effect.Effect<Intent, PolicyViolation | NotFound>
  /**
   * Runs execution and completion of an intent approved after review: its submitter pays, with
   * the approver's authority (checked as the credits are taken); `answer` records a huddle's
   * answer with the completed intent, as `submit`'s does.
   */
  readonly execute: (intent: Intent, payer: Payer, answer?: Answer) => Stream.Stream<PipelineEvent, PipelineError>
}

export class IntentPipeline extends Context.Tag("@huddle/domain/IntentPipeline")<IntentPipeline, Service>() {}

/** The outcome of a run: its `Done` event (every run that does not fail ends with one). */
export const outcomeOf = <E, R>(events: Stream.Stream<PipelineEvent, E, R>): Effect.Effect<Outcome, E, R> =>
  lastOf(events, (event) => event._tag === "Done" ? event.outcome : undefined, "A pipeline run")

const historyLimit = 40

const stage = (
  name: StageName,
  status: StageStatus,
  detail: Readonly<Record<string, unknown>> = {}
): PipelineEvent => ({ _tag: "Stage", stage: name, status, detail })

const temperatureFor = (settings: EffectiveSettings): number =>
  settings.risk_tolerance.value === "low" ? 0.2 : settings.risk_tolerance.value === "high" ? 1 : 0.7

const systemPrompt = (settings: EffectiveSettings, memories: Parameters<typeof leadingInstructions>[0]["memories"]): string => {
  const leading = leadingInstructions({ conservative: settings.risk_tolerance.value === "low", memories })
  const intro = "You are Huddle, a team AI assistant. Answer clearly and say when you are unsure."
  return leading.length === 0 ? intro : `${intro}\n${leading}`
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

/** A text as tokens: groups of a few words whose concatenation is the text. */
const tokensOf = (text: string): ReadonlyArray<PipelineEvent> => {
  const words = text.match(/\s*\S+/g) ?? []
  const out: Array<PipelineEvent> = []
  for (let i = 0; i < words.length; i += 4) out.push({ _tag: "Token", text: words.slice(i, i + 4).join("") })
  return out
}

/** A council's event as a stage of the run. */
const councilStage = (event: Exclude<CouncilEvent, { readonly _tag: "Concluded" }>): PipelineEvent => {
  switch (event._tag) {
    case "RoundStarted":
      return stage(event.round, "started", { seats: event.seats })
    case "SeatFinished":
      return stage(event.round, "progress", {
        seat: event.seat,
        model: event.model,
        outcome: event.outcome,
        ...(event.reason === undefined ? {} : { reason: event.reason })
      })
    case "RoundEnded":
      return stage(event.round, "completed", event.cut ? { cut_by_deadline: true } : {})
    case "Escalated":
      return stage("execution", "progress", { mode: "multi", decided_by: "auto", reason: event.reason })
  }
}

const failure = (error: { readonly _tag: string; readonly message: string }) =>
  new IntentError({
    error: codeOf(error),
    message: error.message
  })

/** The grounding a plan carries, as what its answer's citations are checked against. */
type PlanGrounding = NonNullable<Plan["grounding"]>

interface Steps {
  /** Records the intent as executing once its credits are held; the events that announce it. */
  readonly begin: Effect.Effect<readonly [Intent, ReadonlyArray<PipelineEvent>]>
  /** The answer recorded with the intent when it completes. */
  readonly answer: Answer | undefined
  /** What a refused reservation leaves behind (before `begin`). */
  readonly refused: (error: InsufficientCredits | Unauthorized | NotFound) => Effect.Effect<unknown>
}

export const make = Effect.gen(function*() {
  const ids = yield* Ids
  const intents = yield* IntentRepository
  const metered = yield* MeteredCall
  const council = yield* Council
  const grounding = yield* Grounding
  const orgSettings = yield* OrgSettings
  const context = yield* ContextAssembly

  const save = (intent: Intent, changes: Partial<Intent>) => Effect.map(finish(intent, changes, undefined), ([next]) => next)

  /** The intent with `changes` written; a completed one with its answer, when there is one to record. */
  const finish = (intent: Intent, changes: Partial<Intent>, answer: Answer | undefined) =>
    Effect.gen(function*() {
      const next = new Intent({ ...intent, ...changes, updated_at: yield* DateTime.now }, { disableValidation: true })
      const message = answer === undefined || next.status !== "completed" ? undefined : yield* answer(next)
      const written = yield* intents.update(next, undefined, message)
      // An answer is not written into a session deleted during the turn: there is none to name.
      return [next, written ? message : undefined] as const
    })

  /**
   * An answer recorded, then charged (decision 0027): `record` writes the completed intent, which
   * says `recorded` was charged; then the credits are settled. When the write fails, the credits
   * are released instead (all of them, uninterrupted), so nobody pays for an answer they never
   * got. What the store charged differs from what was recorded only if a reservation was no
   * longer held (a sweep reclaimed it): said, not rewritten.
   */
  const recordedThenCharged = <A, E>(
    intentId: string,
    record: Effect.Effect<A, E>,
    recorded: number,
    credits: { readonly settle: Effect.Effect<number>; readonly release: Effect.Effect<unknown> }
  ) =>
    record.pipe(
      Effect.tapErrorCause(() => Effect.uninterruptible(credits.release)),
      Effect.tap(() =>
        Effect.flatMap(credits.settle, (charged) =>
          charged === recorded ? Effect.void : Effect.logWarning("an answer's intent records a charge the ledger did not take").pipe(
            Effect.annotateLogs({ intent: intentId, recorded, charged })
          ))
      )
    )

  const cancelled = new IntentError({ error: "CANCELLED", message: "The request was cancelled before the answer was complete" })

  const closeWith = (exit: Exit.Exit<unknown, unknown>): IntentError | null => {
    if (Exit.isSuccess(exit)) return null
    if (Exit.isInterrupted(exit)) return cancelled
    const error = Cause.failureOption(exit.cause)
    return Option.isSome(error) && Predicate.hasProperty(error.value, "_tag") && Predicate.hasProperty(error.value, "message")
      ? failure(error.value as { _tag: string; message: string })
      : new IntentError({ error: "INTERNAL", message: "The request failed" })
  }

  /**
   * Execution and completion: the plan's metered call for `payer`; once its credits are reserved
   * the intent is recorded as executing (`begin`, with the events that announce it), and however
   * the answer ends (complete, failed, the client gone) the intent records what it consumed and
   * cost. A refused reservation fails before `begin` (after `refused`), so whatever `begin`
   * writes is written only for a request that will run.
   */
  const citableOf = (grounded: PlanGrounding): Effect.Effect<CitableContext> =>
    grounding.citable(grounded.repository_id, grounded.index_version, grounded.excerpts)

  const executeSingle = (
    intent: Intent,
    payer: Payer,
    requestedMode: HuddleMode,
    steps: Steps
  ): Stream.Stream<PipelineEvent, PipelineError> =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const plan = intent.plan!
      // A grounded answer streams through the citation filter: no unverified citation goes out.
      const filter = plan.grounding === undefined ? undefined : new CitationFilter(yield* citableOf(plan.grounding))
      const candidates = yield* metered.candidates({ _tag: "Candidates", ids: plan.models }, undefined)
      const call: Metered = yield* metered.run({
        payer,
        purpose: `intent ${intent.id}`,
        candidates,
        quote: {
          estimatedInput: plan.estimated_input_tokens,
          maxOutputTokens: plan.max_output_tokens,
          worstCase: plan.worst_case_credits,
          floorOutputTokens: floorOf(plan.max_output_tokens)
        },
        messages: plan.messages ?? [],
        temperature: plan.temperature,
        // Charged once the completed intent is written (see `completed`).
        settleAfter: true
      }).pipe(Effect.tapError(steps.refused))
      const [executing, announced] = yield* steps.begin
      // The plan that runs: the member's credits may have lowered its output cap.
      const ran = call.quote.loweredFrom === undefined ? plan : new Plan({
        ...plan,
        max_output_tokens: call.quote.maxOutputTokens,
        max_output_tokens_lowered_from: call.quote.loweredFrom,
        worst_case_credits: call.quote.worstCase
      }, { disableValidation: true })

      const progress = {
        text: "",
        answered: false,
        closed: undefined as Intent | undefined,
        answer: undefined as HuddleMessage | undefined,
        fallback: undefined as ReadonlyArray<FailedModel> | undefined
      }
      const close = (settled: Settled, error: IntentError | null) =>
        Effect.map(
          finish(executing, {
            status: error === null ? "completed" : "failed",
            error,
            output: progress.text.length > 0 ? progress.text : null,
            usage: settled.consumed ? settled.usage : null,
            credits_charged: settled.charged,
            models: progress.answered ? [settled.model.id] : [],
            ...(filter === undefined || plan.grounding === undefined ? {} : { grounding: withCitations(plan.grounding.report, filter.report()) }),
            // The plan that ran (auto mode's single answer, when a council was not affordable).
            mode: "single",
            plan: ran
          }, steps.answer),
          ([closed, answer]) => {
            progress.answer = answer
            return progress.closed = closed
          }
        )

      // A failed or interrupted answer, or one whose client left before it was pulled at all:
      // settled for what it consumed, and recorded as such. On the run's scope, so that it holds
      // from the moment the intent is recorded as executing (decision 0042).
      yield* Effect.addFinalizer((exit) =>
        progress.closed === undefined ? Effect.flatMap(call.settle, (settled) => close(settled, closeWith(exit) ?? cancelled)) : Effect.void
      )

      const charges = { settle: Effect.map(call.settle, (settled) => settled.charged), release: call.release }
      const completed = (priced: Settled) =>
        recordedThenCharged(intent.id, close(priced, null), priced.charged, charges).pipe(
          Effect.map((final): ReadonlyArray<PipelineEvent> => [
            stage("execution", "completed", { model: final.models[0] ?? null, output_tokens: final.usage?.output_tokens ?? 0 }),
            stage("completion", "completed", { credits_charged: final.credits_charged }),
            {
              _tag: "Done",
              outcome: {
                intent: final,
                requestedMode,
                offline: priced.model.provider === "offline",
                answer: progress.answer,
                ...(progress.fallback === undefined ? {} : { offlineFallback: progress.fallback })
              }
            }
          ])
        )

      const answer = call.events.pipe(
        Stream.mapChunksEffect((chunk) => {
          const out: Array<PipelineEvent> = []
          for (const event of chunk) {
            switch (event._tag) {
              case "Answering":
                progress.answered = true
                progress.fallback = offlineFallbackOf(event)
                // Said as it happens, before the stand-in's answer (a stream's headers say it too).
                if (progress.fallback !== undefined) {
                  out.push(stage("execution", "started", { model: event.model.id, offline_fallback: progress.fallback }))
                }
                break
              case "AttemptFailed":
                out.push(stage("execution", "started", { model: event.model.id, failed: event.reason, retrying: event.willRetry }))
                break
              case "Delta": {
                const text = filter === undefined ? event.text : filter.push(event.text)
                progress.text += text
                if (text.length > 0) out.push({ _tag: "Token", text })
                break
              }
              case "Settled": {
                const rest = filter === undefined ? "" : filter.end()
                progress.text += rest
                if (rest.length > 0) out.push({ _tag: "Token", text: rest })
                return Effect.map(completed(event), (last) => Chunk.unsafeFromArray([...out, ...last]))
              }
              // The huddle offers no tools, so a model has none to call; the finish reason is not reported.
              case "ToolCallDelta":
              case "Finish":
              // Said by the plan and the `execution` stage's start.
              case "Lowered":
                break
            }
          }
          return Effect.succeed(Chunk.unsafeFromArray(out))
        })
      )
      const lowered = ran.max_output_tokens_lowered_from === undefined
        ? {}
        : { max_tokens_lowered: { from: ran.max_output_tokens_lowered_from, to: ran.max_output_tokens } }
      return Stream.concat(Stream.fromIterable([...announced, stage("execution", "started", { models: plan.models, ...lowered })]), answer)
    }))

  /**
   * Execution by a council (multi mode, and auto mode until it decides): the whole run's worst
   * case is reserved, then the council's rounds stream as stages and its consensus as tokens.
   * Auto mode answers alone when the member's credits cannot cover the council.
   */
  const executeCouncil = (
    intent: Intent,
    payer: Payer,
    requestedMode: HuddleMode,
    steps: Steps
  ): Stream.Stream<PipelineEvent, PipelineError> =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const plan = intent.plan!
      const auto = intent.mode === "auto"
      const seats = yield* metered.candidates({ _tag: "Candidates", ids: plan.council!.seats }, undefined)
      const priced = yield* council.priced(seats, plan.messages ?? [])
      const budget = yield* metered.budget(payer, `intent ${intent.id}`, priced.worstCase).pipe(
        Effect.map(Option.some),
        Effect.catchTag("InsufficientCredits", (error) => auto ? Effect.succeed(Option.none()) : Effect.fail(error)),
        Effect.tapError(steps.refused)
      )
      if (Option.isNone(budget)) {
        // Auto mode that cannot afford a council: the plan's single answer, at its own worst case.
        const { council: _, ...single } = plan
        const models = yield* metered.candidates({ _tag: "Candidates", ids: plan.models }, undefined)
        const worst = worstCaseOf(models, plan.estimated_input_tokens, plan.max_output_tokens)
        return executeSingle(
          new Intent({
            ...intent,
            mode: "single",
            plan: new Plan({ ...single, worst_case_credits: worst, mode_reason: AutoMode.reasons.credits })
          }, { disableValidation: true }),
          payer,
          requestedMode,
          steps
        )
      }
      // The run's calls are charged once its answer is recorded, as a single answer is.
      const held = yield* HeldCalls.make
      const [executing, announced] = yield* steps.begin
      const offline = seats.every((model) => model.provider === "offline")

      const progress = { closed: undefined as Intent | undefined, spent: undefined as Spent | undefined, answer: undefined as HuddleMessage | undefined }
      const close = (spent: Spent | undefined, fields: Partial<Intent>) =>
        Effect.map(
          finish(executing, {
            usage: spent === undefined || spent.charged === 0 && spent.usage.output_tokens === 0 ? null : spent.usage,
            credits_charged: spent?.charged ?? 0,
            models: spent?.models ?? [],
            ...fields
          }, steps.answer),
          ([closed, answer]) => {
            progress.answer = answer
            return progress.closed = closed
          }
        )

      // A failed or cancelled run: its calls settled, and recorded with what they were charged
      // (nothing, when they were released because its answer could not be recorded). A run that
      // ends without concluding was stopped by its consumer (the client went away), perhaps before
      // its first round was pulled: on the run's scope, so that it holds from `begin` on.
      yield* Effect.addFinalizer((exit) =>
        progress.closed === undefined
          ? Effect.flatMap(held.settle, (charged) =>
            close(progress.spent === undefined ? undefined : { ...progress.spent, charged }, {
              status: "failed",
              error: closeWith(exit) ?? cancelled,
              output: null
            }))
          : Effect.void
      )

      const citable = plan.grounding === undefined ? undefined : yield* citableOf(plan.grounding)
      const concluded = (concludedWith: Extract<CouncilEvent, { readonly _tag: "Concluded" }>["result"]) => {
        // The consensus (or auto's single answer) with its citations verified, as a grounded answer must be.
        const checked = citable === undefined ? undefined : verify(concludedWith._tag === "Council" ? concludedWith.report.text : concludedWith.text, citable)
        const result: typeof concludedWith = checked === undefined
          ? concludedWith
          : concludedWith._tag === "Council"
          ? { ...concludedWith, report: new ConsensusReport({ ...concludedWith.report, text: checked.text }, { disableValidation: true }) }
          : { ...concludedWith, text: checked.text }
        const grounded = checked === undefined || plan.grounding === undefined ? {} : { grounding: withCitations(plan.grounding.report, checked) }
        const recorded = result._tag === "Council"
            ? close(result, {
              status: "completed",
              error: null,
              mode: "multi",
              output: result.report.text,
              consensus: result.report,
              ...grounded,
              ...(auto ? { plan: new Plan({ ...plan, mode_reason: AutoMode.reasons.disagreed }) } : {})
            })
            : close(result, {
              status: "completed",
              error: null,
              mode: "single",
              output: result.text,
              plan: new Plan({ ...plan, mode_reason: result.reason }),
              ...grounded
            })
        return recordedThenCharged(intent.id, recorded, result.charged, held).pipe(
          Effect.map((final): ReadonlyArray<PipelineEvent> => [
            ...tokensOf(final.output ?? ""),
            stage("execution", "completed", {
              mode: final.mode,
              models: final.models,
              ...(final.consensus === undefined ? {} : { agreement_ratio: final.consensus.agreement_ratio, degraded: final.consensus.degraded })
            }),
            stage("completion", "completed", { credits_charged: final.credits_charged }),
            { _tag: "Done", outcome: { intent: final, requestedMode, offline, answer: progress.answer } }
          ])
        )
      }

      const run = council.run({
        plan: priced,
        payer,
        purpose: `intent ${intent.id}`,
        budget: budget.value,
        messages: plan.messages ?? [],
        temperature: plan.temperature,
        mode: auto ? "auto" : "multi",
        tally: (spent) => Effect.sync(() => (progress.spent = spent)),
        held
      }).pipe(
        Stream.mapEffect((event) =>
          event._tag === "Concluded" ? concluded(event.result) : Effect.succeed<ReadonlyArray<PipelineEvent>>([councilStage(event)])
        ),
        Stream.flattenIterables
      )
      return Stream.concat(
        Stream.fromIterable([...announced, stage("execution", "started", { mode: intent.mode, models: plan.council!.seats })]),
        run
      )
    }))

  const executeIntent = (intent: Intent, payer: Payer, requestedMode: HuddleMode, steps: Steps) =>
    intent.plan?.council === undefined || intent.mode === "single"
      ? executeSingle(intent, payer, requestedMode, steps)
      : executeCouncil(intent, payer, requestedMode, steps)

  const submit: Service["submit"] = (submission) =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const { scope } = submission
      const { principal } = scope
      const now = yield* DateTime.now

      // Context: effective settings, memories, conversation.
      const settings = settingsOf(scope, submission.request)
      const requestedMode = settings.mode.value
      if (requestedMode !== "single" && submission.model !== undefined) {
        return yield* new InvalidRequest({
          message: `model names one model, and mode "${requestedMode}" a council of the tier's models: send one or the other`,
          field: "model"
        })
      }
      const candidates = yield* metered.candidates(
        submission.model === undefined ? { _tag: "Tier", tier: settings.model_tier.value } : { _tag: "Model", id: submission.model },
        scope.rules.policies?.model_tier
      )
      const primary = candidates[0]!
      const memories = yield* context.memoriesFor({
        userId: principal.user.id,
        orgId: scope.orgId,
        member: scope.role !== null,
        workspaceId: scope.workspaceId,
        personal: scope.personal,
        budgetTokens: Math.floor(primary.context_window * memoryShare)
      })
      const system = systemPrompt(settings, memories.memories)
      const contextWindow = Math.min(...candidates.map((model) => model.context_window))
      // The workspace's repository, when one is connected and indexed: excerpts within a share of the window.
      const grounded = Option.getOrUndefined(yield* grounding.ground({
        userId: principal.user.id,
        workspaceId: scope.workspaceId,
        personal: scope.personal,
        question: submission.input,
        contextWindow
      }))
      const maxOutput = maxOutputOf(candidates)
      const inputBudget = contextWindow - maxOutput - estimateTokens(system) - estimateTokens(submission.input) -
        (grounded === undefined ? 0 : estimateTokens(grounded.instructions))
      if (inputBudget < 0) {
        return yield* new InvalidRequest({ message: "The input is too long for the model's context window" })
      }
      const history = fitHistory(submission.history ?? [], inputBudget)
      const messages: ReadonlyArray<ChatMessage> = [
        { role: "system", content: system },
        ...(grounded === undefined ? [] : [{ role: "system" as const, content: grounded.instructions }]),
        ...history,
        { role: "user", content: submission.input }
      ]

      // Planning: which models, what it may cost at most; for a council, its seats and whole run.
      const quote = yield* metered.quote(candidates, messages, { maxOutputTokens: maxOutput })
      const nature = requestedMode === "auto" ? AutoMode.natureOf(submission.input) : undefined
      const councilPlan = requestedMode === "single" || nature?._tag === "Light"
        ? undefined
        : yield* council.plan({ models: candidates, messages }).pipe(
          requestedMode === "auto" ? Effect.option : Effect.map(Option.some)
        )
      const mode: HuddleMode = councilPlan === undefined || Option.isNone(councilPlan) ? "single" : requestedMode
      const modeReason = nature?._tag === "Light"
        ? nature.reason
        : requestedMode === "auto" && mode === "single"
        ? AutoMode.reasons.noCouncil
        : undefined
      const seats = councilPlan === undefined ? undefined : Option.getOrUndefined(councilPlan)
      const flags = settings.risk_tolerance.value === "low" ? riskFlags(submission.input) : []
      const plan = new Plan({
        models: candidates.map((model) => model.id),
        max_output_tokens: quote.maxOutputTokens,
        estimated_input_tokens: quote.estimatedInput,
        worst_case_credits: seats?.worstCase ?? quote.worstCase,
        temperature: temperatureFor(settings),
        memories_used: memories.memories.length,
        history_messages: history.length,
        messages,
        ...(submission.model === undefined ? {} : { requested_model: submission.model }),
        flags,
        ...(seats === undefined ? {} : { council: { seats: seats.seats.map((model) => model.id), worst_case_credits: seats.worstCase } }),
        ...(modeReason === undefined ? {} : { mode_reason: modeReason }),
        ...(grounded === undefined ? {} : {
          grounding: {
            repository_id: grounded.repositoryId,
            index_version: grounded.version,
            report: grounded.report,
            excerpts: grounded.excerpts.map(({ end_line, path, start_line, text }) => ({ path, start_line, end_line, text }))
          }
        })
      })
      const planned = new Intent({
        id: yield* ids.next("int"),
        status: "planning",
        input: submission.input,
        mode,
        org_id: scope.orgId,
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
      const head: ReadonlyArray<PipelineEvent> = [
        stage("context", "started"),
        stage("context", "completed", {
          memories: memories.memories.length,
          history_messages: history.length,
          model_tier: settings.model_tier.value
        }),
        ...(grounded === undefined ? [] : [
          stage("retrieval", "completed", {
            mode: grounded.report.mode,
            reason: grounded.report.reason,
            files_analysed: grounded.report.files_analysed,
            files_indexed: grounded.report.files_indexed,
            analysed_by_category: grounded.report.analysed_by_category,
            excerpts: grounded.report.excerpts.length,
            files: [...new Set(grounded.report.excerpts.map((excerpt) => excerpt.path))]
          })
        ]),
        stage("planning", "started")
      ]
      // Nothing is written before this point: a request refused above leaves no trace.
      const record = (status: "awaiting_review" | "executing") =>
        Effect.gen(function*() {
          const intent = new Intent({ ...planned, status }, { disableValidation: true })
          yield* intents.insert(intent, { userId: principal.user.id, workspaceId: scope.workspaceId }, submission.question)
          return intent
        })
      const plannedEvent = (intent: Intent) =>
        stage("planning", "completed", {
          intent_id: intent.id,
          mode,
          ...(modeReason === undefined ? {} : { mode_reason: modeReason }),
          models: plan.council?.seats ?? plan.models,
          worst_case_credits: plan.worst_case_credits
        })

      // Review gate: with auto_execute off, a person approves before anything runs or is charged.
      if (!settings.auto_execute.value) {
        const waiting = yield* record("awaiting_review")
        return Stream.fromIterable<PipelineEvent>([
          ...head,
          plannedEvent(waiting),
          stage("review", "started", {
            intent_id: waiting.id,
            awaiting: "approval",
            decided_by: settings.auto_execute.decided_by,
            flags
          }),
          { _tag: "Done", outcome: { intent: waiting, requestedMode, offline: false } }
        ])
      }
      const payer: Payer = {
        userId: principal.user.id,
        orgId: scope.orgId,
        creditFallback: settings.credit_fallback.value,
        authority: authorityOf(principal)
      }
      return Stream.concat(
        Stream.fromIterable(head),
        executeIntent(planned, payer, requestedMode, {
          begin: Effect.map(record("executing"), (intent) => [intent, [plannedEvent(intent), stage("review", "skipped", { flags })]] as const),
          answer: submission.answer,
          refused: () => Effect.void
        })
      )
    }))

  const replan: Service["replan"] = (intent, submitterId) =>
    Effect.gen(function*() {
      const rules = yield* orgSettings.rulesFor(submitterId, intent.org_id)
      const settings = settingsOf({ rules }, requestOf(intent.settings))
      const plan = intent.plan
      if (plan === null) return new Intent({ ...intent, settings }, { disableValidation: true })
      const ceiling = rules.policies?.model_tier
      const models = yield* metered.candidates({ _tag: "Candidates", ids: plan.models }, ceiling).pipe(
        Effect.catchTag("PolicyViolation", () =>
          plan.requested_model === undefined
            ? metered.candidates({ _tag: "Tier", tier: settings.model_tier.value }, ceiling)
            : Effect.fail(
              new PolicyViolation({
                message: `The organization's policy now allows models up to the ${ceiling} tier; ` +
                  `${plan.requested_model} was approved too late to run`
              })
            ))
      )
      const maxOutput = Math.min(plan.max_output_tokens, maxOutputOf(models))
      const single = worstCaseOf(models, plan.estimated_input_tokens, maxOutput)
      // A council's seats under the new ceiling: kept when still allowed, else chosen again from the new tier.
      const seated = plan.council === undefined ? undefined : yield* metered.candidates({ _tag: "Candidates", ids: plan.council.seats }, ceiling).pipe(
        Effect.flatMap((seats) => council.priced(seats, plan.messages ?? [])),
        Effect.catchTag("PolicyViolation", () => council.plan({ models, messages: plan.messages ?? [] })),
        Effect.orElseSucceed(() => undefined)
      )
      const next = new Plan({
        ...plan,
        models: models.map((model) => model.id),
        max_output_tokens: maxOutput,
        worst_case_credits: seated?.worstCase ?? single,
        temperature: temperatureFor(settings),
        council: seated === undefined ? undefined : { seats: seated.seats.map((model) => model.id), worst_case_credits: seated.worstCase }
      }, { disableValidation: true })
      return new Intent({ ...intent, settings, plan: next }, { disableValidation: true })
    })

  const execute: Service["execute"] = (intent, payer, answer) =>
    executeIntent(intent, payer, intent.mode, {
      begin: Effect.map(save(intent, { status: "executing" }), (executing) => [executing, []] as const),
      answer,
      // An approved intent is already recorded: a refused reservation is its outcome.
      refused: (error) => save(intent, { status: "failed", error: failure(error) })
    })

  return IntentPipeline.of(traced("IntentPipeline", { submit, replan, execute }))
})

export const layer = Layer.effect(IntentPipeline, make)
