/**
 * The Huddle engine without HTTP: every domain service over storage, model providers and the
 * node adapters, as one layer. The HTTP server is built on it; another Node service can embed it
 * (see docs/embedding.md).
 *
 * ```ts
 * const engine = Engine.layer({ storage: { _tag: "Pglite", dataDir: ".huddle" } })
 * const program = Effect.gen(function*() {
 *   const accounts = yield* Accounts.Accounts
 *   const huddles = yield* Huddles.Huddles
 *   // …
 * })
 * Effect.runPromise(Effect.provide(program, engine))
 * ```
 */
import * as Accounts from "@huddle/domain/accounts/Accounts"
import { AccountSettings } from "@huddle/domain/accounts/AccountSettings"
import * as ApiKeys from "@huddle/domain/accounts/ApiKeys"
import * as Authentication from "@huddle/domain/accounts/Authentication"
import * as Completions from "@huddle/domain/models/Completions"
import * as ContextAssembly from "@huddle/domain/memories/ContextAssembly"
import * as Credits from "@huddle/domain/credits/Credits"
import * as Huddles from "@huddle/domain/huddle/Huddles"
import * as IntentPipeline from "@huddle/domain/huddle/IntentPipeline"
import * as InstanceLiveness from "@huddle/domain/instances/InstanceLiveness"
import * as Intents from "@huddle/domain/huddle/Intents"
import * as Memories from "@huddle/domain/memories/Memories"
import * as MeteredCall from "@huddle/domain/models/MeteredCall"
import * as Council from "@huddle/domain/council/Council"
import * as IndexerLive from "./grounding/IndexerLive.js"
import * as LexicalCodeSearch from "./grounding/LexicalCodeSearch.js"
import * as Grounding from "@huddle/domain/grounding/Grounding"
import * as Operator from "@huddle/domain/operator/Operator"
import * as Spend from "@huddle/domain/spend/Spend"
import * as OrgAccess from "@huddle/domain/orgs/OrgAccess"
import * as Organizations from "@huddle/domain/orgs/Organizations"
import * as OrgCredits from "@huddle/domain/orgs/OrgCredits"
import * as OrgSettings from "@huddle/domain/orgs/OrgSettings"
import * as RequestScope from "@huddle/domain/request/RequestScope"
import * as ReservationExpiry from "@huddle/domain/credits/ReservationExpiry"
import * as IntentExpiry from "@huddle/domain/huddle/IntentExpiry"
import * as Router from "@huddle/domain/models/Router"
import * as Workspaces from "@huddle/domain/workspaces/Workspaces"
import * as IndexJobs from "@huddle/domain/grounding/IndexJobs"
import * as Repositories from "@huddle/domain/grounding/Repositories"
import type { RepositoryIndexer } from "@huddle/domain/grounding/RepositoryIndexer"
import { type Duration, Layer } from "effect"
import * as NodeSecretTokens from "./crypto/NodeSecretTokens.js"
import * as ScryptPasswordHasher from "./crypto/ScryptPasswordHasher.js"
import * as NodeRepositorySources from "./grounding/NodeRepositorySources.js"
import * as Catalog from "./models/Catalog.js"
import * as Providers from "./models/Providers.js"
import * as LeasedCreditStore from "./repositories/LeasedCreditStore.js"
import * as SqlIdempotencyStore from "./repositories/SqlIdempotencyStore.js"
import * as Database from "./sql/Database.js"
import * as Storage from "./Storage.js"
import * as UlidIds from "./UlidIds.js"

export interface Options {
  /** Where data lives: PostgreSQL (`{ _tag: "Postgres", url }`) or embedded PGlite. */
  readonly storage: Database.Engine
  /** Personal credits for new accounts (default 1000). */
  readonly starterCredits?: number | undefined
  readonly sessionTtl?: Duration.Duration | undefined
  /** Model providers; the offline provider is always there. */
  readonly providers?: Providers.Options | undefined
  /** The model catalog; default: the offline models (and those of configured providers). */
  readonly catalog?: Catalog.Options | undefined
  /** When credit reservations left held (a crashed process) are given back; default 30 min, checked every minute. */
  readonly reservationExpiry?: Partial<ReservationExpiry.Settings> | undefined
  /** How often instances heartbeat, and when a silent one is taken for lost; default 10 s and 30 s. */
  readonly liveness?: Partial<InstanceLiveness.Settings> | undefined
  /** Credit leases (decisions 0021, 0028): on, with a 100 ms tick, by default. */
  readonly creditLeases?: Partial<LeasedCreditStore.Settings> | undefined
  /** Council seats and deadline (default 3 seats, 120 s). */
  readonly council?: Partial<Council.Settings> | undefined
  /** Connected repositories: where they may come from, how they are indexed. */
  readonly grounding?: GroundingOptions | undefined
}

export interface GroundingOptions {
  /** Allowed roots and git schemes, and where clones go; default: no roots, `https`, `.huddle/repos`. */
  readonly sources?: NodeRepositorySources.Options | undefined
  /** The indexer; default: `grounding/Indexer` (files from git or a walk, tree-sitter definitions). */
  readonly indexer?: Layer.Layer<RepositoryIndexer> | undefined
  /** Leases and polling of index runs (default: 60 s leases, a look every 5 s). */
  readonly jobs?: Partial<IndexJobs.Settings> | undefined
}

/** Every service of `@huddle/domain`, ready to use; the database is migrated when it starts. */
export const layer = (options: Options) => {
  const infrastructure = Layer.mergeAll(Storage.layer, SqlIdempotencyStore.layer, ScryptPasswordHasher.layer, NodeSecretTokens.layer).pipe(
    Layer.provide(Layer.succeed(LeasedCreditStore.CreditLeases, { ...LeasedCreditStore.defaults, ...options.creditLeases })),
    Layer.provideMerge(UlidIds.layer),
    Layer.provideMerge(Database.layer(options.storage))
  )
  const settings = Layer.succeed(AccountSettings, {
    starterCredits: options.starterCredits ?? AccountSettings.defaults.starterCredits,
    sessionTtl: options.sessionTtl ?? AccountSettings.defaults.sessionTtl,
    passwordResetTtl: AccountSettings.defaults.passwordResetTtl
  })
  const organizations = Layer.mergeAll(Organizations.layer, OrgSettings.layer, OrgCredits.layer, Credits.layer).pipe(
    Layer.provideMerge(OrgAccess.layer)
  )
  const memories = Layer.mergeAll(Memories.layer, ContextAssembly.layer)
  const models = Council.layerWith(options.council ?? {}).pipe(
    Layer.provideMerge(MeteredCall.layer),
    Layer.provideMerge(Router.layer),
    // The catalog routes by the providers configured (decision 0034).
    Layer.provideMerge(Catalog.layer(options.catalog ?? {})),
    Layer.provideMerge(Providers.layer(options.providers ?? {}))
  )
  const huddles = Intents.layer.pipe(
    Layer.provideMerge(Huddles.layer),
    Layer.provideMerge(Layer.merge(IntentPipeline.layer, Completions.layer)),
    Layer.provideMerge(models),
    Layer.provideMerge(Grounding.layer.pipe(Layer.provideMerge(LexicalCodeSearch.layer))),
    Layer.provideMerge(RequestScope.layer)
  )
  const expiry = Layer.merge(ReservationExpiry.layer, IntentExpiry.layer).pipe(
    Layer.provide(Layer.succeed(ReservationExpiry.ReservationExpiry, { ...ReservationExpiry.defaults, ...options.reservationExpiry }))
  )
  const liveness = InstanceLiveness.layer.pipe(
    Layer.provide(Layer.succeed(InstanceLiveness.InstanceLiveness, { ...InstanceLiveness.defaults, ...options.liveness }))
  )
  const grounding = Layer.mergeAll(Repositories.layer, Workspaces.layer).pipe(
    Layer.provideMerge(IndexJobs.layer),
    Layer.provide(Layer.succeed(IndexJobs.IndexJobSettings, { ...IndexJobs.defaults, ...options.grounding?.jobs })),
    Layer.provideMerge(NodeRepositorySources.layer(options.grounding?.sources ?? { roots: [], cloneDir: ".huddle/repos" })),
    Layer.provideMerge(options.grounding?.indexer ?? IndexerLive.layer)
  )
  return Layer.mergeAll(Operator.layer, Spend.layer, ApiKeys.layer, Authentication.layer, expiry, liveness).pipe(
    Layer.provideMerge(Accounts.layer),
    Layer.provideMerge(huddles),
    Layer.provideMerge(memories),
    Layer.provideMerge(grounding),
    Layer.provideMerge(organizations),
    Layer.provideMerge(infrastructure),
    Layer.provide(settings)
  )
}
