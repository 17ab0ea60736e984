/**
 * Runs a model call over the catalog: retries a model on transient failures (honouring the
 * provider's Retry-After within a bound), then falls back to the next model of the list. Once a
 * model has produced output, a failure ends the call: an answer is never stitched from two models.
 */
import { Chunk, Clock, Context, Duration, Effect, Exit, FiberRef, Layer, Mailbox, Option, Schedule, Stream } from "effect"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"
import * as Traced from "../observability/Traced.js"
import * as UpstreamClock from "../observability/UpstreamClock.js"
import { UpstreamUnavailable } from "../shared/Errors.js"
import { forEachChunk } from "../shared/Streams.js"
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
   * fails, within a second (and settles for what it produced). Bounded so that a reservation's age
   * says whether its call can still be running (see ReservationExpiry).
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

/** How often calls are checked against their limit: a call past it fails within this much more. */
const overrunCheck = Duration.seconds(1)

/** How far the call may read ahead of its consumer, in chunks of the model's answer. */
const bufferedChunks = 64

const describe = (failure: ProviderFailure) => `${failure.reason}${failure.status ? ` (${failure.status})` : ""}`

export const make = Effect.gen(function*() {
  const providers = yield* ModelProviders
  const policy = yield* RouterPolicy
  const metrics = yield* Metrics.Metrics

  const counted = (model: CatalogModel, outcome: string) =>
    metrics.add(Instruments.upstreamCalls, { provider: model.provider, model: model.id, outcome })

  const delayFor = (failure: ProviderFailure, attempt: number): Option.Option<Duration.Duration> => {
    if (!failure.retryable || attempt >= policy.attempts) return Option.none()
    const wanted = failure.retryAfter ?? Duration.times(policy.baseDelay, 2 ** (attempt - 1))
    return Duration.greaterThan(wanted, policy.maxDelay) ? Option.none() : Option.some(wanted)
  }

  // The calls under way, with the time their limit passes: one timer looks for those past it
  // (rather than a timer fiber per call, forked and interrupted with every request).
  const running = new Set<{ readonly deadline: number; readonly mailbox: Mailbox.Mailbox<RouterChunk, UpstreamUnavailable> }>()
  const overrun = () =>
    new UpstreamUnavailable({ message: `The model call ran past its limit of ${Duration.format(policy.maxDuration)}` })
  yield* Clock.currentTimeMillis.pipe(
    Effect.map((now) => {
      for (const call of running) {
        if (call.deadline > now) continue
        running.delete(call)
        call.mailbox.unsafeDone(Exit.fail(overrun()))
      }
    }),
    Effect.repeat(Schedule.spaced(overrunCheck)),
    Effect.forkScoped
  )

  const stream: Service["stream"] = (models, call) =>
    // The call runs in a fiber of its own that feeds a mailbox; the timer above fails the mailbox
    // (after what was already produced) once the call's limit has passed. `Stream.interruptWhen`
    // would race every pull against a timer, forking fibers for each chunk.
    Stream.unwrapScoped(Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<RouterChunk, UpstreamUnavailable>(bufferedChunks)
      const entry = { deadline: (yield* Clock.currentTimeMillis) + Duration.toMillis(policy.maxDuration), mailbox }
      const clock = yield* FiberRef.get(UpstreamClock.current)
      const failures: Array<string> = []
      const tryModel = (index: number, attempt: number): Effect.Effect<void, UpstreamUnavailable> => {
        const model = models[index]
        if (model === undefined) {
          return Effect.fail(
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
        const answer = provider.value.stream({
          model,
          messages: call.messages,
          temperature: call.temperature,
          maxOutputTokens: Math.min(call.maxOutputTokens, model.max_output_tokens),
          options: call.options
        })
        const streamed = Effect.suspend(() => {
          const started = performance.now()
          UpstreamClock.enter(clock, started)
          return forEachChunk(answer, (chunks) => {
            if (!produced) produced = Chunk.some(chunks, (chunk) => chunk._tag === "Delta" || chunk._tag === "ToolCallDelta")
            const usage = Chunk.findLast(chunks, (chunk) => chunk._tag === "Usage")
            return usage._tag === "Some" && usage.value._tag === "Usage"
              ? Effect.zipRight(
                Effect.annotateCurrentSpan({
                  "gen_ai.usage.input_tokens": usage.value.usage.input_tokens,
                  "gen_ai.usage.output_tokens": usage.value.usage.output_tokens
                }),
                mailbox.offerAll(chunks)
              )
              : mailbox.offerAll(chunks)
          }).pipe(
            Effect.ensuring(Effect.sync(() => {
              const ended = performance.now()
              UpstreamClock.leave(clock, ended)
              metrics.observe(Instruments.upstreamDuration, { provider: model.provider, model: model.id }, (ended - started) / 1000)
            }))
          )
        })
        const attempted = mailbox.offer({ _tag: "Attempt", model, attempt }).pipe(
          Effect.zipRight(streamed),
          // One span per attempt, in OpenTelemetry's words for model calls; the provider passes it
          // on as `traceparent`.
          (effect) =>
            Traced.span(effect, `chat ${model.id}`, {
              kind: "client",
              attributes: {
                "gen_ai.system": model.provider,
                "gen_ai.request.model": model.upstream_model ?? model.id,
                "huddle.model": model.id,
                "huddle.attempt": attempt
              }
            })
        )
        return attempted.pipe(
          Effect.tap(() => counted(model, "ok")),
          Effect.catchAll((failure: ProviderFailure): Effect.Effect<void, UpstreamUnavailable> => {
            if (produced) {
              counted(model, "failed_mid_answer")
              return Effect.fail(new UpstreamUnavailable({ message: `${model.id} failed mid-answer: ${describe(failure)}` }))
            }
            const delay = delayFor(failure, attempt)
            if (Option.isSome(delay)) {
              counted(model, "retried")
              return mailbox.offer({ _tag: "Failed", model, reason: describe(failure), willRetry: true }).pipe(
                Effect.zipRight(Effect.sleep(delay.value)),
                Effect.zipRight(Effect.suspend(() => tryModel(index, attempt + 1)))
              )
            }
            counted(model, index + 1 < models.length ? "fallback" : "exhausted")
            failures.push(`${model.id}: ${describe(failure)}`)
            return mailbox.offer({ _tag: "Failed", model, reason: describe(failure), willRetry: false }).pipe(
              Effect.zipRight(Effect.suspend(() => tryModel(index + 1, 1)))
            )
          })
        )
      }
      running.add(entry)
      yield* Effect.suspend(() => tryModel(0, 1)).pipe(
        Mailbox.into(mailbox),
        Effect.ensuring(Effect.sync(() => running.delete(entry))),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    }))

  return Router.of({ stream })
})

export const layer = Layer.scoped(Router, make)


