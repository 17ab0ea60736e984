/**
 * A model provider whose answers a test queues, model by model, and a small catalog served by it.
 *
 * ```ts
 * const script = yield* ScriptedModels
 * yield* script.queue("eco-a", failBefore(), answer(["Hel", "lo"], { input_tokens: 12, output_tokens: 2 }))
 * // … the first call to eco-a fails before any output, the second answers "Hello"
 * expect(yield* script.calls).toHaveLength(2)
 *
 * // Or answer by what was asked: the responder sees each request that finds nothing queued.
 * yield* script.respond("eco-a", (request) => request.messages.length > 2 ? answer(["Long"]) : failBefore())
 * ```
 *
 * A call to a model with nothing queued and no responder dies: the test did not say what should
 * happen.
 */
import { Catalog } from "@huddle/domain/models/Catalog"
import { CatalogModel, type ModelChunk, ModelCatalog, type ModelRequest, Usage } from "@huddle/domain/models/Model"
import { ModelProviders, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import { Context, Duration, Effect, Layer, Option, Stream } from "effect"

export const providerName = "scripted"

export interface Counts {
  readonly input_tokens: number
  readonly output_tokens: number
}

export type Answer =
  /** The deltas, then the usage when given, then `Finish`. */
  | { readonly _tag: "Answer"; readonly deltas: ReadonlyArray<string>; readonly usage: Counts | undefined }
  /** A failure before any output; `retryable` as a 503 is, otherwise as a 400. */
  | { readonly _tag: "FailBefore"; readonly retryable: boolean }
  /**
   * The deltas (and the usage when given), then a broken answer. Not retryable, so that without
   * deltas it is a failure before output that falls back at once (a retry would wait on the clock).
   */
  | { readonly _tag: "FailAfter"; readonly deltas: ReadonlyArray<string>; readonly usage: Counts | undefined }
  /** The deltas, then nothing ever again (until the call is interrupted). */
  | { readonly _tag: "Hang"; readonly deltas: ReadonlyArray<string> }
  /** Nothing for `after` (on the clock, so a `TestClock` controls it), then `answer`. */
  | { readonly _tag: "Delayed"; readonly after: Duration.Duration; readonly answer: Answer }

export const answer = (deltas: ReadonlyArray<string>, usage?: Counts): Answer => ({ _tag: "Answer", deltas, usage })
export const failBefore = (options: { readonly retryable?: boolean } = {}): Answer => ({
  _tag: "FailBefore",
  retryable: options.retryable ?? false
})
export const failAfter = (deltas: ReadonlyArray<string>, usage?: Counts): Answer => ({ _tag: "FailAfter", deltas, usage })
export const hang = (deltas: ReadonlyArray<string>): Answer => ({ _tag: "Hang", deltas })
export const delayed = (after: Duration.DurationInput, answer: Answer): Answer => ({
  _tag: "Delayed",
  after: Duration.decode(after),
  answer
})

/** Chooses the answer to one call from its request (the messages, the model, the output cap). */
export type Responder = (request: ModelRequest) => Answer

export interface Script {
  /** Queues answers to the next calls of `modelId`, one answer a call, in order. */
  readonly queue: (modelId: string, ...answers: ReadonlyArray<Answer>) => Effect.Effect<void>
  /** Answers each call of `modelId` that finds nothing queued by `responder` (replacing an earlier one). */
  readonly respond: (modelId: string, responder: Responder) => Effect.Effect<void>
  /** Every call made so far, in order. */
  readonly calls: Effect.Effect<ReadonlyArray<ModelRequest>>
  /** How many calls are still streaming (an interrupted call is closed, as an aborted request is). */
  readonly open: Effect.Effect<number>
}

export class ScriptedModels extends Context.Tag("@huddle/testkit/ScriptedModels")<ScriptedModels, Script>() {}

const output = (deltas: ReadonlyArray<string>, usage: Counts | undefined): Stream.Stream<ModelChunk> =>
  Stream.fromIterable<ModelChunk>([
    ...deltas.map((text) => ({ _tag: "Delta", text }) as const),
    ...(usage === undefined ? [] : [{ _tag: "Usage", usage: new Usage(usage) } as const])
  ]).pipe(Stream.rechunk(1))

const streamOf = (request: ModelRequest, scripted: Answer): Stream.Stream<ModelChunk, ProviderFailure> => {
  const failure = (reason: ProviderFailure["reason"], retryable: boolean, status: number) =>
    new ProviderFailure({ provider: providerName, model: request.model.id, reason, retryable, status, message: `scripted ${reason}` })
  switch (scripted._tag) {
    case "Answer":
      return Stream.concat(output(scripted.deltas, scripted.usage), Stream.make({ _tag: "Finish", reason: "stop" } as const))
    case "FailBefore":
      return scripted.retryable ? Stream.fail(failure("server_error", true, 503)) : Stream.fail(failure("rejected", false, 400))
    case "FailAfter":
      return Stream.concat(output(scripted.deltas, scripted.usage), Stream.fail(failure("bad_response", false, 502)))
    case "Hang":
      return Stream.concat(output(scripted.deltas, undefined), Stream.never)
    case "Delayed":
      return Stream.unwrap(Effect.as(Effect.sleep(scripted.after), streamOf(request, scripted.answer)))
  }
}

export const layer: Layer.Layer<ModelProviders | ScriptedModels> = Layer.effectContext(Effect.sync(() => {
  const queues = new Map<string, Array<Answer>>()
  const responders = new Map<string, Responder>()
  const calls: Array<ModelRequest> = []
  let open = 0

  const stream = (request: ModelRequest): Stream.Stream<ModelChunk, ProviderFailure> =>
    Stream.unwrapScoped(Effect.gen(function*() {
      calls.push(request)
      const next = queues.get(request.model.id)?.shift() ?? responders.get(request.model.id)?.(request)
      if (next === undefined) return yield* Effect.dieMessage(`No scripted answer is queued for ${request.model.id}, and no responder answers it`)
      yield* Effect.acquireRelease(Effect.sync(() => open++), () => Effect.sync(() => open--))
      return streamOf(request, next)
    }))

  const script: Script = {
    queue: (modelId, ...answers) => Effect.sync(() => void queues.set(modelId, [...(queues.get(modelId) ?? []), ...answers])),
    respond: (modelId, responder) => Effect.sync(() => void responders.set(modelId, responder)),
    calls: Effect.sync(() => [...calls]),
    open: Effect.sync(() => open)
  }
  const providers = ModelProviders.of({
    get: (name) => name === providerName ? Option.some({ name, kind: "openai-compatible" as const, stream }) : Option.none()
  })
  return Context.make(ModelProviders, providers).pipe(Context.add(ScriptedModels, script))
}))

/** Prices in credits per million tokens. */
const model = (id: string, tier: CatalogModel["tier"], input: number, output: number) =>
  new CatalogModel({ id, tier, provider: providerName, pricing: { input, output }, context_window: 8000, max_output_tokens: 500 })

const seat = (letter: string, input: number, output: number) =>
  new CatalogModel({
    id: `panel-${letter}`,
    tier: "standard",
    provider: providerName,
    upstream_model: `vendor-${letter}-large-2`,
    pricing: { input, output },
    context_window: 16000,
    max_output_tokens: 500
  })

/**
 * Four distinct scripted models, each priced differently and named upstream, for a council to seat
 * (`Council.plan({ models: panel })`). They are in no catalog tier, so that tier lookups in other
 * tests still see the catalog's models only.
 */
export const panel: ReadonlyArray<CatalogModel> = [seat("a", 10_000, 20_000), seat("b", 20_000, 40_000), seat("c", 30_000, 60_000), seat("d", 40_000, 80_000)]

/** Two economy models (the second dearer, tried second), one standard, one premium: all scripted. */
export const models = {
  economy: model("eco-a", "economy", 10_000, 20_000),
  economyDear: model("eco-b", "economy", 30_000, 60_000),
  standard: model("std-a", "standard", 50_000, 100_000),
  premium: model("prem-a", "premium", 150_000, 300_000)
} as const

export const catalog: Layer.Layer<Catalog> = Layer.succeed(
  Catalog,
  Catalog.fromCatalog(new ModelCatalog({ models: [models.economy, models.economyDear, models.standard, models.premium] }))
)
