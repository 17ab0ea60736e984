/**
 * The API reference page (`/docs`): Scalar, inlined by the platform, so that the page needs
 * nothing from another host. Two things of the bundle would still reach out: its default fonts
 * (Inter and JetBrains Mono from Scalar's CDN; turned off, the page uses the system's) and its
 * `sourceMappingURL`, a map that is not shipped (developer tools ask for it and get a 404; the
 * comment is dropped from the page).
 */
import { HttpApiBuilder, HttpApiScalar, HttpBody, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"

export const path = "/docs"

const sourceMapComment = /\n\/\/# sourceMappingURL=[^\n<]*/g

/** The page is one static body: cleaned once, by identity of what the platform serves. */
const cleaned = new WeakMap<Uint8Array, Uint8Array>()

const withoutSourceMap = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  const body = response.body
  if (body._tag !== "Uint8Array") return response
  let page = cleaned.get(body.body)
  if (page === undefined) {
    page = new TextEncoder().encode(new TextDecoder().decode(body.body).replace(sourceMapComment, ""))
    cleaned.set(body.body, page)
  }
  return HttpServerResponse.setBody(response, HttpBody.uint8Array(page, body.contentType))
}

export const layer = Layer.mergeAll(
  HttpApiScalar.layer({ path, scalar: { layout: "modern", withDefaultFonts: false } }),
  HttpApiBuilder.middleware((app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      request.method === "GET" && request.url.split("?")[0] === path ? Effect.map(app, withoutSourceMap) : app
    )
  )
)
