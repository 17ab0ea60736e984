/**
 * A layer built `isolated` sees the services it names and no others, and shares what it builds
 * with the rest of the composition: a layer it builds that another also builds is built once.
 */
import { describe, expect, it } from "@effect/vitest"
import * as RequestContext from "@huddle/server/edge/RequestContext"
import { Context, Effect, Layer, Option } from "effect"

class Needed extends Context.Tag("test/Needed")<Needed, { readonly name: string }>() {}
class Unnamed extends Context.Tag("test/Unnamed")<Unnamed, { readonly name: string }>() {}
class Seen extends Context.Tag("test/Seen")<Seen, { readonly needed: string; readonly unnamed: boolean; readonly shared: number }>() {}
class Shared extends Context.Tag("test/Shared")<Shared, { readonly instance: number }>() {}

describe("RequestContext.isolated", () => {
  it.effect("builds a layer among the services it names alone, sharing the layers both sides build", () =>
    Effect.gen(function*() {
      let builds = 0
      const shared = Layer.sync(Shared, () => ({ instance: ++builds }))
      // What the layer saw while it was built, and what a request it serves would see: it
      // captures its context as the platform's groups do.
      const seeing = Layer.effect(
        Seen,
        Effect.gen(function*() {
          const needed = yield* Needed
          const context = yield* Effect.context<never>()
          const { instance } = yield* Shared
          return { needed: needed.name, unnamed: Option.isSome(Context.getOption(context, Unnamed)), shared: instance }
        })
      ).pipe(Layer.provide(shared))
      const outer = Layer.mergeAll(Layer.succeed(Needed, { name: "needed" }), Layer.succeed(Unnamed, { name: "unnamed" }), shared)

      const [seen, both] = yield* Effect.all([Seen, Shared]).pipe(
        Effect.provide(Layer.merge(RequestContext.isolated(Needed)(seeing), shared).pipe(Layer.provide(outer)))
      )
      expect(seen.needed).toBe("needed")
      expect(seen.unnamed).toBe(false)
      expect(seen.shared).toBe(both.instance)
      expect(builds).toBe(1)

      // Without it, the same layer sees the whole composition.
      const plain = yield* Seen.pipe(Effect.provide(seeing.pipe(Layer.provide(outer))))
      expect(plain.unnamed).toBe(true)
    }))
})
