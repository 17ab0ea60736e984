/**
 * The domain's `Credits` service over real storage, for tests of money: property tests,
 * concurrency within one process, and `bin/reserveMany` for concurrency across processes.
 */
import { type ChangeFeed, Storage, UlidIds } from "@huddle/adapters"
import * as Credits from "@huddle/domain/services/Credits"
import { Layer } from "effect"

/** `Credits` plus every storage port (`CreditStore`, `AuditLog`, …), over the given database layer (see `Database.layer`). */
export const layer = <E, R>(database: Layer.Layer<import("@effect/sql").SqlClient.SqlClient | ChangeFeed.ChangeFeed, E, R>) =>
  Credits.layer.pipe(
    Layer.provideMerge(Storage.layer),
    Layer.provideMerge(UlidIds.layer),
    Layer.provideMerge(database)
  )
