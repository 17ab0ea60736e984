import { Context, Option } from "effect"
import type { CatalogModel, ModelCatalog } from "./Model.js"
import type { ModelTier } from "../settings/Preferences.js"

/** The deployment's model catalog: the single source for routing and for model listings. */
export interface Service {
  readonly models: ReadonlyArray<CatalogModel>
  /** The chat models of a tier, in the order they are tried (see `tierModels`); embedding models serve no tier. */
  readonly forTier: (tier: ModelTier) => ReadonlyArray<CatalogModel>
  readonly find: (id: string) => Option.Option<CatalogModel>
  /**
   * What a model name that is no catalog id stands for, by the catalog's aliases: a model id or
   * a tier (`undefined` when no alias matches). The one place aliases are resolved.
   */
  readonly aliasOf: (id: string) => string | undefined
}

/** A glob of an alias (`*`: any run of characters) as an anchored pattern. */
export const globPattern = (glob: string): RegExp =>
  new RegExp(`^${glob.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`)

/** The provider of the offline models (`OfflineProvider`). */
export const offlineProvider = "offline"

/** What decides which of a tier's models serve it. */
export interface Routing {
  /** Whether a provider other than `offline` is configured (has an entry in `ModelProviders`). */
  readonly configured: (provider: string) => boolean
  /**
   * `HUDDLE_OFFLINE_FALLBACK`: the offline models stand in, last, when every configured model of
   * the tier failed. Off (the default), a configured model that fails is the caller's 502.
   */
  readonly offlineFallback: boolean
}

/**
 * A tier's models, in the order they are tried. The one rule of when the offline model answers
 * (decision 0034): in a tier with a model of a configured provider, the offline models are not
 * that tier's answer but a stand-in for it, so they are left out, unless the operator opts into
 * them as the fallback (then they come last, after every configured model). A tier with no
 * configured model (no provider set up for it) is served by its offline models, as it always was.
 */
export const tierModels = (models: ReadonlyArray<CatalogModel>, routing: Routing): ReadonlyArray<CatalogModel> => {
  const offline = models.filter((model) => model.provider === offlineProvider)
  const others = models.filter((model) => model.provider !== offlineProvider)
  if (offline.length === 0 || !others.some((model) => routing.configured(model.provider))) return models
  return routing.offlineFallback ? [...others, ...offline] : others
}

export class Catalog extends Context.Tag("@huddle/domain/Catalog")<Catalog, Service>() {
  /** `routing` absent: every tier is its models in catalog order (a test's scripted catalog). */
  static fromCatalog(catalog: ModelCatalog, routing?: Routing): Service {
    const byId = new Map(catalog.models.map((model) => [model.id, model]))
    const byTier = new Map<ModelTier, ReadonlyArray<CatalogModel>>()
    const forTier = (tier: ModelTier) => {
      let models = byTier.get(tier)
      if (models === undefined) {
        const listed = catalog.models.filter((model) => model.tier === tier && model.kind === "chat")
        models = routing === undefined ? listed : tierModels(listed, routing)
        byTier.set(tier, models)
      }
      return models
    }
    const aliases = (catalog.aliases ?? []).map((alias) => ({ pattern: globPattern(alias.match), target: alias.target }))
    return {
      models: catalog.models,
      forTier,
      find: (id) => Option.fromNullable(byId.get(id)),
      aliasOf: (id) => byId.has(id) ? undefined : aliases.find((alias) => alias.pattern.test(id))?.target
    }
  }
}
