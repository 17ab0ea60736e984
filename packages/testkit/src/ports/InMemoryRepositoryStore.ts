/**
 * Repository connections and snapshots in memory, for domain tests: the same lease rules as the
 * SQL store (a lease lapses at its expiry, by the Effect clock, so `TestClock` moves it), the
 * snapshot kept whole and changed by the same delta the SQL store applies.
 */
import {
  IndexChanges,
  IndexProgress,
  RepositoryConnection,
  skippedPathsShown,
  type SnapshotCounts
} from "@huddle/domain/grounding/RepositoryConnection"
import { type Lease, RepositoryStore } from "@huddle/domain/grounding/RepositoryStore"
import { FileCategory, SkipReason, type Snapshot } from "@huddle/domain/grounding/Snapshot"
import * as SnapshotDelta from "@huddle/domain/grounding/SnapshotDelta"
import { Clock, Duration, Effect, Layer, Option } from "effect"

interface Held {
  readonly holder: string
  readonly expiresAt: number
}

export const layer = Layer.sync(RepositoryStore, () => {
  const connections = new Map<string, RepositoryConnection>()
  const snapshots = new Map<string, Snapshot>()
  const leases = new Map<string, Held>()

  const byWorkspace = (workspaceId: string) => [...connections.values()].find((c) => c.workspace_id === workspaceId)
  const update = (id: string, change: Partial<RepositoryConnection>) => {
    const current = connections.get(id)
    if (current !== undefined) connections.set(id, new RepositoryConnection({ ...current, ...change }, { disableValidation: true }))
  }
  const remove = (id: string) => {
    connections.delete(id)
    snapshots.delete(id)
    leases.delete(id)
  }
  const live = (id: string, now: number) => {
    const held = leases.get(id)
    return held !== undefined && held.expiresAt >= now ? held : undefined
  }
  const holds = (lease: Lease) => connections.has(lease.repositoryId) && leases.get(lease.repositoryId)?.holder === lease.holder
  const withNow = <A>(f: (now: number) => A) => Effect.map(Clock.currentTimeMillis, f)
  const take = (lease: Lease, now: number) =>
    leases.set(lease.repositoryId, { holder: lease.holder, expiresAt: now + Duration.toMillis(lease.duration) })

  const counts = (snapshot: Snapshot | undefined): SnapshotCounts => {
    const by = <K extends string>(keys: ReadonlyArray<K>, values: ReadonlyArray<K>) => {
      const out = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>
      for (const value of values) out[value]++
      return out
    }
    const files = snapshot?.files ?? []
    const skipped = snapshot?.skipped ?? []
    const inOrder = [...skipped].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    const paths = Object.fromEntries(SkipReason.literals.map((reason) => [
      reason,
      inOrder.filter((s) => s.reason === reason).slice(0, skippedPathsShown).map((s) => s.path)
    ])) as Record<SkipReason, Array<string>>
    return {
      files: { total: files.length, by_category: by(FileCategory.literals, files.map((f) => f.category)) },
      skipped: { total: skipped.length, by_reason: by(SkipReason.literals, skipped.map((s) => s.reason)), paths }
    }
  }

  return RepositoryStore.of({
    connect: (connection) =>
      Effect.sync(() => {
        const previous = byWorkspace(connection.workspace_id)
        if (previous !== undefined) remove(previous.id)
        connections.set(connection.id, connection)
      }),
    disconnect: (workspaceId) =>
      Effect.sync(() => {
        const found = byWorkspace(workspaceId)
        if (found !== undefined) remove(found.id)
        return found !== undefined
      }),
    find: (workspaceId) => Effect.sync(() => Option.fromNullable(byWorkspace(workspaceId))),
    findById: (id) => Effect.sync(() => Option.fromNullable(connections.get(id))),
    findMany: (workspaceIds) => Effect.sync(() => [...connections.values()].filter((c) => workspaceIds.includes(c.workspace_id))),
    requestIndex: (workspaceId) =>
      withNow((now) => {
        const found = byWorkspace(workspaceId)
        if (found === undefined) return Option.none()
        const running = found.status === "indexing" && live(found.id, now) !== undefined
        update(found.id, { requested: found.requested + 1, status: running ? "indexing" : "pending" })
        return Option.fromNullable(connections.get(found.id))
      }),
    waiting: withNow((now) =>
      [...connections.values()].filter((c) => c.requested > c.served && live(c.id, now) === undefined).map((c) => c.id).sort()
    ),
    ids: Effect.sync(() => [...connections.keys()]),

    claim: (lease) =>
      withNow((now) => {
        const found = connections.get(lease.repositoryId)
        if (found === undefined || found.requested <= found.served) return Option.none()
        const held = live(lease.repositoryId, now)
        if (held !== undefined && held.holder !== lease.holder) return Option.none()
        take(lease, now)
        return Option.some(found)
      }),
    renew: (lease) =>
      withNow((now) => {
        if (!holds(lease)) return false
        take(lease, now)
        return true
      }),
    releaseIfIdle: (lease) =>
      Effect.sync(() => {
        const found = connections.get(lease.repositoryId)
        if (!holds(lease) || found === undefined || found.requested > found.served) return false
        leases.delete(lease.repositoryId)
        return true
      }),
    release: (lease) => Effect.sync(() => void (holds(lease) && leases.delete(lease.repositoryId))),

    started: (lease, at) =>
      Effect.sync(() => {
        if (!holds(lease)) return false
        update(lease.repositoryId, { status: "indexing", error: null, progress: new IndexProgress({ seen: 0, indexed: 0, skipped: 0 }), started_at: at })
        return true
      }),
    progress: (lease, progress) => Effect.sync(() => void (holds(lease) && update(lease.repositoryId, { progress }))),
    store: (lease, run) =>
      Effect.sync(() => {
        const found = connections.get(lease.repositoryId)
        if (!holds(lease) || found === undefined) return false
        snapshots.set(found.id, SnapshotDelta.apply(snapshots.get(found.id), run.delta))
        update(found.id, {
          status: "ready",
          error: null,
          index_version: found.index_version + 1,
          served: run.served,
          progress: run.progress,
          changes: new IndexChanges(run.changes),
          finished_at: run.at
        })
        return true
      }),
    failed: (lease, run) =>
      Effect.sync(() => {
        if (!holds(lease)) return false
        update(lease.repositoryId, { status: "failed", error: run.error, served: run.served, finished_at: run.at })
        return true
      }),

    snapshot: (id) => Effect.sync(() => Option.fromNullable(snapshots.get(id))),
    counts: (id) => Effect.sync(() => counts(snapshots.get(id))),
    file: (id, path, range) =>
      Effect.sync(() => {
        const snapshot = snapshots.get(id)
        const file = snapshot?.files.find((f) => f.path === path)
        if (snapshot === undefined || file === undefined) return Option.none()
        const chunks = snapshot.chunks.filter((c) => c.path === path && c.start_line <= range.to && c.end_line >= range.from)
        return Option.some({ file, chunks })
      })
  })
})
