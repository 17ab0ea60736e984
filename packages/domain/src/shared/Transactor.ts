/**
 * Runs a unit of work atomically: either every write inside it lands or none does.
 * Services use it when one operation spans several repositories.
 */
import { Context, type Effect } from "effect"

export interface Service {
  readonly atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export class Transactor extends Context.Tag("@huddle/domain/Transactor")<Transactor, Service>() {}
