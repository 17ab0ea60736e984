/**
 * The API reference page (`/docs`): Scalar, inlined, so that the page needs nothing from another
 * host. Two things of the bundle would still reach out: its default fonts (Inter and JetBrains
 * Mono from Scalar's CDN; turned off, the page uses the system's) and its `sourceMappingURL`, a
 * map that is not shipped (developer tools would ask for it and get a 404; the comment is
 * dropped from the page).
 *
 * The bundle is the one `@effect/platform` ships for `HttpApiScalar`, about 6 MB of JavaScript
 * held as a string: loaded on the first request for the page, not at start, so that a server
 * whose reference nobody opens does not keep it in memory (docs/performance.md, memory at start).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"

export const path = "/docs"

/** What Scalar is told: the modern layout, and the system's fonts rather than its CDN's. */
const configuration = { _integration: "html", layout: "modern", withDefaultFonts: false }

const sourceMapComment = /\n\/\/# sourceMappingURL=[^\n<]*/g

/** JSON that cannot end the `<script>` it is written into, nor break a JavaScript string. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")

const html = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/**
 * Scalar's bundle, from the module beside the platform's `HttpApiScalar` (which would load it at
 * start: it inlines the bundle into its page when its layer is built).
 */
const loadScalar = async (): Promise<string> => {
  const scalarModule = createRequire(import.meta.url).resolve("@effect/platform/HttpApiScalar")
  const bundle = (await import(pathToFileURL(join(dirname(scalarModule), "internal", "httpApiScalar.js")).href)) as {
    readonly javascript?: unknown
  }
  if (typeof bundle.javascript !== "string") throw new Error("@effect/platform ships no Scalar bundle where expected")
  return bundle.javascript
}

const page = (spec: OpenApi.OpenAPISpec, javascript: string) =>
  new TextEncoder().encode(`<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${html(spec.info.title)}</title>
    ${spec.info.description ? `<meta name="description" content="${html(spec.info.description)}"/>` : ""}
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" type="application/json">
      ${scriptJson(spec)}
    </script>
    <script>
      document.getElementById('api-reference').dataset.configuration = JSON.stringify(${scriptJson(configuration)})
    </script>
    <script>${javascript.replace(sourceMapComment, "")}</script>
  </body>
</html>`)

/** `GET /docs`: the page, made once when first asked for (a failed attempt is tried again next time). */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { api } = yield* HttpApi.Api
    let made: Promise<Uint8Array> | undefined
    const body = () =>
      made ??= loadScalar().then((javascript) => page(OpenApi.fromApi(api), javascript)).catch((error: unknown) => {
        made = undefined
        throw error
      })
    yield* router.get(path, Effect.map(Effect.promise(body), (page) => HttpServerResponse.uint8Array(page, { contentType: "text/html; charset=utf-8" })))
  })
)
