/**
 * Which models a metered call may try: a target as a caller names it (a tier, a model, a stored
 * plan's models) checked against an enforced policy's tier ceiling (`MeteredCall.candidates`),
 * and kept to those whose provider can honour the call's options (`MeteredCall.fitting`).
 */
import { Effect, Option } from "effect"
import { InvalidRequest, NotFound, PolicyViolation } from "../shared/Errors.js"
import type { CallOptions, CatalogModel } from "./Model.js"
import { tierRank } from "../settings/Policy.js"
import { ModelTier } from "../settings/Preferences.js"
import type { Service as Catalog } from "./Catalog.js"
import type { Service as ModelProviders } from "./ModelProviders.js"
import { refusalOf } from "./ProviderSupport.js"

/** What a caller may name as the models of a call. */
export type Target =
  /** That tier's models, lowered to an enforced `model_tier` ceiling. */
  | { readonly _tag: "Tier"; readonly tier: ModelTier }
  /** A catalog model by id; refused when an enforced policy forbids its tier. */
  | { readonly _tag: "Model"; readonly id: string }
  /** Models already chosen (a stored plan), in the order to try them; checked against the ceiling. */
  | { readonly _tag: "Candidates"; readonly ids: ReadonlyArray<string> }
  /** An embedding model by id (`POST /v1/embeddings`); refused when it is a chat model, or above the ceiling. */
  | { readonly _tag: "Embedding"; readonly id: string }

export const tiers: ReadonlyArray<ModelTier> = ModelTier.literals

export const isTier = (id: string): id is ModelTier => (tiers as ReadonlyArray<string>).includes(id)

/** A `model` as clients name it: a tier name or a catalog id. */
export const targetOf = (id: string): Target => isTier(id) ? { _tag: "Tier", tier: id } : { _tag: "Model", id }

/** The one answer to a model nobody can call, in OpenAI's words so that clients recognise it. */
export const modelNotFound = (id: string) =>
  new NotFound({ message: `The model \`${id}\` does not exist or you do not have access to it.`, field: "model" })

/** An embedding model named for a chat call: it answers `POST /v1/embeddings` only. */
const notChat = (model: CatalogModel) =>
  new NotFound({
    message: `The model \`${model.id}\` is an embedding model: it answers POST /v1/embeddings, not chat`,
    field: "model"
  })

/** A chat model (or a tier) named for embeddings: the answer says which models make them. */
const notEmbedding = (model: CatalogModel, catalog: Catalog) => {
  const embedding = catalog.models.filter((m) => m.kind === "embedding").map((m) => m.id)
  return new NotFound({
    message: `The model \`${model.id}\` is a chat model; embeddings need an embedding model` +
      (embedding.length === 0 ? " and this deployment has none" : ` (${embedding.join(", ")})`),
    field: "model"
  })
}

const aboveCeiling = (allowed: ModelTier, model: CatalogModel) =>
  new PolicyViolation({
    message: `The organization's policy allows models up to the ${allowed} tier; ${model.id} is ${model.tier}`,
    field: "model"
  })

/** The models to try, in order, for `target` under `ceiling` (see `MeteredCall.candidates`). */
export const candidatesOf = (
  catalog: Catalog,
  target: Target,
  ceiling: ModelTier | undefined
): Effect.Effect<ReadonlyArray<CatalogModel>, NotFound | PolicyViolation> =>
  Effect.gen(function*() {
    const allowed = ceiling ?? "premium"
    switch (target._tag) {
      case "Tier": {
        const models = catalog.forTier(tierRank[target.tier] > tierRank[allowed] ? allowed : target.tier)
        return models.length > 0 ? models : yield* modelNotFound(target.tier)
      }
      case "Embedding": {
        const model = catalog.find(target.id)
        if (Option.isNone(model)) return yield* modelNotFound(target.id)
        if (model.value.kind !== "embedding") return yield* notEmbedding(model.value, catalog)
        if (tierRank[model.value.tier] > tierRank[allowed]) return yield* aboveCeiling(allowed, model.value)
        return [model.value]
      }
      case "Model": {
        // An alias stands for a tier or a model (`Catalog.aliasOf`): resolved here, for every entry point.
        const alias = catalog.aliasOf(target.id)
        if (alias !== undefined) return yield* candidatesOf(catalog, isTier(alias) ? { _tag: "Tier", tier: alias } : { _tag: "Candidates", ids: [alias] }, ceiling)
        return yield* candidatesOf(catalog, { _tag: "Candidates", ids: [target.id] }, ceiling)
      }
      case "Candidates": {
        const ids = target.ids
        const models: Array<CatalogModel> = []
        for (const id of ids) {
          const model = catalog.find(id)
          if (Option.isNone(model)) return yield* modelNotFound(id)
          if (model.value.kind !== "chat") return yield* notChat(model.value)
          if (tierRank[model.value.tier] > tierRank[allowed]) return yield* aboveCeiling(allowed, model.value)
          models.push(model.value)
        }
        return models.length > 0 ? models : yield* modelNotFound("")
      }
    }
  })

/** The candidates whose provider can honour `options`, in order (see `MeteredCall.fitting`). */
export const fittingOf = (
  providers: ModelProviders,
  models: ReadonlyArray<CatalogModel>,
  options: CallOptions | undefined
): Effect.Effect<ReadonlyArray<CatalogModel>, InvalidRequest> => {
  // A provider that is not configured has no say here: the router skips it anyway.
  const refusals = models.map((model) =>
    Option.match(providers.get(model.provider), { onNone: () => undefined, onSome: (p) => refusalOf(p.kind, options) })
  )
  const fit = models.filter((_, i) => refusals[i] === undefined)
  // None fits only when every candidate refused, the first one included.
  const first = refusals[0]
  return fit.length > 0 || first === undefined
    ? Effect.succeed(fit)
    : Effect.fail(new InvalidRequest({ message: `${first.message} (asked of ${models[0]!.id})`, field: first.param }))
}
