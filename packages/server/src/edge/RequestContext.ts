/**
 * The services a request runs with: what it reads, not everything the server was built from.
 *
 * Effect keeps a fiber's services in one map, its context, and every `provideService`,
 * `Effect.scoped`, `Scope.extend` or span made current copies the whole map. The platform's
 * `HttpApiBuilder.serve` starts each request with every service of the composition (some 70),
 * and `HttpApiBuilder.group` merges every service its layer was built among into each request
 * it handles, so a completion copied maps of 70–76 entries seven or eight times, more when its
 * trace was recorded (decision 0031). Here each piece is built among the services its type says
 * it needs and no others, and a request's context holds those alone.
 */
import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpPlatform from "@effect/platform/HttpPlatform"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Path from "@effect/platform/Path"
import { Context, Effect, Layer } from "effect"

type Identifiers<Tags extends ReadonlyArray<Context.Tag<any, any>>> = Context.Tag.Identifier<Tags[number]>

/**
 * `layer` built among the services `tags` name and no others. Its type checks that they are all
 * it needs; the layers it builds are shared with the rest of the composition (one memo map).
 */
export const isolated = <const Tags extends ReadonlyArray<Context.Tag<any, any>>>(...tags: Tags) =>
<A, E, R extends Identifiers<Tags>>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.scopedContext(Effect.gen(function*() {
    const context = yield* Effect.context<R>()
    const memoMap = yield* Layer.CurrentMemoMap
    const scope = yield* Effect.scope
    const kept = Context.pick(...tags)(context) as Context.Context<R>
    return yield* Effect.mapInputContext(Layer.buildWithMemoMap(layer, memoMap, scope), (_: Context.Context<never>) => kept)
  }))

/**
 * `HttpApiBuilder.serve`, its requests started with what the platform reads while answering (the
 * server and its `DefaultServices`) and what `middleware` reads, `reads`, rather than the whole
 * composition. What a handler reads comes with its group (`isolated`). A `Context.Reference`
 * read per request must be named in `reads`: its default needs no provider, so no type asks
 * for it, and without it the request would run with the default.
 */
export const serve = (reads: ReadonlyArray<Context.Tag<any, any>>, middleware: (app: HttpApp.Default) => HttpApp.Default) =>
  Layer.unwrapEffect(Effect.map(HttpApiBuilder.httpApp, (app) =>
    // The platform's serve passes its app on so too; what the app reads is kept below.
    HttpServer.serve(app as HttpApp.Default, middleware).pipe(
      isolated(HttpServer.HttpServer, HttpPlatform.HttpPlatform, Etag.Generator, FileSystem.FileSystem, Path.Path, ...reads)
    ))).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))
