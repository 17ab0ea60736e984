/**
 * The `CodeSearch` port over `LexicalIndex`: the index of a repository is built once per stored
 * version, from the stored snapshot (so any instance can answer), by Effect's `Cache`: concurrent
 * requests for one version share one build, and the least recently used indexes go first.
 * `LexicalIndex` (and MiniSearch under it) is loaded on the first search, not at start.
 */
import { CodeSearch, type Searchable } from "@huddle/domain/grounding/CodeSearch"
import { RepositoryStore } from "@huddle/domain/grounding/RepositoryStore"
import { Cache, Duration, Effect, Layer, Option } from "effect"

const lexicalIndex = Effect.promise(() => import("./LexicalIndex.js"))

/** Indexes kept in memory (a version superseded by a newer one ages out with the others). */
const kept = 8

export const make = Effect.gen(function*() {
  const store = yield* RepositoryStore
  const indexes = yield* Cache.make({
    capacity: kept,
    timeToLive: Duration.infinity,
    // Keyed `<repository>@<version>`: a new version is a new key, never a stale hit.
    lookup: (key: string) =>
      Effect.zipWith(store.snapshot(key.slice(0, key.lastIndexOf("@"))), lexicalIndex, (found, LexicalIndex) =>
        Option.map(found, (snapshot): Searchable => {
          const index = LexicalIndex.build(snapshot)
          return { snapshot, search: (question, options) => LexicalIndex.search(index, question, options) }
        }))
  })
  return CodeSearch.of({ open: (repositoryId, version) => indexes.get(`${repositoryId}@${version}`) })
})

export const layer = Layer.effect(CodeSearch, make)
