/**
 * Client routes in the URL's fragment (`/#/keys`): the server serves one page at `/` and needs
 * no fallback for the console's paths. A route may carry more path segments and a query
 * (`#/sessions/<id>`, `#/files/<workspace>/<path>?lines=12-30`): the page reads them with
 * `useLocation`.
 */
import { useEffect, useState } from "preact/hooks"

export const routes = ["login", "signup", "account", "keys", "sessions", "reviews", "memories", "repository", "files", "orgs", "org", "members", "policies", "pool", "audit"] as const
export type Route = (typeof routes)[number]

/** The pages that need a session, and those that make no sense with one. */
export const signedInOnly: ReadonlyArray<Route> = ["account", "keys", "sessions", "reviews", "memories", "repository", "files", "orgs", "org", "members", "policies", "pool", "audit"]

/** The address of a page, with more path segments (each encoded) and a query. */
export const href = (route: Route, segments: ReadonlyArray<string> = [], query?: Readonly<Record<string, string>>): string => {
  const path = [route, ...segments.map(encodeURIComponent)].join("/")
  const search = query === undefined ? "" : new URLSearchParams(query).toString()
  return `#/${path}${search === "" ? "" : `?${search}`}`
}

export const go = (route: Route, segments?: ReadonlyArray<string>, query?: Readonly<Record<string, string>>): void => {
  location.hash = href(route, segments, query).slice(1)
}

/** Goes without leaving the page it replaces in the history (a redirect). */
export const redirect = (route: Route): void => {
  location.replace(href(route))
}

/** Where the fragment points: the page's name, the segments after it, the query. */
export interface Place {
  readonly page: string
  readonly segments: ReadonlyArray<string>
  readonly query: URLSearchParams
}

const place = (): Place => {
  const fragment = location.hash.replace(/^#\/?/, "")
  const at = fragment.indexOf("?")
  const [path, search] = at < 0 ? [fragment, ""] : [fragment.slice(0, at), fragment.slice(at + 1)]
  const [page = "", ...rest] = path.split("/")
  let segments: ReadonlyArray<string>
  try {
    segments = rest.map(decodeURIComponent)
  } catch {
    segments = rest
  }
  return { page, segments, query: new URLSearchParams(search) }
}

const current = (): Route | "" | null => {
  const { page } = place()
  if (page === "") return ""
  return (routes as ReadonlyArray<string>).includes(page) ? (page as Route) : null
}

const useHash = <A>(read: () => A): A => {
  const [value, setValue] = useState(read)
  useEffect(() => {
    const update = () => setValue(read())
    addEventListener("hashchange", update)
    // The address may have changed between the first render and now, with nobody listening.
    update()
    return () => removeEventListener("hashchange", update)
  }, [])
  return value
}

/** The route in the address bar: a page, `""` for none, `null` for one that does not exist. */
export const useRoute = (): Route | "" | null => useHash(current)

/** The whole place in the address bar, for pages that take segments or a query. */
export const useLocation = (): Place => useHash(place)
