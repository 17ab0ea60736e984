/**
 * An intent answered by one model: its metered call held until the completed intent is
 * recorded; a grounded answer streams through the citation filter, so that no unverified
 * citation goes out.
 */
import { Chunk, Effect, Stream } from "effect"
import { CitationFilter } from "../grounding/Citations.js"
import { withCitations } from "../grounding/Grounding.js"
import { type CallEvent, offlineFallbackOf, type Settled } from "../models/MeteredCall.js"
import type { FailedModel } from "../models/Model.js"
import type { HuddleMessage } from "./Huddle.js"
import { type Intent, type IntentError, Plan } from "./Intent.js"
import { cancelled, closeWith } from "./IntentRecords.js"
import { citableOf, type Ports, type Run } from "./IntentRun.js"
import { type PipelineError, type PipelineEvent, stage } from "./PipelineEvent.js"

/** What the answer has said so far, and how its intent was closed. */
interface Progress {
  text: string
  answered: boolean
  closed: Intent | undefined
  answer: HuddleMessage | undefined
  fallback: ReadonlyArray<FailedModel> | undefined
}

/**
 * A chunk of the call's events as the run's: text through the citation filter, a failed attempt
 * or an offline stand-in said as it happens; at `Settled`, the rest of the filter and `completed`.
 */
const readChunk = (
  chunk: Chunk.Chunk<CallEvent>,
  progress: Progress,
  filter: CitationFilter | undefined,
  completed: (settled: Settled) => Effect.Effect<ReadonlyArray<PipelineEvent>>
): Effect.Effect<Chunk.Chunk<PipelineEvent>> => {
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
}

export const runAlone = (ports: Ports) => (run: Run): Stream.Stream<PipelineEvent, PipelineError> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const { intent, payer, steps } = run
    const { records } = ports
    const plan = intent.plan!
    const filter = plan.grounding === undefined ? undefined : new CitationFilter(yield* citableOf(ports, plan.grounding))
    const call = yield* ports.answers.alone({
      plan: run.priced.single,
      conversation: { payer, messages: plan.messages ?? [], temperature: plan.temperature, options: undefined },
      purpose: `intent ${intent.id}`,
      // Charged once the completed intent is written (see `completed`).
      held: true
    }).pipe(Effect.tapError(steps.refused))
    const [executing, announced] = yield* steps.begin
    // The plan that ran: the member's credits may have lowered its output cap.
    const ran = call.quote.loweredFrom === undefined ? plan : new Plan({
      ...plan,
      max_output_tokens: call.quote.maxOutputTokens,
      max_output_tokens_lowered_from: call.quote.loweredFrom,
      worst_case_credits: call.quote.worstCase
    }, { disableValidation: true })

    const progress: Progress = { text: "", answered: false, closed: undefined, answer: undefined, fallback: undefined }
    const close = (settled: Settled, error: IntentError | null) =>
      Effect.map(
        records.finish(executing, {
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
        }),
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
      records.recordedThenCharged(intent.id, close(priced, null), priced.charged, charges).pipe(
        Effect.map((final): ReadonlyArray<PipelineEvent> => [
          stage("execution", "completed", { model: final.models[0] ?? null, output_tokens: final.usage?.output_tokens ?? 0 }),
          stage("completion", "completed", { credits_charged: final.credits_charged }),
          {
            _tag: "Done",
            outcome: {
              intent: final,
              requestedMode: run.requestedMode,
              offline: priced.model.provider === "offline",
              answer: progress.answer,
              ...(progress.fallback === undefined ? {} : { offlineFallback: progress.fallback })
            }
          }
        ])
      )

    const lowered = ran.max_output_tokens_lowered_from === undefined
      ? {}
      : { max_tokens_lowered: { from: ran.max_output_tokens_lowered_from, to: ran.max_output_tokens } }
    return Stream.concat(
      Stream.fromIterable([...announced, stage("execution", "started", { models: plan.models, ...lowered })]),
      Stream.mapChunksEffect(call.events, (chunk) => readChunk(chunk, progress, filter, completed))
    )
  }))
