/** Time-ordered ids (ULIDs, monotonic within a millisecond) with a readable prefix. */
import { Ids } from "@huddle/domain/Ids"
import { Effect, Layer } from "effect"
import { monotonicFactory } from "ulid"

export const make = Effect.sync(() => {
  const next = monotonicFactory()
  return Ids.of({ next: (kind) => Effect.sync(() => `${kind}_${next().toLowerCase()}`) })
})

export const layer = Layer.effect(Ids, make)
