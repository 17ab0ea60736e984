import { describe, expect, it } from "@effect/vitest"
import * as IndexJobs from "@huddle/domain/grounding/IndexJobs"
import { noProgress, RepositoryConnection } from "@huddle/domain/grounding/RepositoryConnection"
import { IndexFailed, RepositoryIndexer } from "@huddle/domain/grounding/RepositoryIndexer"
import { RepositorySources } from "@huddle/domain/grounding/RepositorySources"
import { RepositoryStore } from "@huddle/domain/grounding/RepositoryStore"
import { IndexedFile, Snapshot } from "@huddle/domain/grounding/Snapshot"
import * as InMemoryPorts from "@huddle/testkit/ports/InMemoryPorts"
import * as InMemoryRepositoryStore from "@huddle/testkit/ports/InMemoryRepositoryStore"
import { DateTime, Duration, Effect, Layer, Logger, LogLevel, Option } from "effect"

const snapshotOf = (...hashes: Array<string>) =>
  new Snapshot({
    files: hashes.map((hash, i) => new IndexedFile({ path: `f${i}.ts`, category: "source", language: "typescript", lines: 1, bytes: 1, hash })),
    skipped: [],
    chunks: [],
    definitions: [],
    imports: [],
    links: []
  })

/** Each run answers with the next outcome: a snapshot, or a failure. */
const scripted = (outcomes: Array<Snapshot | string>) =>
  Layer.succeed(RepositoryIndexer, {
    index: () => {
      const next = outcomes.shift()
      return next === undefined || typeof next === "string"
        ? Effect.fail(new IndexFailed({ message: next ?? "no more outcomes" }))
        : Effect.succeed({ snapshot: next, changed: { added: [], changed: [], removed: [] } })
    }
  })

const sources = Layer.succeed(RepositorySources, {
  checkPath: Effect.succeed,
  checkGitUrl: Effect.succeed,
  checkout: () => Effect.succeed("/repo"),
  prune: () => Effect.void
})

const settings: IndexJobs.Settings = { lease: Duration.millis(300), pollEvery: Duration.hours(1), progressEvery: Duration.zero }

const connection = (id: string) =>
  new RepositoryConnection({
    id,
    workspace_id: `wsp_${id}`,
    source: "path",
    location: "/repo",
    status: "pending",
    error: null,
    progress: noProgress,
    changes: null,
    index_version: 0,
    requested: 1,
    served: 0,
    connected_by: null,
    connected_at: DateTime.unsafeMake(0),
    started_at: null,
    finished_at: null
  })

const settled = (id: string) =>
  Effect.gen(function*() {
    const store = yield* RepositoryStore
    for (let i = 0; i < 200; i++) {
      const found = Option.getOrThrow(yield* store.findById(id))
      if (found.requested === found.served && found.status !== "indexing") return found
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.dieMessage("never settled")
  })

const withJobs = (outcomes: Array<Snapshot | string>) =>
  <A, E>(test: (jobs: IndexJobs.Service) => Effect.Effect<A, E, RepositoryStore>) =>
    Effect.gen(function*() {
      const jobs = yield* IndexJobs.make
      return yield* test(jobs)
    }).pipe(
      Effect.provideService(IndexJobs.IndexJobSettings, settings),
      Effect.provide(Layer.mergeAll(InMemoryRepositoryStore.layer, InMemoryPorts.ids, sources, scripted(outcomes))),
      Effect.scoped,
      Logger.withMinimumLogLevel(LogLevel.Error)
    )

describe("index jobs", () => {
  it.live("record a failed run with the indexer's message and keep the snapshot stored before", () =>
    withJobs([snapshotOf("a"), "The repository is too large", snapshotOf("a", "b")])((jobs) =>
      Effect.gen(function*() {
        const store = yield* RepositoryStore
        yield* store.connect(connection("rep_1"))
        yield* jobs.kick("rep_1")
        expect(yield* settled("rep_1")).toMatchObject({ status: "ready", index_version: 1, error: null })
        yield* store.requestIndex("wsp_rep_1")
        yield* jobs.kick("rep_1")
        expect(yield* settled("rep_1")).toMatchObject({ status: "failed", index_version: 1, error: "The repository is too large", served: 2 })
        expect(Option.map(yield* store.snapshot("rep_1"), (s) => s.files.map((f) => f.hash))).toEqual(Option.some(["a"]))
        // The next run goes on from the snapshot kept.
        yield* store.requestIndex("wsp_rep_1")
        yield* jobs.kick("rep_1")
        expect(yield* settled("rep_1")).toMatchObject({ status: "ready", error: null, index_version: 2, changes: { added: 1, changed: 0, removed: 0 } })
      })
    ))

  it.live("wait out a lease held by a dead job, then take the run; the dead job's writes are refused", () =>
    withJobs([snapshotOf("a")])((jobs) =>
      Effect.gen(function*() {
        const store = yield* RepositoryStore
        yield* store.connect(connection("rep_2"))
        const dead = { repositoryId: "rep_2", holder: "idx_dead", duration: Duration.millis(1000) }
        expect(Option.isSome(yield* store.claim(dead))).toBe(true)
        yield* jobs.kick("rep_2")
        yield* Effect.sleep("50 millis")
        expect(yield* jobs.pickUp).toBe(0)
        expect(Option.getOrThrow(yield* store.findById("rep_2")).served).toBe(0)
        yield* Effect.sleep("1000 millis")
        expect(yield* jobs.pickUp).toBe(1)
        expect(yield* settled("rep_2")).toMatchObject({ status: "ready", index_version: 1 })
        expect(yield* store.started(dead, DateTime.unsafeMake(0))).toBe(false)
        expect(yield* store.renew(dead)).toBe(false)
      })
    ))
})
