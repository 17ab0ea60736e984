/**
 * The pipeline every intent runs through, from the huddle, JSON-RPC or an embedding service:
 * context assembly → planning → review gate → execution → completion. A run is a `Stream` of
 * events: each stage as it starts and ends, the answer's tokens, and, last, `Done` with the
 * outcome. Execution is one model (single mode) or a council (multi mode; `council/Council`),
 * whose rounds are stages of their own; auto mode decides between them (`council/AutoMode`).
 *
 * What to send and what it may cost come from the answer core (`answers/Answers`: prepare, plan,
 * execute), as for every other entry point; the pipeline adds what makes a request an intent: its
 * record, the review gate, and the answer written with the completed intent.
 *
 * Money: single mode's execution is one `MeteredCall`: the plan's worst case is reserved before
 * any model is called (402 otherwise) and settled to the real usage on success, failure or
 * cancellation alike. A council reserves its whole run's worst case the same way, before its
 * first call. Either is charged once the completed intent is recorded (`IntentRecords`).
 */
import { Context, DateTime, Effect, Layer, Stream } from "effect"
import type { Preferences } from "../settings/Preferences.js"
import { Answers } from "../answers/Answers.js"
import { payerOf } from "../answers/Payer.js"
import type { AnswerPlan } from "../answers/Planning.js"
import { type Prepared, temperatureFor } from "../answers/Preparation.js"
import { Grounding } from "../grounding/Grounding.js"
import type { Payer } from "../models/MeteredCall.js"
import type { ChatMessage } from "../models/Model.js"
import type { DecidedBy, EffectiveSettings } from "../settings/Policy.js"
import { OrgSettings } from "../orgs/OrgSettings.js"
import { type RequestScope, settingsOf } from "../request/RequestScope.js"
import { InvalidRequest, type NotFound, type PolicyViolation } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { traced } from "../observability/Traced.js"
import { runCouncil } from "./CouncilRun.js"
import { Intent, Plan } from "./Intent.js"
import * as IntentRecords from "./IntentRecords.js"
import { IntentRepository, type Question } from "./IntentRepository.js"
import type { Ports, Run } from "./IntentRun.js"
import { type PipelineError, type PipelineEvent, stage } from "./PipelineEvent.js"
import { type RiskFlag, riskFlags } from "./RiskFlags.js"
import { runAlone } from "./SingleRun.js"

export interface Submission {
  /** Who submits, in which org and workspace (see `RequestScope`). */
  readonly scope: RequestScope
  /** The huddle session the intent belongs to: its answer is recorded there when it completes. */
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
}

/** An intent approved after review, its plan priced under the rules in force now. */
export interface Approved {
  readonly intent: Intent
  readonly priced: Pick<AnswerPlan, "single" | "council">
}

export interface Service {
  readonly submit: (submission: Submission) => Stream.Stream<PipelineEvent, PipelineError>
  /**
   * An intent awaiting review, decided again under the rules in force now, for its submitter:
   * the effective settings (credit fallback, risk, tier), and the plan priced again (a plan for a
   * tier is re-planned within a new ceiling; a named model is refused).
   */
  readonly replan: (intent: Intent, submitterId: string) => Effect.Effect<Approved, PolicyViolation | NotFound>
  /**
   * Runs execution and completion of an intent approved after review: its submitter pays, with
   * the approver's authority (checked as the credits are taken); an intent of a session records
   * its answer there, as `submit`'s do.
   */
  readonly execute: (approved: Approved, payer: Payer) => Stream.Stream<PipelineEvent, PipelineError>
}

export class IntentPipeline extends Context.Tag("@huddle/domain/IntentPipeline")<IntentPipeline, Service>() {}

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

/** The plan as stored with the intent: what an approved intent runs as it was reviewed. */
const storedPlan = (prepared: Prepared, planned: AnswerPlan, flags: ReadonlyArray<RiskFlag>, model: string | undefined): Plan => {
  const { council, single } = planned
  const { grounded } = prepared
  return new Plan({
    models: single.candidates.map((model) => model.id),
    max_output_tokens: single.quote.maxOutputTokens,
    estimated_input_tokens: single.quote.estimatedInput,
    worst_case_credits: council?.worstCase ?? single.quote.worstCase,
    temperature: prepared.temperature!,
    memories_used: prepared.memories,
    history_messages: prepared.history,
    messages: prepared.messages,
    ...(model === undefined ? {} : { requested_model: model }),
    flags,
    ...(council === undefined ? {} : { council: { seats: council.seats.map((model) => model.id), worst_case_credits: council.worstCase } }),
    ...(planned.modeReason === undefined ? {} : { mode_reason: planned.modeReason }),
    ...(grounded === undefined ? {} : {
      grounding: {
        repository_id: grounded.repositoryId,
        index_version: grounded.version,
        report: grounded.report,
        excerpts: grounded.excerpts.map(({ end_line, path, start_line, text }) => ({ path, start_line, end_line, text }))
      }
    })
  })
}

/** The context and retrieval stages, as they went, and planning's start. */
const preparedEvents = (prepared: Prepared): ReadonlyArray<PipelineEvent> => {
  const { grounded } = prepared
  return [
    stage("context", "started"),
    stage("context", "completed", {
      memories: prepared.memories,
      history_messages: prepared.history,
      model_tier: prepared.settings.model_tier.value
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
}

/** Planning's end: the intent it recorded, the mode, the models, the worst case. */
const plannedEvent = (intent: Intent, planned: AnswerPlan) =>
  stage("planning", "completed", {
    intent_id: intent.id,
    mode: planned.mode,
    ...(planned.modeReason === undefined ? {} : { mode_reason: planned.modeReason }),
    models: intent.plan!.council?.seats ?? intent.plan!.models,
    worst_case_credits: intent.plan!.worst_case_credits
  })

export const make = Effect.gen(function*() {
  const ids = yield* Ids
  const intents = yield* IntentRepository
  const answers = yield* Answers
  const orgSettings = yield* OrgSettings
  const records = IntentRecords.make({ ids, intents })
  const ports: Ports = { answers, grounding: yield* Grounding, records }

  const executeIntent = (run: Run) =>
    run.priced.council === undefined || run.intent.mode === "single" ? runAlone(ports)(run) : runCouncil(ports)(run)

  const submit: Service["submit"] = (submission) =>
    Stream.unwrapScoped(Effect.gen(function*() {
      const { scope } = submission
      const { principal } = scope
      const settings = settingsOf(scope, submission.request)
      const requestedMode = settings.mode.value
      if (requestedMode !== "single" && submission.model !== undefined) {
        return yield* new InvalidRequest({
          message: `model names one model, and mode "${requestedMode}" a council of the tier's models: send one or the other`,
          field: "model"
        })
      }
      // Context: the models, memories, repository excerpts and conversation (the answer core's).
      const prepared = yield* answers.prepare({
        scope,
        settings,
        target: submission.model === undefined ? undefined : { _tag: "Model", id: submission.model },
        framing: { _tag: "Turn", input: submission.input, history: submission.history ?? [] }
      })
      // Planning: which models, what it may cost at most; for a council, its seats and whole run.
      const planned = yield* answers.plan(prepared, requestedMode, submission.input)
      const flags = settings.risk_tolerance.value === "low" ? riskFlags(submission.input) : []
      const now = yield* DateTime.now
      const intent = new Intent({
        id: yield* ids.next("int"),
        status: "planning",
        input: submission.input,
        mode: planned.mode,
        org_id: scope.orgId,
        session_id: submission.sessionId,
        settings,
        plan: storedPlan(prepared, planned, flags, submission.model),
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
          const recorded = new Intent({ ...intent, status }, { disableValidation: true })
          yield* intents.insert(recorded, { userId: principal.user.id, workspaceId: scope.workspaceId }, submission.question)
          return recorded
        })

      // Review gate: with auto_execute off, a person approves before anything runs or is charged.
      if (!settings.auto_execute.value) {
        const waiting = yield* record("awaiting_review")
        return Stream.fromIterable<PipelineEvent>([
          ...preparedEvents(prepared),
          plannedEvent(waiting, planned),
          stage("review", "started", { intent_id: waiting.id, awaiting: "approval", decided_by: settings.auto_execute.decided_by, flags }),
          { _tag: "Done", outcome: { intent: waiting, requestedMode, offline: false } }
        ])
      }
      return Stream.concat(
        Stream.fromIterable(preparedEvents(prepared)),
        executeIntent({
          intent,
          priced: planned,
          payer: prepared.payer,
          requestedMode,
          steps: {
            begin: Effect.map(record("executing"), (executing) => [executing, [plannedEvent(executing, planned), stage("review", "skipped", { flags })]] as const),
            refused: () => Effect.void
          }
        })
      )
    }))

  const replan: Service["replan"] = (intent, submitterId) =>
    Effect.gen(function*() {
      const rules = yield* orgSettings.rulesFor(submitterId, intent.org_id)
      const settings = settingsOf({ rules }, requestOf(intent.settings))
      // Every intent awaiting review was planned (its plan is written with its first row).
      const plan = intent.plan!
      const priced = yield* answers.reprice(plan, { ceiling: rules.policies?.model_tier, tier: settings.model_tier.value })
      const { council, single } = priced
      const next = new Plan({
        ...plan,
        models: single.candidates.map((model) => model.id),
        max_output_tokens: single.quote.maxOutputTokens,
        worst_case_credits: council?.worstCase ?? single.quote.worstCase,
        temperature: temperatureFor(settings),
        council: council === undefined ? undefined : { seats: council.seats.map((model) => model.id), worst_case_credits: council.worstCase }
      }, { disableValidation: true })
      return { intent: new Intent({ ...intent, settings, plan: next }, { disableValidation: true }), priced }
    })

  const execute: Service["execute"] = ({ intent, priced }, payer) =>
    executeIntent({
      intent,
      priced,
      payer,
      requestedMode: intent.mode,
      steps: {
        begin: Effect.map(records.save(intent, { status: "executing" }), (executing) => [executing, []] as const),
        // An approved intent is already recorded: a refused reservation is its outcome.
        refused: (error) => records.save(intent, { status: "failed", error: IntentRecords.failure(error) })
      }
    })

  return IntentPipeline.of(traced("IntentPipeline", { submit, replan, execute }))
})

export const layer = Layer.effect(IntentPipeline, make)

/** Who pays for an approved intent: its submitter, in its org, with the approver's authority. */
export const approvedPayer = (approved: Approved, submitterId: string, approver: Parameters<typeof payerOf>[0]["actor"]): Payer =>
  payerOf({ userId: submitterId, orgId: approved.intent.org_id, settings: approved.intent.settings, actor: approver })
