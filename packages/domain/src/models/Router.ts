/**
 * Runs a model call over the catalog: retries a model on transient failures (honouring the
 * provider's Retry-After within a bound), then falls back to the next model of the list. Once a
 * model has produced output, a failure ends the call: an answer is never stitched from two models.
 */
import { Chunk, Clock, Context, Duration, Effect, FiberRef, Layer, Option, Stream } from "effect"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"
import * as Traced from "../observability/Traced.js"
import * as UpstreamClock from "../observability/UpstreamClock.js"
import { UpstreamUnavailable } from "../shared/Errors.js"
import type { CallOptions, CatalogModel, ChatMessage, ModelChunk } from "./Model.js"
import { ModelProviders, ProviderFailure } from "./ModelProviders.js"

export type RouterChunk =
  | ModelChunk
  | { readonly _tag: "Attempt"; readonly model: CatalogModel; readonly attempt: number }
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

export interface Service {
  readonly stream: (models: ReadonlyArray<CatalogModel>, call: Call) => Stream.Stream<RouterChunk, UpstreamUnavailable>
}

export class Router extends Context.Tag("@huddle/domain/Router")<Router, Service>() {}

export class RouterPolicy extends Context.Reference<RouterPolicy>()("@huddle/domain/RouterPolicy", {
  defaultValue: () => defaultPolicy
}) {}

const describe = (failure: ProviderFailure) => `${failure.reason}${failure.status ? ` (${failure.status})` : ""}`

export const make = Effect.gen(function*() {
  const providers = yield* ModelProviders
  const policy = yield* RouterPolicy
  const metrics = yield* Metrics.Metrics
  const limit = Duration.toMillis(policy.maxDuration)

  const counted = (model: CatalogModel, outcome: string) =>
    metrics.add(Instruments.upstreamCalls, { provider: model.provider, model: model.id, outcome })

  const delayFor = (failure: ProviderFailure, attempt: number): Option.Option<Duration.Duration> => {
    if (!failure.retryable || attempt >= policy.attempts) return Option.none()
    const wanted = failure.retryAfter ?? Duration.times(policy.baseDelay, 2 ** (attempt - 1))
    return Duration.greaterThan(wanted, policy.maxDelay) ? Option.none() : Option.some(wanted)
  }

  const overrun = () =>
    new UpstreamUnavailable({ message: `The model call ran past its limit of ${Duration.format(policy.maxDuration)}` })

  const isOutput = (chunk: RouterChunk) => chunk._tag === "Delta" || chunk._tag === "ToolCallDelta"

  // The call runs in its consumer's fiber, one stream after another: no fiber of its own, no
  // queue between the upstream and the consumer. The limit is kept where time passes: each batch
  // of chunks is checked against it, a retry sleeps no later than it, and the provider is told it
  // (`ModelRequest.deadline`) so that a silent upstream is given up on then.
  const stream: Service["stream"] = (models, call) =>
    Stream.unwrap(Effect.map(Effect.zip(Clock.currentTimeMillis, FiberRef.get(UpstreamClock.current)), ([now, clock]) => {
      const deadline = now + limit
      const failures: Array<string> = []

      const tryModel = (index: number, attempt: number): Stream.Stream<RouterChunk, UpstreamUnavailable> => {
        const model = models[index]
        if (model === undefined) {
          return Stream.fail(
            new UpstreamUnavailable({
              message: failures.length === 0
                ? "No model is available for this request"
                : `No model could answer: ${failures.join("; ")}`
            })
          )
        }
        const provider = providers.get(model.provider)
        if (Option.isNone(provider)) {
          failures.push(`${model.id}: provider ${model.provider} is not configured`)
          return tryModel(index + 1, 1)
        }
        let produced = false
        const answer = Stream.suspend(() => {
          const started = performance.now()
          UpstreamClock.enter(clock, started)
          return provider.value.stream({
            model,
            messages: call.messages,
            temperature: call.temperature,
            maxOutputTokens: Math.min(call.maxOutputTokens, model.max_output_tokens),
            options: call.options,
            deadline
          }).pipe(
            Stream.mapChunksEffect((chunks): Effect.Effect<Chunk.Chunk<RouterChunk>, UpstreamUnavailable> =>
              Effect.flatMap(Clock.currentTimeMillis, (now) => {
                if (now >= deadline) return Effect.fail(overrun())
                if (!produced) produced = Chunk.some(chunks, isOutput)
                const usage = Chunk.findLast(chunks, (chunk) => chunk._tag === "Usage")
                return usage._tag === "Some" && usage.value._tag === "Usage"
                  ? Effect.as(
                    Effect.annotateCurrentSpan({
                      "gen_ai.usage.input_tokens": usage.value.usage.input_tokens,
                      "gen_ai.usage.output_tokens": usage.value.usage.output_tokens
                    }),
                    chunks
                  )
                  : Effect.succeed(chunks)
              })
            ),
            Stream.ensuring(Effect.sync(() => {
              const ended = performance.now()
              UpstreamClock.leave(clock, ended)
              metrics.observe(Instruments.upstreamDuration, { provider: model.provider, model: model.id }, (ended - started) / 1000)
            }))
          )
        })
        // One span per attempt, in OpenTelemetry's words for model calls; the provider passes it
        // on as `traceparent`.
        const attempted = Traced.streamSpan(
          Stream.concat(Stream.make<[RouterChunk]>({ _tag: "Attempt", model, attempt }), answer),
          `chat ${model.id}`,
          {
            kind: "client",
            attributes: {
              "gen_ai.system": model.provider,
              "gen_ai.request.model": model.upstream_model ?? model.id,
              "huddle.model": model.id,
              "huddle.attempt": attempt
            }
          }
        )
        const ok = Stream.fromEffect(Effect.sync(() => counted(model, "ok"))).pipe(Stream.drain)
        return Stream.catchAll(
          Stream.concat(attempted, ok),
          (failure): Stream.Stream<RouterChunk, UpstreamUnavailable> =>
            failure._tag === "UpstreamUnavailable" ? Stream.fail(failure) : Stream.unwrap(Effect.map(Clock.currentTimeMillis, (now) => {
              // The provider gave up at the deadline it was told: that is the limit, not its failure.
              if (now >= deadline) return Stream.fail(overrun())
              if (produced) {
                counted(model, "failed_mid_answer")
                return Stream.fail(new UpstreamUnavailable({ message: `${model.id} failed mid-answer: ${describe(failure)}` }))
              }
              const delay = delayFor(failure, attempt)
              if (Option.isSome(delay)) {
                counted(model, "retried")
                const wait = Math.min(Duration.toMillis(delay.value), deadline - now)
                return Stream.concat(
                  Stream.make<[RouterChunk]>({ _tag: "Failed", model, reason: describe(failure), willRetry: true }),
                  Stream.unwrap(Effect.as(Effect.sleep(Duration.millis(wait)), undefined).pipe(
                    Effect.zipRight(Clock.currentTimeMillis),
                    Effect.map((then) => then >= deadline ? Stream.fail(overrun()) : tryModel(index, attempt + 1))
                  ))
                )
              }
              counted(model, index + 1 < models.length ? "fallback" : "exhausted")
              failures.push(`${model.id}: ${describe(failure)}`)
              return Stream.concat(
                Stream.make<[RouterChunk]>({ _tag: "Failed", model, reason: describe(failure), willRetry: false }),
                Stream.suspend(() => tryModel(index + 1, 1))
              )
            }))
        )
      }
      return tryModel(0, 1)
    }))

  return Router.of({ stream })
})

export const layer = Layer.effect(Router, make)


