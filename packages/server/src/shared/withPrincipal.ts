import { CurrentPrincipal, type Principal } from "@huddle/domain/identity/Principal"
import { Effect } from "effect"

/** Runs a domain call as the authenticated caller of the request. */
export const withPrincipal = <A, E, R>(f: (principal: Principal) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(CurrentPrincipal, f)
