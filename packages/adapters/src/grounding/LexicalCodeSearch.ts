/**
 * The `CodeSearch` port over `LexicalIndex`: the index of a repository is built once per
 * stored version, from the stored snapshot (so any instance can answer), and kept while that
 * version is current. A few repositories are kept; the least recently used goes first.
 */
import { CodeSearch, type Searchable } from "@huddle/domain/grounding/CodeSearch"
import { RepositoryStore } from "@huddle/domain/grounding/RepositoryStore"
import { Effect, Layer, Option } from "effect"
import * as LexicalIndex from "./LexicalIndex.js"

/** Repositories whose index is kept in memory. */
const kept = 8

export const make = Effect.gen(function*() {
  const store = yield* RepositoryStore
  const cache = new Map<string, { readonly version: number; readonly searchable: Searchable }>()
  // One build per repository and version, however many requests ask at once.
  const building = new Map<string, Promise<Option.Option<Searchable>>>()

  const build = (repositoryId: string) =>
    Effect.map(store.snapshot(repositoryId), Option.map((snapshot): Searchable => {
      const index = LexicalIndex.build(snapshot)
      return { snapshot, search: (question, options) => LexicalIndex.search(index, question, options) }
    }))

  const open = (repositoryId: string, version: number): Effect.Effect<Option.Option<Searchable>> =>
    Effect.suspend(() => {
      const hit = cache.get(repositoryId)
      if (hit !== undefined && hit.version === version) {
        cache.delete(repositoryId)
        cache.set(repositoryId, hit)
        return Effect.succeed(Option.some(hit.searchable))
      }
      const key = `${repositoryId}@${version}`
      const pending = building.get(key)
      if (pending !== undefined) return Effect.promise(() => pending)
      const promise = Effect.runPromise(build(repositoryId)).then((found) => {
        building.delete(key)
        if (Option.isSome(found)) {
          cache.delete(repositoryId)
          cache.set(repositoryId, { version, searchable: found.value })
          while (cache.size > kept) cache.delete(cache.keys().next().value!)
        }
        return found
      }, (error: unknown) => {
        building.delete(key)
        throw error
      })
      building.set(key, promise)
      return Effect.promise(() => promise)
    })

  return CodeSearch.of({ open })
})

export const layer = Layer.effect(CodeSearch, make)
