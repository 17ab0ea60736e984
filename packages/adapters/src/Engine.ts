/**
 * The Huddle engine without HTTP: the domain's services (`Domain.layer`) over storage, model
 * providers and the node adapters, as one layer. The HTTP server is built on it; another Node service can embed it
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
import { AccountSettings } from "@huddle/domain/accounts/AccountSettings"
import * as Council from "@huddle/domain/council/Council"
import * as ReservationExpiry from "@huddle/domain/credits/ReservationExpiry"
import * as Domain from "@huddle/domain/Domain"
import * as IndexJobs from "@huddle/domain/grounding/IndexJobs"
import type { RepositoryIndexer } from "@huddle/domain/grounding/RepositoryIndexer"
import * as InstanceLiveness from "@huddle/domain/instances/InstanceLiveness"
import { type Duration, Layer } from "effect"
import * as NodeSecretTokens from "./crypto/NodeSecretTokens.js"
import * as ScryptPasswordHasher from "./crypto/ScryptPasswordHasher.js"
import * as IndexerLive from "./grounding/IndexerLive.js"
import * as LexicalCodeSearch from "./grounding/LexicalCodeSearch.js"
import * as NodeRepositorySources from "./grounding/NodeRepositorySources.js"
import * as Catalog from "./models/Catalog.js"
import * as Providers from "./models/Providers.js"
import * as LeasedCreditStore from "./credits/LeasedCreditStore.js"
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
  const models = Catalog.layer(options.catalog ?? {}).pipe(
    // The catalog routes by the providers configured (decision 0034).
    Layer.provideMerge(Providers.layer(options.providers ?? {}))
  )
  const repositories = Layer.mergeAll(
    LexicalCodeSearch.layer,
    NodeRepositorySources.layer(options.grounding?.sources ?? { roots: [], cloneDir: ".huddle/repos" }),
    options.grounding?.indexer ?? IndexerLive.layer
  )
  const settings = Layer.mergeAll(
    Layer.succeed(AccountSettings, {
      starterCredits: options.starterCredits ?? AccountSettings.defaults.starterCredits,
      sessionTtl: options.sessionTtl ?? AccountSettings.defaults.sessionTtl,
      passwordResetTtl: AccountSettings.defaults.passwordResetTtl
    }),
    Layer.succeed(Council.CouncilSettings, { ...Council.CouncilSettings.defaultValue(), ...options.council }),
    Layer.succeed(IndexJobs.IndexJobSettings, { ...IndexJobs.defaults, ...options.grounding?.jobs }),
    Layer.succeed(ReservationExpiry.ReservationExpiry, { ...ReservationExpiry.defaults, ...options.reservationExpiry }),
    Layer.succeed(InstanceLiveness.InstanceLiveness, { ...InstanceLiveness.defaults, ...options.liveness })
  )
  return Domain.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(models, repositories)),
    Layer.provideMerge(infrastructure),
    Layer.provide(settings)
  )
}
