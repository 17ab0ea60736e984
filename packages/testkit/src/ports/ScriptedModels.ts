/**
 * A model provider whose answers a test queues, model by model, and a small catalog served by it.
 *
 * ```ts
 * const script = yield* ScriptedModels
 * yield* script.queue("eco-a", failBefore(), answer(["Hel", "lo"], { input_tokens: 12, output_tokens: 2 }))
 * // … the first call to eco-a fails before any output, the second answers "Hello"
 * expect(yield* script.calls).toHaveLength(2)
 * ```
 *
 * A call to a model with nothing queued dies: the test did not say what should happen.
 */
import { Catalog } from "@huddle/domain/models/Catalog"
import { CatalogModel, type ModelChunk, ModelCatalog, type ModelRequest, Usage } from "@huddle/domain/models/Model"
import { ModelProviders, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import { Context, Effect, Layer, Option, Stream } from "effect"

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

export const answer = (deltas: ReadonlyArray<string>, usage?: Counts): Answer => ({ _tag: "Answer", deltas, usage })
export const failBefore = (options: { readonly retryable?: boolean } = {}): Answer => ({
  _tag: "FailBefore",
  retryable: options.retryable ?? false
})
export const failAfter = (deltas: ReadonlyArray<string>, usage?: Counts): Answer => ({ _tag: "FailAfter", deltas, usage })
export const hang = (deltas: ReadonlyArray<string>): Answer => ({ _tag: "Hang", deltas })

export interface Script {
  /** Queues answers to the next calls of `modelId`, one answer a call, in order. */
  readonly queue: (modelId: string, ...answers: ReadonlyArray<Answer>) => Effect.Effect<void>
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
  }
}

export const layer: Layer.Layer<ModelProviders | ScriptedModels> = Layer.effectContext(Effect.sync(() => {
  const queues = new Map<string, Array<Answer>>()
  const calls: Array<ModelRequest> = []
  let open = 0

  const stream = (request: ModelRequest): Stream.Stream<ModelChunk, ProviderFailure> =>
    Stream.unwrapScoped(Effect.gen(function*() {
      calls.push(request)
      const next = queues.get(request.model.id)?.shift()
      if (next === undefined) return yield* Effect.dieMessage(`No scripted answer is queued for ${request.model.id}`)
      yield* Effect.acquireRelease(Effect.sync(() => open++), () => Effect.sync(() => open--))
      return streamOf(request, next)
    }))

  const script: Script = {
    queue: (modelId, ...answers) => Effect.sync(() => void queues.set(modelId, [...(queues.get(modelId) ?? []), ...answers])),
    calls: Effect.sync(() => [...calls]),
    open: Effect.sync(() => open)
  }
  const providers = ModelProviders.of({
    get: (name) => name === providerName ? Option.some({ name, kind: "openai-compatible" as const, stream }) : Option.none()
  })
  return Context.make(ModelProviders, providers).pipe(Context.add(ScriptedModels, script))
}))

const model = (id: string, tier: CatalogModel["tier"], input_per_1k: number, output_per_1k: number) =>
  new CatalogModel({ id, tier, provider: providerName, price: { input_per_1k, output_per_1k }, context_window: 8000, max_output_tokens: 500 })

/** Two economy models (the second dearer, tried second), one standard, one premium: all scripted. */
export const models = {
  economy: model("eco-a", "economy", 10, 20),
  economyDear: model("eco-b", "economy", 30, 60),
  standard: model("std-a", "standard", 50, 100),
  premium: model("prem-a", "premium", 150, 300)
} as const

export const catalog: Layer.Layer<Catalog> = Layer.succeed(
  Catalog,
  Catalog.fromCatalog(new ModelCatalog({ models: [models.economy, models.economyDear, models.standard, models.premium] }))
)
