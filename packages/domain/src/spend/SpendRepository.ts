import { Context, type Effect } from "effect"
import type { SpendPage, SpendQuery } from "./SpendQuery.js"

/** Which ledger rows a query reads: the whole deployment's, or those of one org's requests. */
export type SpendScope = { readonly _tag: "Deployment" } | { readonly _tag: "Org"; readonly orgId: string }

export interface Service {
  /**
   * Groups the ledger's reservation rows in `[from, to)` by the query's keys, ordered by them;
   * `tiers` names the tier of each model (and each tier itself) the catalog knows.
   */
  readonly query: (
    scope: SpendScope,
    query: SpendQuery,
    tiers: ReadonlyArray<readonly [name: string, tier: string]>
  ) => Effect.Effect<SpendPage>
}

export class SpendRepository extends Context.Tag("@huddle/domain/SpendRepository")<SpendRepository, Service>() {}
