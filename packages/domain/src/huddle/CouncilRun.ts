/**
 * An intent answered by a council (multi mode, and auto mode until it decides): the whole run's
 * worst case reserved, the council's rounds streamed as stages and its consensus as tokens, every
 * call's charge held until the completed intent is recorded. Auto mode answers alone when the
 * member's credits cannot cover the council.
 */
import { Effect, Option, Stream } from "effect"
import * as AutoMode from "../council/AutoMode.js"
import type { CouncilEvent, Spent } from "../council/Council.js"
import { ConsensusReport } from "../council/ConsensusReport.js"
import { verify } from "../grounding/Citations.js"
import { withCitations } from "../grounding/Grounding.js"
import type { HeldCalls } from "../models/HeldCalls.js"
import type { HuddleMessage } from "./Huddle.js"
import { Intent, Plan } from "./Intent.js"
import { cancelled, closeWith } from "./IntentRecords.js"
import { citableOf, type Ports, type Run } from "./IntentRun.js"
import { councilStage, type PipelineError, type PipelineEvent, stage, tokensOf } from "./PipelineEvent.js"
import { runAlone } from "./SingleRun.js"

type Concluded = Extract<CouncilEvent, { readonly _tag: "Concluded" }>["result"]

interface Progress {
  closed: Intent | undefined
  spent: Spent | undefined
  answer: HuddleMessage | undefined
}

/** Auto mode that cannot afford a council: the plan's single answer, at its own worst case. */
const aloneInstead = (ports: Ports, run: Run) => {
  const { council: _, ...single } = run.intent.plan!
  return runAlone(ports)({
    ...run,
    intent: new Intent({
      ...run.intent,
      mode: "single",
      plan: new Plan({ ...single, worst_case_credits: run.priced.single.quote.worstCase, mode_reason: AutoMode.reasons.credits })
    }, { disableValidation: true })
  })
}

/**
 * What the run concluded, as the intent records it: the consensus (or auto's single answer) with
 * its citations verified, as a grounded answer must be; charged once recorded.
 */
const conclude = (
  ports: Ports,
  run: Run,
  held: HeldCalls,
  close: (spent: Spent | undefined, fields: Partial<Intent>) => Effect.Effect<Intent>,
  progress: Progress,
  citable: Parameters<typeof verify>[1] | undefined
) =>
(concludedWith: Concluded): Effect.Effect<ReadonlyArray<PipelineEvent>> => {
  const plan = run.intent.plan!
  const checked = citable === undefined ? undefined : verify(concludedWith._tag === "Council" ? concludedWith.report.text : concludedWith.text, citable)
  const result: Concluded = checked === undefined
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
      ...(run.intent.mode === "auto" ? { plan: new Plan({ ...plan, mode_reason: AutoMode.reasons.disagreed }) } : {})
    })
    : close(result, {
      status: "completed",
      error: null,
      mode: "single",
      output: result.text,
      plan: new Plan({ ...plan, mode_reason: result.reason }),
      ...grounded
    })
  const offline = run.priced.council!.seats.every((model) => model.provider === "offline")
  return ports.records.recordedThenCharged(run.intent.id, recorded, result.charged, held).pipe(
    Effect.map((final): ReadonlyArray<PipelineEvent> => [
      ...tokensOf(final.output ?? ""),
      stage("execution", "completed", {
        mode: final.mode,
        models: final.models,
        ...(final.consensus === undefined ? {} : { agreement_ratio: final.consensus.agreement_ratio, degraded: final.consensus.degraded })
      }),
      stage("completion", "completed", { credits_charged: final.credits_charged }),
      { _tag: "Done", outcome: { intent: final, requestedMode: run.requestedMode, offline, answer: progress.answer } }
    ])
  )
}

export const runCouncil = (ports: Ports) => (run: Run): Stream.Stream<PipelineEvent, PipelineError> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const { intent, steps } = run
    const plan = intent.plan!
    const auto = intent.mode === "auto"
    const progress: Progress = { closed: undefined, spent: undefined, answer: undefined }
    const convened = yield* ports.answers.convene({
      council: run.priced.council!,
      conversation: { payer: run.payer, messages: plan.messages ?? [], temperature: plan.temperature },
      purpose: `intent ${intent.id}`,
      mode: auto ? "auto" : "multi",
      // The run's calls are charged once its answer is recorded, as a single answer is.
      held: true,
      tally: (spent) => Effect.sync(() => (progress.spent = spent))
    }).pipe(
      Effect.map(Option.some),
      Effect.catchTag("InsufficientCredits", (error) => auto ? Effect.succeed(Option.none()) : Effect.fail(error)),
      Effect.tapError(steps.refused)
    )
    if (Option.isNone(convened)) return aloneInstead(ports, run)
    const held = convened.value.held!
    const [executing, announced] = yield* steps.begin

    const close = (spent: Spent | undefined, fields: Partial<Intent>) =>
      Effect.map(
        ports.records.finish(executing, {
          usage: spent === undefined || spent.charged === 0 && spent.usage.output_tokens === 0 ? null : spent.usage,
          credits_charged: spent?.charged ?? 0,
          models: spent?.models ?? [],
          ...fields
        }),
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

    const citable = plan.grounding === undefined ? undefined : yield* citableOf(ports, plan.grounding)
    const concluded = conclude(ports, run, held, close, progress, citable)
    const events = convened.value.events.pipe(
      Stream.mapEffect((event) =>
        event._tag === "Concluded" ? concluded(event.result) : Effect.succeed<ReadonlyArray<PipelineEvent>>([councilStage(event)])
      ),
      Stream.flattenIterables
    )
    return Stream.concat(
      Stream.fromIterable([...announced, stage("execution", "started", { mode: intent.mode, models: plan.council!.seats })]),
      events
    )
  }))
