/**
 * Client routes in the URL's fragment (`/#/keys`): the server serves one page at `/` and needs
 * no fallback for the console's paths.
 */
import { useEffect, useState } from "preact/hooks"

export const routes = ["login", "signup", "account", "keys"] as const
export type Route = (typeof routes)[number]

/** The pages that need a session, and those that make no sense with one. */
export const signedInOnly: ReadonlyArray<Route> = ["account", "keys"]

export const href = (route: Route): string => `#/${route}`

export const go = (route: Route): void => {
  location.hash = `/${route}`
}

/** Goes without leaving the page it replaces in the history (a redirect). */
export const redirect = (route: Route): void => {
  location.replace(href(route))
}

const current = (): Route | "" | null => {
  const path = location.hash.replace(/^#\/?/, "")
  if (path === "") return ""
  return (routes as ReadonlyArray<string>).includes(path) ? (path as Route) : null
}

/** The route in the address bar: a page, `""` for none, `null` for one that does not exist. */
export const useRoute = (): Route | "" | null => {
  const [route, setRoute] = useState(current)
  useEffect(() => {
    const update = () => setRoute(current())
    addEventListener("hashchange", update)
    return () => removeEventListener("hashchange", update)
  }, [])
  return route
}
