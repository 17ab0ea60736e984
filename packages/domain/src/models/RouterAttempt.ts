/**
 * One attempt of a routed call: the model's request sent under a span of its own (OpenTelemetry's
 * words for model calls), in a scope of its own whose closing ends the request, records its
 * duration and leaves the upstream clock; and the provider's pull, bounded by the call's deadline.
 */
import { Cause, Chunk, Clock, Duration, Effect, ExecutionStrategy, Exit, FiberId, Option, Scope, Stream, type Tracer } from "effect"
import * as Instruments from "../observability/Instruments.js"
import type * as Metrics from "../observability/Metrics.js"
import * as UpstreamClock from "../observability/UpstreamClock.js"
import type { Pull } from "../shared/Streams.js"
import type { CatalogModel, FailedModel, ModelChunk, ModelRequest } from "./Model.js"
import { type Provider, ProviderFailure } from "./ModelProviders.js"
import type { Call } from "./Router.js"

/** The attempt under way: its model's pull, in a scope of its own, and its span when traced. */
export interface Attempt {
  readonly model: CatalogModel
  readonly pull: Pull<ModelChunk, ProviderFailure>
  readonly scope: Scope.CloseableScope
  readonly span: Tracer.Span | undefined
  produced: boolean
}

/** What an attempt needs of its call. */
export interface AttemptSetting {
  readonly call: Call
  /** The call's scope: the attempt's is forked from it. */
  readonly scope: Scope.Scope
  /** Epoch milliseconds by this `Clock` when the whole call must have ended. */
  readonly deadline: number
  /** Of this model, from 1. */
  readonly attempt: number
  /** The models tried before that failed, told to this one. */
  readonly gaveUp: ReadonlyArray<FailedModel>
  readonly traced: boolean
  readonly clock: UpstreamClock.UpstreamClock | undefined
  readonly metrics: Metrics.Service
  readonly counted: (model: CatalogModel, outcome: string) => void
  /** Whether `scope` is still the call's current attempt's (no pull ended it). */
  readonly isCurrent: (scope: Scope.CloseableScope) => boolean
}

/**
 * Starts an attempt: its `Attempt` once the request is sent, and the request as sent. Run it
 * uninterruptibly: the clock entered and the span made are left by the scope's finalizer, which
 * must be in place before anything can stop the attempt.
 */
export const beginAttempt = (at: AttemptSetting, model: CatalogModel, provider: Provider) =>
  Effect.gen(function*() {
    const child = yield* Scope.fork(at.scope, ExecutionStrategy.sequential)
    // One span per attempt, in OpenTelemetry's words for model calls; the provider passes
    // it on as `traceparent`.
    const span = at.traced
      ? yield* Effect.makeSpan(`chat ${model.id}`, {
        kind: "client",
        captureStackTrace: false,
        attributes: {
          "gen_ai.system": model.provider,
          "gen_ai.request.model": model.upstream_model ?? model.id,
          "huddle.model": model.id,
          "huddle.attempt": at.attempt
        }
      })
      : undefined
    const now = yield* Clock.currentTimeMillis
    const request: ModelRequest = {
      model,
      messages: at.call.messages,
      temperature: at.call.temperature,
      maxOutputTokens: Math.min(at.call.maxOutputTokens, model.max_output_tokens),
      options: at.call.options,
      // By the wall clock, which is the provider's (this `Clock` may be a test's).
      deadline: Date.now() + Math.max(0, at.deadline - now),
      ...(at.gaveUp.length === 0 ? {} : { failed: [...at.gaveUp] })
    }
    const started = performance.now()
    UpstreamClock.enter(at.clock, started)
    // Added before the request, so run after it is closed, however the attempt ends: by
    // `end`, with its exit, or with the call's scope (the consumer interrupted or gone).
    yield* Scope.addFinalizerExit(child, (closed) =>
      Effect.suspend(() => {
        const ended = performance.now()
        UpstreamClock.leave(at.clock, ended)
        at.metrics.observe(Instruments.upstreamDuration, { provider: model.provider, model: model.id }, (ended - started) / 1000)
        // Still the current attempt: no pull ended it, its consumer stopped pulling. However
        // the consumer ended, the attempt was cut short: cancelled, not answered.
        const exit = Exit.isSuccess(closed) && at.isCurrent(child) ? Exit.interrupt(FiberId.none) : closed
        // The ends no pull decided: the caller gone (cancelled), a defect (error).
        if (Exit.isFailure(exit)) {
          if (Cause.isInterruptedOnly(exit.cause)) at.counted(model, "cancelled")
          else if (Cause.isDie(exit.cause)) at.counted(model, "error")
        }
        return span === undefined ? Effect.void : Effect.map(Clock.currentTimeNanos, (now) => span.end(now, exit))
      }))
    const pull = yield* Scope.extend(openOf(provider, model, span, at.deadline)(request), child)
    const attempt: Attempt = { model, pull, scope: child, span, produced: false }
    return { attempt, request }
  })

/** The answer's token counts on the attempt's span, from the last `Usage` of `chunks`. */
export const recordUsage = (span: Tracer.Span, chunks: Chunk.Chunk<ModelChunk>) => {
  const usage = Chunk.findLast(chunks, (chunk) => chunk._tag === "Usage")
  if (usage._tag === "Some" && usage.value._tag === "Usage") {
    span.attribute("gen_ai.usage.input_tokens", usage.value.usage.input_tokens)
    span.attribute("gen_ai.usage.output_tokens", usage.value.usage.output_tokens)
  }
}

/**
 * A provider's call as a pull, under the attempt's span. An opened call takes the span for its
 * request, and its pulls run as they are (providing the span to every pull would copy the
 * request's whole context each time). A provider that is only a stream sets up at its first
 * pull, so each pull runs under the span; and as it may not know the deadline, each is bounded
 * here (a race per pull, off the hot path: the HTTP providers are opened).
 */
const openOf = (provider: Provider, model: CatalogModel, span: Tracer.Span | undefined, deadline: number) =>
(request: ModelRequest): Effect.Effect<Pull<ModelChunk, ProviderFailure>, never, Scope.Scope> => {
  const under = <A, E, R>(effect: Effect.Effect<A, E, R>) => span === undefined ? effect : Effect.withParentSpan(effect, span)
  if (provider.open !== undefined) return under(provider.open(request))
  return Effect.map(under(Stream.toPull(provider.stream(request))), (pull) => bounded(under(pull), model, deadline))
}

const bounded = (pull: Pull<ModelChunk, ProviderFailure>, model: CatalogModel, deadline: number): Pull<ModelChunk, ProviderFailure> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.timeoutFail(pull, {
      duration: Duration.millis(Math.max(0, deadline - now)),
      onTimeout: () =>
        Option.some(new ProviderFailure({ provider: model.provider, model: model.id, reason: "timeout", retryable: false, message: "the call reached its deadline" }))
    }))
