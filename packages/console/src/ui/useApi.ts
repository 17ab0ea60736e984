/** Calls from a page: with the session's token, back to the login page when it is refused. */
import type { Effect, Either } from "effect"
import { useCallback, useEffect, useState } from "preact/hooks"
import { call, type Client, type Problem } from "../api.js"
import { useSession } from "../session.js"

export type Use<A> = (client: Client) => Effect.Effect<A, unknown>

/** Runs a call; a refused session ends here (the app then shows the login page). */
export const useApi = () => {
  const session = useSession()
  return useCallback(async <A>(use: Use<A>): Promise<Either.Either<A, Problem>> => {
    const result = await call(session.token, use)
    if (result._tag === "Left" && result.left.signedOut) {
      session.end({ message: "Your session has ended. Log in again." })
    }
    return result
  }, [session.token])
}

export type Resource<A> =
  | { readonly _tag: "Loading" }
  | { readonly _tag: "Failed"; readonly problem: Problem }
  | { readonly _tag: "Loaded"; readonly value: A }

/**
 * What a page shows, loaded when it opens; `reload` fetches it again and keeps showing what was
 * there until the new answer arrives.
 */
export const useResource = <A>(use: Use<A>): readonly [Resource<A>, () => Promise<void>] => {
  const api = useApi()
  const [state, setState] = useState<Resource<A>>({ _tag: "Loading" })
  const reload = useCallback(async () => {
    const result = await api(use)
    setState(result._tag === "Right" ? { _tag: "Loaded", value: result.right } : { _tag: "Failed", problem: result.left })
    // `use` is the page's own, the same for the page's life.
  }, [api])
  useEffect(() => {
    void reload()
  }, [reload])
  return [state, reload]
}
