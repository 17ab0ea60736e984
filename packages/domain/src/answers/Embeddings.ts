/**
 * Embeddings as OpenAI-compatible clients ask for them (`POST /v1/embeddings`): one metered call
 * to one embedding model, under the same rules as a chat completion — the org context's
 * effective settings and payer, an enforced tier ceiling on the model's tier, credits.
 *
 * ```ts
 * const embeddings = yield* Embeddings
 * const { vectors, settled } = yield* embeddings.create({ scope, model: "offline-embed", input: ["a text"] })
 * ```
 *
 * `model` names a catalog model of kind `embedding`; a chat model, a tier or a council is not
 * one (404 naming `model`, saying which models are). No fallback to another model: vectors of
 * different models are not comparable, so a failed call is the caller's 502, nothing charged.
 *
 * Money: the worst case — the estimated input tokens with the reservation's margin, at the
 * model's input price — is reserved before the provider is called (402 when the payer cannot
 * cover it), and settled once to the tokens the provider counted (`MeteredCall.whole`).
 */
import { Context, Effect, Layer, Option } from "effect"
import {
  InvalidRequest,
  type InsufficientCredits,
  type NotFound,
  type PolicyViolation,
  type Unauthorized,
  UpstreamUnavailable
} from "../shared/Errors.js"
import type { CatalogModel } from "../models/Model.js"
import { type EmbeddingInput, estimateInputTokens } from "../models/Embedding.js"
import { inputUsage, MeteredCall, type Settled } from "../models/MeteredCall.js"
import { ModelProviders } from "../models/ModelProviders.js"
import { type RequestScope, settingsOf } from "../request/RequestScope.js"
import { traced } from "../observability/Traced.js"
import { payerOf } from "./Payer.js"

/** The most inputs one request may carry (OpenAI's limit). */
export const maxInputs = 2048

export interface Request {
  /** Who asks, in which org (see `RequestScope`). */
  readonly scope: RequestScope
  /** A catalog model of kind `embedding`. */
  readonly model: string
  readonly input: ReadonlyArray<EmbeddingInput>
  readonly dimensions?: number | undefined
  /** How an upstream is asked to send the vectors (the client's `encoding_format`). */
  readonly encodingFormat?: "float" | "base64" | undefined
  readonly user?: string | undefined
}

export interface Result {
  readonly model: CatalogModel
  /** One vector per input, in order. */
  readonly vectors: ReadonlyArray<ReadonlyArray<number>>
  /** The provider's input tokens and what they were charged. */
  readonly settled: Settled
}

export type EmbeddingError = InvalidRequest | NotFound | PolicyViolation | InsufficientCredits | Unauthorized | UpstreamUnavailable

export interface Service {
  readonly create: (request: Request) => Effect.Effect<Result, EmbeddingError>
}

export class Embeddings extends Context.Tag("@huddle/domain/Embeddings")<Embeddings, Service>() {}

/** What is refused before anything is reserved: no inputs, too many, an empty one, one beyond the model's window. */
const refusalOf = (model: CatalogModel, input: ReadonlyArray<EmbeddingInput>): InvalidRequest | undefined => {
  if (input.length === 0) return new InvalidRequest({ message: "`input` needs at least one text", field: "input" })
  if (input.length > maxInputs) {
    return new InvalidRequest({ message: `\`input\` holds ${input.length} items; at most ${maxInputs} are allowed`, field: "input" })
  }
  for (const [index, item] of input.entries()) {
    if (item.length === 0) return new InvalidRequest({ message: `\`input[${index}]\` is empty`, field: "input" })
    const tokens = estimateInputTokens(item)
    if (tokens > model.context_window) {
      return new InvalidRequest({
        message: `\`input[${index}]\` takes about ${tokens} tokens; ${model.id} takes at most ${model.context_window} per input`,
        field: "input"
      })
    }
  }
  return undefined
}

export const make = Effect.gen(function*() {
  const metered = yield* MeteredCall
  const providers = yield* ModelProviders

  const create: Service["create"] = (request) =>
    Effect.gen(function*() {
      const { scope } = request
      const [model] = yield* metered.candidates({ _tag: "Embedding", id: request.model }, scope.rules.policies?.model_tier)
      const refusal = refusalOf(model!, request.input)
      if (refusal !== undefined) return yield* refusal
      const provider = providers.get(model!.provider)
      const embed = Option.isSome(provider) ? provider.value.embed : undefined
      if (embed === undefined) {
        // A configured provider without embeddings is refused at load (adapters' Catalog); an unconfigured one is skipped, as for chat.
        const why = Option.isNone(provider) ? "is not configured" : "makes no embeddings"
        return yield* new UpstreamUnavailable({ message: `${model!.id}: its provider ${model!.provider} ${why}`, charged: 0 })
      }
      const settings = settingsOf(scope)
      const answered = yield* metered.whole({
        payer: payerOf({ userId: scope.principal.user.id, orgId: scope.orgId, settings, actor: scope.principal }),
        purpose: `embeddings (${model!.id})`,
        model: model!,
        estimatedInput: request.input.reduce((sum, item) => sum + estimateInputTokens(item), 0),
        call: embed({
          model: model!,
          input: request.input,
          dimensions: request.dimensions,
          encodingFormat: request.encodingFormat,
          user: request.user
        }).pipe(
          Effect.map((embedded) => ({ value: embedded.vectors, usage: inputUsage(embedded.inputTokens) })),
          Effect.catchTags({
            EmbeddingRefused: (refused) => Effect.fail(new InvalidRequest({ message: refused.message, field: refused.param })),
            ProviderFailure: (failure) =>
              Effect.fail(new UpstreamUnavailable({ message: `${model!.id} (${failure.reason}): ${failure.message}`, charged: 0 }))
          })
        )
      })
      return { model: model!, vectors: answered.value, settled: answered.settled }
    })

  return Embeddings.of(traced("Embeddings", { create }))
})

export const layer = Layer.effect(Embeddings, make)
