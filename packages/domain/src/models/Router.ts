/**
 * Runs a model call over the catalog: retries a model on transient failures (honouring the
 * provider's Retry-After within a bound), then falls back to the next model of the list. Once a
 * model has produced output, a failure ends the call: an answer is never stitched from two models.
 *
 * Every failed attempt of a configured provider is logged as a warning (provider, model, reason,
 * status, the provider's cleaned message: no secrets, no stack) and kept in the providers'
 * health (`health`: consecutive failures, the last failure and success), which `/readyz` reports.
 * A model tried after others failed is told which (`ModelRequest.failed`), and so is the caller
 * (`Attempt.failed`): the offline model standing in says so (decision 0034).
 *
 * The parts: `RouterAttempt` (one attempt: its span, scope and request), `ProviderWatch` (the
 * providers' health and the failed attempts' warnings).
 */
import { Cause, Chunk, Clock, Context, Duration, Effect, Either, Exit, FiberRef, Layer, Option, Scope, Stream } from "effect"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"
import * as Traced from "../observability/Traced.js"
import * as UpstreamClock from "../observability/UpstreamClock.js"
import { UpstreamUnavailable } from "../shared/Errors.js"
import type { Pull } from "../shared/Streams.js"
import { type CallOptions, type CatalogModel, type ChatMessage, type FailedModel, isOutput, type ModelChunk } from "./Model.js"
import { ModelProviders, type Provider, type ProviderFailure } from "./ModelProviders.js"
import { describe, providerWatch, type ProviderWatch } from "./ProviderWatch.js"
import { type Attempt, beginAttempt, recordUsage } from "./RouterAttempt.js"


export type RouterChunk =
  | ModelChunk
  /** `failed`: the models of the call that failed before this one (none on the first model). */
  | { readonly _tag: "Attempt"; readonly model: CatalogModel; readonly attempt: number; readonly failed: ReadonlyArray<FailedModel> }
  | { readonly _tag: "Failed"; readonly model: CatalogModel; readonly reason: string; readonly willRetry: boolean }

export interface Call {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  readonly maxOutputTokens: number
  /** Passed through to the provider (OpenAI-compatible ones use them). */
  readonly options?: CallOptions | undefined
}

export interface Policy {
  /** Attempts per model, the first included. */
  readonly attempts: number
  readonly baseDelay: Duration.Duration
  /** A Retry-After longer than this moves on to the next model instead of waiting. */
  readonly maxDelay: Duration.Duration
  /**
   * The longest a whole call may run, retries and fallbacks included; a call still running then
   * fails (and settles for what it produced): at its next chunk, or when its provider, told the
   * deadline, stops waiting for a silent upstream. Bounded so that a reservation's age says whether
   * its call can still be running (see ReservationExpiry).
   */
  readonly maxDuration: Duration.Duration
}

export const defaultPolicy: Policy = {
  attempts: 3,
  baseDelay: Duration.millis(200),
  maxDelay: Duration.seconds(10),
  maxDuration: Duration.minutes(10)
}

/** How a configured provider has been doing on this instance, from its model calls. */
export interface ProviderHealth {
  readonly provider: string
  /** Failed attempts since its last answer (0: its last attempt answered). */
  readonly consecutiveFailures: number
  /** Epoch milliseconds of its last failed attempt, and why (`connection`, `server_error (503)` …). */
  readonly lastFailureAt?: number | undefined
  readonly lastFailure?: string | undefined
  /** Epoch milliseconds of its last answered attempt. */
  readonly lastSuccessAt?: number | undefined
}

export interface Service {
  readonly stream: (models: ReadonlyArray<CatalogModel>, call: Call) => Stream.Stream<RouterChunk, UpstreamUnavailable>
  /** `stream` as its pull, in the caller's scope: for a caller that pulls the call itself (the metered call). */
  readonly open: (models: ReadonlyArray<CatalogModel>, call: Call) => Effect.Effect<Pull<RouterChunk, UpstreamUnavailable>, never, Scope.Scope>
  /** The providers that were called since the start, by name (the offline model is not watched). */
  readonly health: Effect.Effect<ReadonlyArray<ProviderHealth>>
}

export class Router extends Context.Tag("@huddle/domain/Router")<Router, Service>() {}

export class RouterPolicy extends Context.Reference<RouterPolicy>()("@huddle/domain/RouterPolicy", {
  defaultValue: () => defaultPolicy
}) {}

/** What a routed call needs of the router: the providers, the policy, the metrics and the providers' health. */
interface Routing {
  readonly providers: ModelProviders["Type"]
  readonly policy: Policy
  readonly metrics: Metrics.Service
  readonly watch: ProviderWatch
}

/** Whether a failed attempt is retried on the same model, and after how long: none moves on to the next model. */
const delayFor = (policy: Policy, failure: ProviderFailure, attempt: number): Option.Option<Duration.Duration> => {
  if (!failure.retryable || attempt >= policy.attempts) return Option.none()
  const wanted = failure.retryAfter ?? Duration.times(policy.baseDelay, 2 ** (attempt - 1))
  return Duration.greaterThan(wanted, policy.maxDelay) ? Option.none() : Option.some(wanted)
}

const overrunOf = (policy: Policy) =>
  new UpstreamUnavailable({ message: `The model call ran past its limit of ${Duration.format(policy.maxDuration)}` })

// The call is one pull over its attempts, run in its consumer's fiber: no fiber of its own, no
// queue between the upstream and the consumer, no stream stage per step. The limit is kept
// where time passes: each batch of chunks is checked against it, a retry sleeps no later than
// it, and the provider is told it (`ModelRequest.deadline`) so that a silent upstream is given
// up on then.
const openCall = (
  routing: Routing,
  models: ReadonlyArray<CatalogModel>,
  call: Call
): Effect.Effect<Pull<RouterChunk, UpstreamUnavailable>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { metrics, policy, providers } = routing
    const { answered, failedAttempt } = routing.watch
    const limit = Duration.toMillis(policy.maxDuration)
    const counted = (model: CatalogModel, outcome: string) =>
      metrics.add(Instruments.upstreamCalls, { provider: model.provider, model: model.id, outcome })
    const overrun = () => overrunOf(policy)
    const scope = yield* Effect.scope
    const deadline = (yield* Clock.currentTimeMillis) + limit
    const clock = yield* FiberRef.get(UpstreamClock.current)
    const traced = yield* Traced.recording
    const failures: Array<string> = []
    /** The models tried that failed, for the next ones and the caller (`Attempt.failed`). */
    const gaveUp: Array<FailedModel> = []
    let index = 0
    let attempt = 1
    let current: Attempt | undefined
    /** Set between a failed attempt and its retry: how long to wait first. */
    let wait: number | undefined
    let over = false
    /** The last batch arrived past the limit: handed on (it was produced), and the call ends at the next pull. */
    let late = false

    /** The attempt is over: its scope closes with how it ended, and with it the request (see `begin`). */
    const end = (a: Attempt, exit: Exit.Exit<unknown, unknown>) => {
      current = undefined
      // Not stopped half way: the scope counts as closed once its closing has begun.
      return Effect.uninterruptible(Scope.close(a.scope, exit))
    }

    const fail = (error: UpstreamUnavailable) => {
      over = true
      return Effect.fail(Option.some(error))
    }

    /** The next attempt: its `Attempt` marker once the request is sent, or the call's failure when no model is left. */
    const start = (): Pull<RouterChunk, UpstreamUnavailable> => {
      for (;;) {
        const model = models[index]
        if (model === undefined) {
          return fail(
            new UpstreamUnavailable({
              message: failures.length === 0 ? "No model is available for this request" : `No model could answer: ${failures.join("; ")}`
            })
          )
        }
        const provider = providers.get(model.provider)
        if (Option.isSome(provider)) return begin(model, provider.value)
        failures.push(`${model.id}: provider ${model.provider} is not configured`)
        index++
        attempt = 1
      }
    }

    // Uninterruptible: the clock entered and the span made are left by the scope's finalizer,
    // which must be in place before anything can stop the attempt.
    const begin = (model: CatalogModel, provider: Provider): Pull<RouterChunk, UpstreamUnavailable> =>
      Effect.uninterruptible(Effect.map(
        beginAttempt(
          { call, scope, deadline, attempt, gaveUp, traced, clock, metrics, counted, isCurrent: (child) => current?.scope === child },
          model,
          provider
        ),
        ({ attempt: started, request }) => {
          current = started
          return Chunk.of<RouterChunk>({ _tag: "Attempt", model, attempt, failed: request.failed ?? [] })
        }
      ))

    const passed = (a: Attempt, chunks: Chunk.Chunk<ModelChunk>): Pull<RouterChunk, UpstreamUnavailable> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (!a.produced) a.produced = Chunk.some(chunks, isOutput)
        if (a.span !== undefined) recordUsage(a.span, chunks)
        if (now < deadline) return Effect.succeed(chunks)
        // Past the limit: what arrived was produced (and is paid for); the call ends after it.
        counted(a.model, "timed_out")
        late = true
        return Effect.as(end(a, Exit.fail(overrun())), chunks)
      })

    const failed = (a: Attempt, failure: ProviderFailure): Pull<RouterChunk, UpstreamUnavailable> =>
      Effect.zipRight(
        end(a, Exit.fail(failure)),
        Effect.flatMap(Clock.currentTimeMillis, (now): Pull<RouterChunk, UpstreamUnavailable> => {
          const { model } = a
          // The provider gave up at the deadline it was told: that is the limit, not its failure.
          if (now >= deadline) {
            counted(model, "timed_out")
            return fail(overrun())
          }
          if (a.produced) {
            counted(model, "failed_mid_answer")
            return Effect.zipRight(
              failedAttempt(model, failure, attempt, false),
              fail(new UpstreamUnavailable({ message: `${model.id} failed mid-answer: ${describe(failure)}` }))
            )
          }
          const delay = delayFor(policy, failure, attempt)
          if (Option.isSome(delay)) {
            counted(model, "retried")
            wait = Math.min(Duration.toMillis(delay.value), deadline - now)
            const tried = attempt++
            return Effect.as(
              failedAttempt(model, failure, tried, true),
              Chunk.of<RouterChunk>({ _tag: "Failed", model, reason: describe(failure), willRetry: true })
            )
          }
          counted(model, index + 1 < models.length ? "fallback" : "exhausted")
          const tried = attempt
          // Each model tried, why it failed, and how often it was tried: what the caller's 502 names.
          failures.push(`${model.id}: ${describe(failure)}${tried > 1 ? ` (${tried} attempts)` : ""}`)
          gaveUp.push({ model: model.id, reason: describe(failure) })
          index++
          attempt = 1
          return Effect.as(
            failedAttempt(model, failure, tried, false),
            Chunk.of<RouterChunk>({ _tag: "Failed", model, reason: describe(failure), willRetry: false })
          )
        })
      )

    /** The next attempt, if it can start within the limit. */
    const startWithin = Effect.flatMap(Clock.currentTimeMillis, (now) => now >= deadline ? fail(overrun()) : start())

    const pull: Pull<RouterChunk, UpstreamUnavailable> = Effect.suspend(() => {
      if (over) return Effect.fail(Option.none())
      if (late) return fail(overrun())
      const a = current
      if (a === undefined) {
        // The first attempt starts at once; a later one only within the limit.
        if (wait === undefined) return index === 0 && attempt === 1 ? start() : startWithin
        const millis = wait
        wait = undefined
        return Effect.zipRight(Effect.sleep(Duration.millis(millis)), startWithin)
      }
      return Effect.matchCauseEffect(a.pull, {
        onSuccess: (chunks) => passed(a, chunks),
        onFailure: (cause) => {
          const failure = Cause.failureOrCause(cause)
          // A defect or an interruption ends the call as it is; the attempt's span says which.
          if (Either.isRight(failure)) return Effect.zipRight(end(a, Exit.failCause(failure.right)), Effect.failCause(failure.right))
          if (Option.isSome(failure.left)) return failed(a, failure.left.value)
          counted(a.model, "ok")
          answered(a.model)
          over = true
          return Effect.zipRight(end(a, Exit.void), Effect.fail(Option.none()))
        }
      })
    })
    return pull
  })

export const make = Effect.gen(function*() {
  const routing: Routing = {
    providers: yield* ModelProviders,
    policy: yield* RouterPolicy,
    metrics: yield* Metrics.Metrics,
    watch: providerWatch()
  }
  const open: Service["open"] = (models, call) => openCall(routing, models, call)
  const stream: Service["stream"] = (models, call) => Stream.fromPull(open(models, call))
  return Router.of({ stream, open, health: routing.watch.health })
})

export const layer = Layer.effect(Router, make)
