/**
 * Index runs, in the background of whichever instance takes them. Connecting or re-indexing a
 * repository starts a job at once on the instance that was asked; besides, every instance looks
 * periodically for repositories that want a run and that nobody holds (a run asked for while
 * this instance was busy, or one whose instance died: its lease lapses), so no request is lost.
 *
 * A job holds the repository's lease (`RepositoryStore`) for as long as it runs, renewing it;
 * only one job indexes a repository at a time, on any number of instances. Runs asked for while
 * one runs are served by running once more when it ends. A job that loses its lease (its
 * instance paused longer than the lease) stops, and its writes are refused.
 */
import { Cause, Context, DateTime, Duration, Effect, FiberSet, Layer, Option, Schedule } from "effect"
import { Ids } from "../shared/Ids.js"
import { IndexChanges, IndexProgress, type RepositoryConnection } from "./RepositoryConnection.js"
import { type Progress, RepositoryIndexer } from "./RepositoryIndexer.js"
import { RepositorySources } from "./RepositorySources.js"
import { type Lease, RepositoryStore } from "./RepositoryStore.js"
import * as SnapshotDelta from "./SnapshotDelta.js"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"
import { traced } from "../observability/Traced.js"

export interface Settings {
  /** How long a lease lasts unless renewed (it is renewed every third of it). */
  readonly lease: Duration.Duration
  /** How often each instance looks for runs nobody took. */
  readonly pollEvery: Duration.Duration
  /** The least time between two progress writes of a run. */
  readonly progressEvery: Duration.Duration
}

export const defaults: Settings = {
  lease: Duration.seconds(60),
  pollEvery: Duration.seconds(5),
  progressEvery: Duration.millis(250)
}

export class IndexJobSettings extends Context.Reference<IndexJobSettings>()("@huddle/domain/IndexJobSettings", {
  defaultValue: () => defaults
}) {}

export interface Service {
  /** Starts a job for the repository in the background; it ends at once if another holds the repository. */
  readonly kick: (repositoryId: string) => Effect.Effect<void>
  /** Starts jobs for every repository that wants a run and that nobody holds; how many were started. */
  readonly pickUp: Effect.Effect<number>
}

export class IndexJobs extends Context.Tag("@huddle/domain/IndexJobs")<IndexJobs, Service>() {}

const unexpected = "Indexing stopped on an unexpected error"

export const make = Effect.gen(function*() {
  const store = yield* RepositoryStore
  const sources = yield* RepositorySources
  const indexer = yield* RepositoryIndexer
  const ids = yield* Ids
  const settings = yield* IndexJobSettings
  const metrics = yield* Metrics.Metrics
  const fibers = yield* FiberSet.make()

  /** Records progress, at most once per `progressEvery` (the indexer may report per file). */
  const progressRecorder = (lease: Lease) =>
    Effect.map(Effect.sync(() => ({ last: Number.NEGATIVE_INFINITY })), (state) => (progress: Progress) =>
      Effect.flatMap(DateTime.now, (now) => {
        const at = DateTime.toEpochMillis(now)
        if (at - state.last < Duration.toMillis(settings.progressEvery)) return Effect.void
        state.last = at
        return store.progress(lease, new IndexProgress(progress))
      }))

  const runOnce = (lease: Lease, connection: RepositoryConnection) =>
    Effect.gen(function*() {
      const served = connection.requested
      if (!(yield* store.started(lease, yield* DateTime.now))) return
      const record = yield* progressRecorder(lease)
      const outcome = yield* Effect.gen(function*() {
        const root = yield* sources.checkout(connection)
        const previous = connection.index_version > 0 ? Option.getOrUndefined(yield* store.snapshot(connection.id)) : undefined
        const indexed = yield* indexer.index(root, previous, record)
        return { previous, indexed }
      }).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.zipRight(
            Effect.logError("repository indexing failed unexpectedly", Cause.die(defect)).pipe(
              Effect.annotateLogs("repository_id", connection.id)
            ),
            Effect.fail<{ readonly message: string }>({ message: unexpected })
          )
        ),
        Effect.either
      )
      const at = yield* DateTime.now
      if (outcome._tag === "Left") {
        yield* Effect.logWarning("repository indexing failed").pipe(
          Effect.annotateLogs({ repository_id: connection.id, error: outcome.left.message })
        )
        yield* store.failed(lease, { served, error: outcome.left.message, at })
        metrics.add(Instruments.indexBuilds, { outcome: "failed" })
        return
      }
      const { indexed, previous } = outcome.right
      const delta = SnapshotDelta.between(previous, indexed.snapshot, indexed.changed)
      const { files, skipped } = indexed.snapshot
      const stored = yield* store.store(lease, {
        delta,
        served,
        progress: new IndexProgress({ seen: files.length + skipped.length, indexed: files.length, skipped: skipped.length }),
        changes: new IndexChanges(delta.changes),
        at
      })
      if (stored) {
        metrics.add(Instruments.indexBuilds, { outcome: "indexed" })
        metrics.add(Instruments.filesIndexed, {}, files.length)
      }
      yield* Effect.logInfo(stored ? "repository indexed" : "repository index run discarded: its lease was lost").pipe(
        Effect.annotateLogs({ repository_id: connection.id, files: files.length, skipped: skipped.length, ...delta.changes })
      )
    })

  /** Completes when the lease is lost; renews it every third of its duration until then. */
  const keepLease = (lease: Lease) =>
    Effect.sleep(Duration.unsafeDivide(lease.duration, 3)).pipe(
      Effect.zipRight(store.renew(lease)),
      Effect.repeat({ while: (held) => held }),
      Effect.zipRight(Effect.logWarning("repository lease lost; the index run stops").pipe(
        Effect.annotateLogs("repository_id", lease.repositoryId)
      ))
    )

  const job = (repositoryId: string) =>
    Effect.gen(function*() {
      const lease: Lease = { repositoryId, holder: yield* ids.next("idx"), duration: settings.lease }
      let claimed = yield* store.claim(lease)
      if (Option.isNone(claimed)) return
      yield* Effect.gen(function*() {
        while (Option.isSome(claimed)) {
          yield* Effect.raceFirst(runOnce(lease, claimed.value), keepLease(lease))
          if (yield* store.releaseIfIdle(lease)) return
          claimed = yield* store.claim(lease)
        }
      }).pipe(Effect.ensuring(store.release(lease)))
    }).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.void
          : Effect.logError("repository index job failed", cause).pipe(Effect.annotateLogs("repository_id", repositoryId))
      )
    )

  const kick: Service["kick"] = (repositoryId) => Effect.asVoid(FiberSet.run(fibers, job(repositoryId)))

  const pickUp: Service["pickUp"] = Effect.gen(function*() {
    const waiting = yield* store.waiting
    for (const id of waiting) yield* kick(id)
    yield* sources.prune(new Set(yield* store.ids))
    return waiting.length
  })

  return IndexJobs.of(traced("IndexJobs", { kick, pickUp }))
})

/**
 * The jobs, and the look for waiting runs (at once, then every `pollEvery`), for as long as the
 * layer lives; its end interrupts the jobs, whose leases are given back for another instance.
 */
export const layer = Layer.scoped(
  IndexJobs,
  Effect.gen(function*() {
    const jobs = yield* make
    const { pollEvery } = yield* IndexJobSettings
    const look = jobs.pickUp.pipe(Effect.catchAllCause((cause) => Effect.logError("looking for waiting index runs failed", cause)))
    yield* Effect.forkScoped(Effect.repeat(look, Schedule.spaced(pollEvery)))
    return jobs
  })
)
