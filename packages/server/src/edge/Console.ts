/**
 * The web console (`/` and `/assets/…`): the single-page app `@huddle/console` builds into its
 * `dist/` (docs/decisions/0023-web-console.md). Its files are read once, when the server starts,
 * and served from memory by name: no request path reaches the file system, so there is nothing
 * to traverse. The page is revalidated on every load (`no-cache`) and the assets, fingerprinted,
 * are cached for good. Without a build, `/` says how to make one.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, extname, join } from "node:path"
import { gzipSync } from "node:zlib"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"

interface Asset {
  readonly body: Uint8Array
  /** The same, gzipped once here: the script is most of the page's weight. */
  readonly gzipped: Uint8Array
  readonly contentType: string
}

export type Site =
  | { readonly _tag: "Built"; readonly page: Uint8Array; readonly assets: ReadonlyMap<string, Asset> }
  | { readonly _tag: "Unbuilt"; readonly reason: string }

const contentTypes: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2"
}

/** Where `@huddle/console` is installed: found as Node finds the package, wherever that is. */
export const builtDirectory = (): string | undefined => {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("@huddle/console/package.json")), "dist")
  } catch {
    return undefined
  }
}

/** The built console in `directory`, or why there is none. */
export const read = (directory: string | undefined): Site => {
  if (directory === undefined) return { _tag: "Unbuilt", reason: "the package @huddle/console is not installed" }
  const index = join(directory, "index.html")
  if (!existsSync(index)) return { _tag: "Unbuilt", reason: "it has not been built" }
  const folder = join(directory, "assets")
  const names = existsSync(folder) ? readdirSync(folder, { withFileTypes: true }).filter((entry) => entry.isFile()) : []
  const assets = new Map(names.map(({ name }) => {
    const body = readFileSync(join(folder, name))
    return [name, { body, gzipped: gzipSync(body), contentType: contentTypes[extname(name)] ?? "application/octet-stream" }] as const
  }))
  return { _tag: "Built", page: readFileSync(index), assets }
}

/** The page may load only what its own origin serves, and may not be framed. */
export const contentSecurityPolicy = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

const pageHeaders = {
  "cache-control": "no-cache",
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const unbuiltPage = (reason: string) =>
  `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Huddle: the console is not built</title></head>
<body>
<h1>The web console is not built</h1>
<p>The server runs, but ${reason}. Run <code>npm run build</code> in the repository, then restart the server.</p>
<p>The API is served under <a href="/v1/openapi.json">/v1</a>; its reference is at <a href="/docs">/docs</a>.</p>
</body>
</html>
`

const acceptsGzip = (request: HttpServerRequest.HttpServerRequest) =>
  /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")

const index = (site: Site) =>
  site._tag === "Built"
    ? HttpServerResponse.uint8Array(site.page, { contentType: "text/html; charset=utf-8", headers: pageHeaders })
    : HttpServerResponse.text(unbuiltPage(site.reason), {
      status: 503,
      contentType: "text/html; charset=utf-8",
      headers: { ...pageHeaders, "cache-control": "no-store" }
    })

const asset = (site: Site) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { file } = yield* HttpRouter.params
    const found = site._tag === "Built" && file !== undefined ? site.assets.get(file) : undefined
    // A name that is not an asset is a path the server does not serve: the edge's 404 envelope.
    if (found === undefined) return yield* new HttpServerError.RouteNotFound({ request })
    const gzip = acceptsGzip(request)
    return HttpServerResponse.uint8Array(gzip ? found.gzipped : found.body, {
      contentType: found.contentType,
      headers: {
        "cache-control": "public, max-age=31536000, immutable",
        "x-content-type-options": "nosniff",
        vary: "accept-encoding",
        ...(gzip ? { "content-encoding": "gzip" } : {})
      }
    })
  })

/** The console's routes over what was read. */
export const routes = (site: Site) =>
  HttpRouter.empty.pipe(
    HttpRouter.get("/", Effect.succeed(index(site))),
    HttpRouter.get("/assets/:file", asset(site))
  )

/** Adds the console to the server's router, read from where `@huddle/console` is installed. */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(Effect.sync(() => read(builtDirectory())), (site) => router.concat(routes(site)))
)
