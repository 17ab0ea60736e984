import { Context, Option } from "effect"
import type { CatalogModel, ModelCatalog } from "./Model.js"
import type { ModelTier } from "../accounts/Preferences.js"

/** The deployment's model catalog: the single source for routing and for model listings. */
export interface Service {
  readonly models: ReadonlyArray<CatalogModel>
  /** The models of a tier, in the order they are tried. */
  readonly forTier: (tier: ModelTier) => ReadonlyArray<CatalogModel>
  readonly find: (id: string) => Option.Option<CatalogModel>
}

export class Catalog extends Context.Tag("@huddle/domain/Catalog")<Catalog, Service>() {
  static fromCatalog(catalog: ModelCatalog): Service {
    const byId = new Map(catalog.models.map((model) => [model.id, model]))
    return {
      models: catalog.models,
      forTier: (tier) => catalog.models.filter((model) => model.tier === tier),
      find: (id) => Option.fromNullable(byId.get(id))
    }
  }
}
