/**
 * Repository connections, index runs and stored snapshots on every engine of
 * `TestDatabase.availableEngines()`: a run writes only the rows of the paths that changed, the
 * stored snapshot reads back as the indexer made it, one job at a time indexes a repository
 * whichever runner kicks it, and a dead holder's lease lapses while its writes are refused.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync, mkdirSync } from "node:fs"
import { randomBytes } from "node:crypto"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { type ChangeFeed, NodeRepositorySources, Storage, UlidIds } from "@huddle/adapters"
import { gitUrlScheme } from "@huddle/adapters/grounding/GitUrls"
import { isPublicAddress } from "@huddle/adapters/grounding/PublicHosts"
import { Email, User, UserId } from "@huddle/domain/identity/User"
import { UserRepository } from "@huddle/domain/accounts/UserRepository"
import { Workspace } from "@huddle/domain/accounts/Workspace"
import { WorkspaceRepository } from "@huddle/domain/accounts/WorkspaceRepository"
import * as IndexJobs from "@huddle/domain/grounding/IndexJobs"
import { IndexProgress, IndexChanges, noProgress, RepositoryConnection } from "@huddle/domain/grounding/RepositoryConnection"
import { RepositoryIndexer } from "@huddle/domain/grounding/RepositoryIndexer"
import { RepositorySources } from "@huddle/domain/grounding/RepositorySources"
import { RepositoryStore } from "@huddle/domain/grounding/RepositoryStore"
import { Chunk, Definition, ImportEdge, IndexedFile, SkippedFile, Snapshot, TestLink } from "@huddle/domain/grounding/Snapshot"
import * as SnapshotDelta from "@huddle/domain/grounding/SnapshotDelta"
import { Ids } from "@huddle/domain/shared/Ids"
import { DirectoryIndexer, TestDatabase } from "@huddle/testkit"
import { addEqualityTesters, afterAll, describe, expect, it as test, layer } from "@effect/vitest"
import { DateTime, Duration, Effect, Layer, Logger, LogLevel, Option } from "effect"

addEqualityTesters()

const root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-store-roots-")))
const clones = mkdtempSync(join(tmpdir(), "huddle-store-clones-"))
afterAll(() => {
  rmSync(root, { recursive: true, force: true })
  rmSync(clones, { recursive: true, force: true })
})

const sources = NodeRepositorySources.make({ roots: [root], cloneDir: clones })
const fast: IndexJobs.Settings = { lease: Duration.seconds(30), pollEvery: Duration.hours(1), progressEvery: Duration.zero }

const write = (dir: string, files: Record<string, string>) => {
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(dir, file, ".."), { recursive: true })
    writeFileSync(join(dir, file), content)
  }
}

/** A user's personal workspace with a connection to a new directory under the root (not yet indexed). */
const connected = (files: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const user = new User({
      id: UserId.make(yield* ids.next("usr")),
      email: Email.make(`repo-${randomBytes(5).toString("hex")}@example.com`),
      created_at: DateTime.unsafeMake(0)
    })
    yield* (yield* UserRepository).create(user, "hash")
    const workspace = yield* (yield* WorkspaceRepository).ensurePersonal(
      new Workspace({ id: yield* ids.next("wsp"), owner_id: user.id, org_id: null, name: "Personal", personal: true, created_at: DateTime.unsafeMake(0) })
    )
    const dir = mkdtempSync(join(root, "repo-"))
    write(dir, files)
    const connection = new RepositoryConnection({
      id: yield* ids.next("rep"),
      workspace_id: workspace.id,
      source: "path",
      location: dir,
      status: "pending",
      error: null,
      progress: noProgress,
      changes: null,
      index_version: 0,
      requested: 1,
      served: 0,
      connected_by: user.id,
      connected_at: yield* DateTime.now,
      started_at: null,
      finished_at: null
    })
    yield* (yield* RepositoryStore).connect(connection)
    return { connection, dir, workspaceId: workspace.id }
  })

/** A job runner (one per instance, in production) with its own indexer. */
const runner = (indexer: RepositoryIndexer["Type"], settings: IndexJobs.Settings = fast) =>
  IndexJobs.make.pipe(
    Effect.provideService(RepositoryIndexer, indexer),
    Effect.provideServiceEffect(RepositorySources, sources),
    Effect.provideService(IndexJobs.IndexJobSettings, settings)
  )

/** Waits until every run asked for was served; the connection then. */
const settled = (repositoryId: string) =>
  Effect.gen(function*() {
    const store = yield* RepositoryStore
    for (let i = 0; i < 600; i++) {
      const found = yield* store.findById(repositoryId)
      if (Option.isSome(found) && found.value.served === found.value.requested && found.value.status !== "indexing") return found.value
      yield* Effect.sleep("25 millis")
    }
    return yield* Effect.dieMessage("index runs never settled")
  })

const rows = <A extends object>(text: string, repositoryId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text, [repositoryId]))

/** A scripted indexer: each run returns the next snapshot, taking `delay`; it counts runs and overlaps. */
const scripted = (snapshots: Array<Snapshot>, delay: Duration.DurationInput = 0) => {
  const state = { running: 0, most: 0, runs: 0 }
  const indexer: RepositoryIndexer["Type"] = {
    index: (_root, previous) =>
      Effect.gen(function*() {
        state.running++
        state.most = Math.max(state.most, state.running)
        state.runs++
        yield* Effect.sleep(delay)
        const snapshot = snapshots.length > 1 ? snapshots.shift()! : snapshots[0]!
        const before = new Map((previous?.files ?? []).map((file) => [file.path, file.hash]))
        return {
          snapshot,
          changed: {
            added: snapshot.files.filter((f) => !before.has(f.path)).map((f) => f.path),
            changed: snapshot.files.filter((f) => before.has(f.path) && before.get(f.path) !== f.hash).map((f) => f.path),
            removed: [...before.keys()].filter((path) => !snapshot.files.some((f) => f.path === path))
          }
        }
      }).pipe(Effect.ensuring(Effect.sync(() => state.running--)))
  }
  return { indexer, state }
}

const file = (path: string, hash: string, category: "source" | "test" = "source") =>
  new IndexedFile({ path, category, language: "typescript", lines: 3, bytes: 30, hash })

const counts = (repositoryId: string) =>
  Effect.gen(function*() {
    const out: Record<string, number> = {}
    for (const table of ["repository_files", "repository_skipped", "repository_chunks", "repository_definitions", "repository_imports", "repository_test_links"]) {
      const [row] = yield* rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE repository_id = $1`, repositoryId)
      out[table] = row!.n
    }
    return out
  })

const storageOver = <E>(database: Layer.Layer<SqlClient.SqlClient | ChangeFeed.ChangeFeed, E>) =>
  Storage.layer.pipe(
    Layer.provideMerge(UlidIds.layer),
    Layer.provideMerge(database),
    // Index runs log as they end; the tests read their outcome from storage.
    Layer.merge(Logger.minimumLogLevel(LogLevel.Warning))
  )

for (const engine of TestDatabase.availableEngines()) {
  layer(storageOver(TestDatabase.layer(engine)), { excludeTestServices: true })(`repositories in storage on ${engine}`, (it) => {
    it.scoped("stores a run, then rewrites only the changed file's rows, and forgets everything on disconnect", () =>
      Effect.gen(function*() {
        const store = yield* RepositoryStore
        const { connection, dir, workspaceId } = yield* connected({
          "src/a.ts": "export const a = 1\n",
          "src/b.ts": "export const b = 2\n",
          "test/a.test.ts": "import { a } from '../src/a'\n",
          "README.md": "# R\n"
        })
        const jobs = yield* runner(DirectoryIndexer.make())
        yield* jobs.kick(connection.id)
        const first = yield* settled(connection.id)
        expect(first).toMatchObject({ status: "ready", index_version: 1, changes: { added: 4, changed: 0, removed: 0 } })
        const direct = yield* DirectoryIndexer.make().index(dir, undefined, () => Effect.void)
        expect(yield* store.snapshot(connection.id)).toEqual(Option.some(SnapshotDelta.normalise(direct.snapshot)))
        const versions = () =>
          rows<{ path: string; indexed_version: number }>(
            `SELECT path, indexed_version FROM repository_files WHERE repository_id = $1 ORDER BY path COLLATE "C"`,
            connection.id
          )
        expect(yield* versions()).toEqual([
          { path: "README.md", indexed_version: 1 },
          { path: "src/a.ts", indexed_version: 1 },
          { path: "src/b.ts", indexed_version: 1 },
          { path: "test/a.test.ts", indexed_version: 1 }
        ])

        writeFileSync(join(dir, "src/a.ts"), "export const a = 42\n")
        yield* store.requestIndex(workspaceId)
        yield* jobs.kick(connection.id)
        expect(yield* settled(connection.id)).toMatchObject({ index_version: 2, changes: { added: 0, changed: 1, removed: 0 } })
        expect(yield* versions()).toEqual([
          { path: "README.md", indexed_version: 1 },
          { path: "src/a.ts", indexed_version: 2 },
          { path: "src/b.ts", indexed_version: 1 },
          { path: "test/a.test.ts", indexed_version: 1 }
        ])
        expect(yield* rows(`SELECT path, text FROM repository_chunks WHERE repository_id = $1 AND path = 'src/a.ts'`, connection.id))
          .toEqual([{ path: "src/a.ts", text: "export const a = 42\n" }])
        expect((yield* counts(connection.id)).repository_chunks).toBe(4)
        expect(yield* store.counts(connection.id)).toEqual({
          files: { total: 4, by_category: { config: 0, source: 2, test: 1, docs: 1 } },
          skipped: {
            total: 0,
            by_reason: { binary: 0, vendored: 0, generated: 0, minified: 0, lockfile: 0, too_large: 0, unreadable: 0, outside_root: 0 },
            paths: { binary: [], vendored: [], generated: [], minified: [], lockfile: [], too_large: [], unreadable: [], outside_root: [] }
          }
        })

        expect(yield* store.disconnect(workspaceId)).toBe(true)
        expect(yield* counts(connection.id)).toEqual({
          repository_files: 0,
          repository_skipped: 0,
          repository_chunks: 0,
          repository_definitions: 0,
          repository_imports: 0,
          repository_test_links: 0
        })
        expect(yield* store.find(workspaceId)).toEqual(Option.none())
      }))

    it.scoped("reads back definitions, imports, test links and skipped files as the indexer made them, changed as sets", () =>
      Effect.gen(function*() {
        const store = yield* RepositoryStore
        const v1 = new Snapshot({
          files: [file("src/a.ts", "a1"), file("src/b.ts", "b1"), file("test/a.test.ts", "t1", "test")],
          skipped: [new SkippedFile({ path: "logo.png", reason: "binary" }), new SkippedFile({ path: "dist/x.js", reason: "generated" })],
          chunks: [
            new Chunk({ path: "src/a.ts", start_line: 1, end_line: 2, text: "a1" }),
            new Chunk({ path: "src/a.ts", start_line: 2, end_line: 3, text: "a2" }),
            new Chunk({ path: "src/b.ts", start_line: 1, end_line: 3, text: "b" }),
            new Chunk({ path: "test/a.test.ts", start_line: 1, end_line: 3, text: "t" })
          ],
          definitions: [
            new Definition({ path: "src/a.ts", name: "a", kind: "function", line: 1, end_line: 2 }),
            new Definition({ path: "src/b.ts", name: "B", kind: "class", line: 1, end_line: 3 })
          ],
          imports: [new ImportEdge({ from: "test/a.test.ts", to: "src/a.ts" }), new ImportEdge({ from: "src/a.ts", to: "src/b.ts" })],
          links: [new TestLink({ source: "src/a.ts", test: "test/a.test.ts", via: "import" })]
        })
        // b changes; a's import of b goes; the test now also names b; the generated file is minified now.
        const v2 = new Snapshot({
          ...v1,
          files: [file("src/a.ts", "a1"), file("src/b.ts", "b2"), file("test/a.test.ts", "t1", "test")],
          skipped: [new SkippedFile({ path: "logo.png", reason: "binary" }), new SkippedFile({ path: "dist/x.js", reason: "minified" })],
          chunks: [...v1.chunks.filter((c) => c.path !== "src/b.ts"), new Chunk({ path: "src/b.ts", start_line: 1, end_line: 3, text: "b2" })],
          definitions: [v1.definitions[0]!, new Definition({ path: "src/b.ts", name: "C", kind: "interface", line: 2, end_line: 3 })],
          imports: [v1.imports[0]!],
          links: [...v1.links, new TestLink({ source: "src/b.ts", test: "test/a.test.ts", via: "name" })]
        })
        const { indexer } = scripted([v1, v2])
        const { connection, workspaceId } = yield* connected()
        const jobs = yield* runner(indexer)
        yield* jobs.kick(connection.id)
        yield* settled(connection.id)
        expect(yield* store.snapshot(connection.id)).toEqual(Option.some(SnapshotDelta.normalise(v1)))

        yield* store.requestIndex(workspaceId)
        yield* jobs.kick(connection.id)
        expect(yield* settled(connection.id)).toMatchObject({ index_version: 2, changes: { added: 0, changed: 1, removed: 0 } })
        expect(yield* store.snapshot(connection.id)).toEqual(Option.some(SnapshotDelta.normalise(v2)))
        expect(yield* rows(`SELECT path, indexed_version FROM repository_files WHERE repository_id = $1 ORDER BY path COLLATE "C"`, connection.id))
          .toEqual([{ path: "src/a.ts", indexed_version: 1 }, { path: "src/b.ts", indexed_version: 2 }, { path: "test/a.test.ts", indexed_version: 1 }])
        expect((yield* store.counts(connection.id)).skipped.by_reason).toMatchObject({ binary: 1, minified: 1, generated: 0 })

        // One file's row and the chunks that meet a range of lines, in order; nothing for a path not indexed.
        const read = (path: string, from: number, to: number) =>
          store.file(connection.id, path, { from, to }).pipe(
            Effect.map(Option.map(({ chunks, file }) => ({ file, chunks: chunks.map((c) => [c.start_line, c.end_line, c.text]) })))
          )
        expect(yield* read("src/a.ts", 2, 3)).toEqual(Option.some({ file: file("src/a.ts", "a1"), chunks: [[1, 2, "a1"], [2, 3, "a2"]] }))
        expect(yield* read("src/a.ts", 3, 10)).toEqual(Option.some({ file: file("src/a.ts", "a1"), chunks: [[2, 3, "a2"]] }))
        expect(yield* read("src/b.ts", 1, 1)).toEqual(Option.some({ file: file("src/b.ts", "b2"), chunks: [[1, 3, "b2"]] }))
        for (const path of ["logo.png", "src/none.ts", "src"]) expect(yield* read(path, 1, 3)).toEqual(Option.none())
      }))

    it.scoped("names the first 100 skipped paths of each reason in path order, beside how many there are", () =>
      Effect.gen(function*() {
        const store = yield* RepositoryStore
        // 105 images, listed from the last; a minified file; a vendored tree, reported once.
        const images = Array.from({ length: 105 }, (_, i) => `assets/img-${String(i).padStart(3, "0")}.png`)
        const snapshot = new Snapshot({
          files: [file("src/a.ts", "a1")],
          skipped: [
            ...[...images].reverse().map((path) => new SkippedFile({ path, reason: "binary" })),
            new SkippedFile({ path: "web/app.min.js", reason: "minified" }),
            new SkippedFile({ path: "node_modules/", reason: "vendored" })
          ],
          chunks: [new Chunk({ path: "src/a.ts", start_line: 1, end_line: 1, text: "a1" })],
          definitions: [],
          imports: [],
          links: []
        })
        const { indexer } = scripted([snapshot])
        const { connection } = yield* connected()
        const jobs = yield* runner(indexer)
        yield* jobs.kick(connection.id)
        yield* settled(connection.id)
        const { skipped } = yield* store.counts(connection.id)
        expect(skipped.total).toBe(107)
        expect(skipped.by_reason).toMatchObject({ binary: 105, minified: 1, vendored: 1, generated: 0 })
        expect(skipped.paths).toEqual({
          binary: images.slice(0, 100),
          vendored: ["node_modules/"],
          generated: [],
          minified: ["web/app.min.js"],
          lockfile: [],
          too_large: [],
          unreadable: [],
          outside_root: []
        })
      }))

    it.scoped("lets one job at a time index a repository, whichever runner is kicked, and serves every run asked for", () =>
      Effect.gen(function*() {
        const store = yield* RepositoryStore
        const empty = new Snapshot({ files: [], skipped: [], chunks: [], definitions: [], imports: [], links: [] })
        const { indexer, state } = scripted([empty], "150 millis")
        const { connection, workspaceId } = yield* connected()
        const [a, b] = [yield* runner(indexer), yield* runner(indexer)]
        for (let i = 0; i < 4; i++) {
          yield* Effect.all([a.kick(connection.id), b.kick(connection.id), a.kick(connection.id), b.pickUp], { concurrency: "unbounded" })
          yield* store.requestIndex(workspaceId)
          yield* Effect.sleep("60 millis")
        }
        yield* Effect.all([a.kick(connection.id), b.kick(connection.id)])
        const done = yield* settled(connection.id)
        expect(done).toMatchObject({ status: "ready", requested: 5, served: 5 })
        expect(state.most).toBe(1)
        // Runs asked for while one ran were served together: fewer runs than asks, more than one.
        expect(state.runs).toBeGreaterThan(1)
        expect(state.runs).toBeLessThanOrEqual(5)
        expect(done.index_version).toBe(state.runs)
      }))

    it.scoped("lets a dead holder's lease lapse, then another runner takes the run; the dead holder's writes are refused", () =>
      Effect.gen(function*() {
        const store = yield* RepositoryStore
        const empty = new Snapshot({ files: [], skipped: [], chunks: [], definitions: [], imports: [], links: [] })
        const { indexer, state } = scripted([empty])
        const { connection } = yield* connected()
        const dead = { repositoryId: connection.id, holder: "idx_dead", duration: Duration.millis(1500) }
        expect(Option.isSome(yield* store.claim(dead))).toBe(true)
        expect(yield* store.started(dead, yield* DateTime.now)).toBe(true)
        expect(yield* store.waiting).not.toContain(connection.id)

        const jobs = yield* runner(indexer)
        yield* jobs.kick(connection.id)
        yield* Effect.sleep("100 millis")
        expect(state.runs).toBe(0)
        expect((yield* store.findById(connection.id)).pipe(Option.map((c) => c.status))).toEqual(Option.some("indexing"))

        yield* Effect.sleep("1500 millis")
        expect(yield* store.waiting).toContain(connection.id)
        expect(yield* jobs.pickUp).toBeGreaterThanOrEqual(1)
        expect(yield* settled(connection.id)).toMatchObject({ status: "ready", index_version: 1, served: 1 })
        expect(state.runs).toBe(1)

        const run = { served: 1, progress: new IndexProgress({ seen: 0, indexed: 0, skipped: 0 }), changes: new IndexChanges({ added: 0, changed: 0, removed: 0 }), at: yield* DateTime.now }
        expect(yield* store.store(dead, { ...run, delta: SnapshotDelta.between(undefined, empty, { added: [], changed: [], removed: [] }) })).toBe(false)
        expect(yield* store.failed(dead, { served: 1, error: "late", at: yield* DateTime.now })).toBe(false)
        expect(yield* store.renew(dead)).toBe(false)
        expect((yield* store.findById(connection.id)).pipe(Option.map((c) => [c.status, c.index_version]))).toEqual(Option.some(["ready", 1]))
      }))
  })
}

describe("the git URLs a server clones", () => {
  const scheme = (url: string) => {
    const result = gitUrlScheme(url)
    return "scheme" in result ? result.scheme : "refused"
  }
  test("reads the scheme git would use, and refuses what git could take for an option or a helper", () => {
    expect(scheme("https://github.com/o/r.git")).toBe("https")
    expect(scheme("HTTP://example.com/r")).toBe("http")
    expect(scheme("ssh://git@example.com/r.git")).toBe("ssh")
    expect(scheme("git+ssh://git@example.com/r.git")).toBe("ssh")
    expect(scheme("git@github.com:o/r.git")).toBe("ssh")
    expect(scheme("file:///srv/r.git")).toBe("file")
    for (const url of ["ext::sh -c id", "ext::ssh", "fd::17", "-uhttps://x/y", "--upload-pack=touch /tmp/x", "ssh://-oProxyCommand=x/r", "-oProxyCommand=x:r", "/srv/r.git", "../r", "", "https:// x"]) {
      expect(scheme(url), url).toBe("refused")
    }
  })

  test("refuses a host it cannot check or that is this machine, in every form git reads, ssh's bracketed ones too", async () => {
    const sources = await Effect.runPromise(NodeRepositorySources.make({ roots: [], gitSchemes: ["https", "ssh"], cloneDir: tmpdir() }))
    const verdict = (url: string) =>
      Effect.runPromise(sources.checkGitUrl(url).pipe(Effect.match({ onFailure: (error) => error._tag, onSuccess: () => "accepted" })))
    for (
      const url of ["https://evil.localhost/x.git", "https://LOCALHOST./x.git", "https://no-such-host.invalid/x.git", "[::1]:repo", "[git@::1]:repo",
        "git@[::1]:repo", "git@127.0.0.1:repo", "ssh://git@[::1]/repo", "git@localhost:repo"]
    ) expect(await verdict(url), url).toBe("Forbidden")
  })

  test("takes only public addresses for a host, an IPv4 address written as IPv6 judged as IPv4", () => {
    for (const address of ["140.82.121.4", "8.8.8.8", "2606:4700::6810:84e5", "::ffff:140.82.121.4", "64:ff9b::8c52:7904", "64:ff9b::140.82.121.4", "2002:8c52:7904::1"]) {
      expect(isPublicAddress(address), address).toBe(true)
    }
    for (
      const address of ["127.0.0.1", "127.8.9.10", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
        "224.0.0.1", "::1", "::", "fe80::1", "fd12:3456::1", "::ffff:10.0.0.1", "::FFFF:127.0.0.1", "::ffff:7f00:1", "64:ff9b::a00:1",
        "64:ff9b::169.254.169.254", "64:FF9B:0:0:0:0:7f00:1", "2002:a00:1::", "2002:c0a8:101::5", "not an address"]
    ) expect(isPublicAddress(address), address).toBe(false)
  })
})
