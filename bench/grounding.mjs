#!/usr/bin/env node
/**
 * Code grounding on a large repository (`npm run bench` runs it as its "grounding" section, in a
 * process of its own; alone: `node bench/grounding.mjs` after `npx tsc -b`, 30 to 40 s). A
 * repository of 5,000+ files is generated in a temporary directory (bench/lib/syntheticRepo.mjs:
 * TypeScript, JavaScript, Python and Go sources of 2 to 12 KB importing one another, tests
 * importing them, docs, configuration, a lockfile, a vendored tree, a gitignored node_modules/;
 * the same for the same seed) and committed with git, then:
 *
 * 1. full indexing (`Indexer.indexRepository`, as `IndexerLive` runs it), git listing the files,
 *    first in this process (so the tree-sitter runtime and grammars load as on a server's first
 *    run); then once more by walking the directory (no git), for reference. Target ≤ 10 s.
 *    The indexer runs on one thread: wall time is one core's; CPU is `process.cpuUsage()`
 *    (V8's helper threads included, git's own few milliseconds not);
 * 2. memory: the heap and RSS the snapshot keeps (after a full GC), the peak RSS, and the
 *    snapshot's size as JSON and as chunk text;
 * 3. the lexical index build (`LexicalIndex.build`), time and the heap it keeps;
 * 4. retrieval latency over ~200 generated questions (where is X defined, what does this path
 *    do, which tests cover Y, prose), as the pipeline asks them: focused (8 files, the budget of
 *    a 32k-token model) judged, target p95 ≤ 50 ms, and deep (80 files, a 128k model) for
 *    reference. As a check that the figures are of a working search, the share of "where is X
 *    defined" and "what does <path> do" questions whose file is among the files returned;
 * 5. re-indexing after a one-file change, given the previous snapshot (median of 3 edits of one
 *    source file), target ≤ 1 s;
 * 6. storage through `SqlRepositoryStore` on PGlite in a new data directory (as an embedded
 *    server runs it): storing the first snapshot, and the re-index job after a one-file change
 *    as `IndexJobs` runs it (read the stored snapshot, index, compute the delta, store it); then
 *    what the first question after it waits for (`LexicalCodeSearch`: read the new version,
 *    build its index, search). `--no-store` leaves this out.
 *
 * Options: --files N (sources, tests, docs and configuration to generate, 5000; the repository
 * holds a few hundred files more: packages' own files, what is skipped) --seed N (1) --questions N
 * (200) --no-store --no-walk --keep (keep the repository and the data directory) --json FILE
 * (write the results) --clock-offset MS (added to the log's clock, so that `npm run bench` keeps
 * one clock).
 * Exit status: 0 when the measurement ran (targets met or not); 1 when it could not run or the
 * indexer or the store did something else than expected (a wrong change set, a lost write).
 */
import { execFileSync } from "node:child_process"
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Indexer, LexicalIndex } from "@huddle/adapters/grounding/index"
import { print } from "./lib/groundingReport.mjs"
import { generate } from "./lib/syntheticRepo.mjs"

export const targets = { fullIndexMs: 10_000, retrievalP95Ms: 50, reindexMs: 1_000 }

/** How the pipeline searches (Grounding.ts): focused, a fifth of a 32k model; deep, 45 % of a 128k model. */
const modes = {
  focused: { budgetTokens: Math.floor(32_000 * 0.2), maxFiles: 8 },
  deep: { budgetTokens: Math.floor(128_000 * 0.45), maxFiles: 80 }
}

// A full collection between measurements, whether or not node was started with --expose-gc.
setFlagsFromString("--expose-gc")
const gc = globalThis.gc ?? runInNewContext("gc")

const heap = () => {
  gc()
  gc()
  const m = process.memoryUsage()
  return { heapUsed: m.heapUsed, external: m.external, rss: m.rss }
}
const peakRss = () => process.resourceUsage().maxRSS * 1024

/** Wall and CPU time of `f` (awaited). */
const timed = async (f) => {
  const cpu = process.cpuUsage()
  const t = performance.now()
  const value = await f()
  const wallMs = performance.now() - t
  const used = process.cpuUsage(cpu)
  return { value, wallMs, cpuMs: (used.user + used.system) / 1000 }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]

const sizeOnDisk = (dir) => {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    total += entry.isDirectory() ? sizeOnDisk(path) : statSync(path).size
  }
  return total
}

/** Questions of the shapes people ask, about what the generator wrote; `expect`: the file that answers it, when one does. */
const questionsFor = (repo, count, seed) => {
  let state = (seed * 7919) >>> 0 || 1
  const random = () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4294967296
  }
  const pick = (list) => list[Math.floor(random() * list.length)]
  const casing = (m, ws) => (m.language === "python" ? ws.join("_") : m.language === "go" ? ws.map((w) => w[0].toUpperCase() + w.slice(1)).join("") : ws.map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join(""))
  const words = (m) => m.topic.join(" ")
  const shapes = [
    () => {
      const m = pick(repo.modules)
      return { shape: "definition", text: `where is \`${casing(m, pick(m.names.functions))}\` defined?`, expect: m.path }
    },
    () => {
      const m = pick(repo.modules)
      return { shape: "definition", text: `how does ${m.names.class} handle the ${words(pick(repo.modules))}?`, expect: m.path }
    },
    () => {
      const m = pick(repo.modules)
      return { shape: "path", text: `what does ${m.path} do?`, expect: m.path }
    },
    () => {
      const t = pick(repo.tests)
      const m = repo.modules.find((x) => x.path === t.source)
      return { shape: "tests", text: `which tests cover ${casing(m, m.names.functions[0])}?` }
    },
    () => {
      const a = pick(repo.modules)
      const b = pick(repo.modules)
      return { shape: "why", text: `why does ${casing(a, pick(a.names.functions))} call ${casing(b, pick(b.names.functions))} when the ${words(b)} fails` }
    },
    () => ({ shape: "prose", text: `how are ${words(pick(repo.modules))} and ${words(pick(repo.modules))} retried after a timeout` })
  ]
  return Array.from({ length: count }, (_, i) => shapes[i % shapes.length]())
}

const latencies = (index, questions, options) => {
  const times = []
  let answered = 0
  let expected = 0
  for (const q of questions) {
    const t = performance.now()
    const result = LexicalIndex.search(index, q.text, options)
    times.push(performance.now() - t)
    if (q.expect !== undefined) {
      expected++
      if (result.files.includes(q.expect)) answered++
    }
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), p99: percentile(times, 0.99), max: times[times.length - 1], found: expected === 0 ? NaN : answered / expected, expected }
}

/** The measurement; `log` prints progress. */
export const measure = async ({ files = 5000, seed = 1, questions: questionCount = 200, store = true, walk = true, keep = false, log = console.log } = {}) => {
  const problems = []
  const work = mkdtempSync(join(tmpdir(), "huddle-grounding-bench-"))
  const dir = join(work, "repo")
  try {
    // 1. The repository, committed.
    mkdirSync(dir)
    const generated = await timed(() => generate(dir, { files, seed }))
    const repo = generated.value
    const git = (...args) => execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", ...args], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] })
    const committed = await timed(() => {
      git("init", "-q")
      git("add", "-A")
      git("commit", "-q", "-m", "generated")
    })
    log(`grounding: generated ${repo.counts.files} files (${(repo.counts.bytes / 1e6).toFixed(1)} MB; ${repo.counts.tracked} committed, ${repo.counts.ignored} gitignored) in ${(generated.wallMs / 1000).toFixed(1)} s, committed in ${(committed.wallMs / 1000).toFixed(1)} s`)

    // 2. Full index, git listing the files; memory around it.
    const before = heap()
    const full = await timed(() => Indexer.indexRepository(dir, {}))
    const snapshot = full.value.snapshot
    const after = heap()
    const peakAfterIndex = peakRss()
    if (full.value.source !== "git") problems.push(`the indexer walked the directory instead of asking git (source ${full.value.source})`)
    const chunkTextBytes = snapshot.chunks.reduce((n, c) => n + Buffer.byteLength(c.text), 0)
    const snapshotJsonBytes = Buffer.byteLength(JSON.stringify(snapshot))
    const shape = {
      indexed: snapshot.files.length,
      skipped: snapshot.skipped.length,
      skippedReasons: snapshot.skipped.reduce((by, s) => ({ ...by, [s.reason]: (by[s.reason] ?? 0) + 1 }), {}),
      chunks: snapshot.chunks.length,
      definitions: snapshot.definitions.length,
      imports: snapshot.imports.length,
      links: snapshot.links.length
    }
    log(`grounding: full index (git) ${(full.wallMs / 1000).toFixed(2)} s, CPU ${(full.cpuMs / 1000).toFixed(2)} s: ${shape.indexed} files, ${shape.skipped} skipped, ${shape.chunks} chunks, ${shape.definitions} definitions, ${shape.imports} imports, ${shape.links} test links`)
    const walked = walk ? await timed(() => Indexer.indexRepository(dir, { useGit: false })) : undefined
    if (walked) {
      log(`grounding: full index (directory walk) ${(walked.wallMs / 1000).toFixed(2)} s, CPU ${(walked.cpuMs / 1000).toFixed(2)} s: ${walked.value.snapshot.files.length} files`)
      if (walked.value.snapshot.files.length !== snapshot.files.length) problems.push(`the walk indexed ${walked.value.snapshot.files.length} files, git's listing ${snapshot.files.length}`)
    }

    // 3. The lexical index.
    const beforeBuild = heap()
    const built = await timed(() => LexicalIndex.build(snapshot))
    const index = built.value
    const afterBuild = heap()
    log(`grounding: lexical index built in ${(built.wallMs / 1000).toFixed(2)} s (CPU ${(built.cpuMs / 1000).toFixed(2)} s), heap +${((afterBuild.heapUsed - beforeBuild.heapUsed) / 1e6).toFixed(0)} MB`)

    // 4. Retrieval.
    const questions = questionsFor(repo, questionCount, seed)
    for (const q of questions.slice(0, 20)) LexicalIndex.search(index, q.text, modes.focused)
    const focused = latencies(index, questions, modes.focused)
    const deep = latencies(index, questions, modes.deep)
    log(`grounding: ${questions.length} questions, focused p50 ${focused.p50.toFixed(1)} ms p95 ${focused.p95.toFixed(1)} ms; deep p50 ${deep.p50.toFixed(1)} ms p95 ${deep.p95.toFixed(1)} ms`)

    // 5. Re-indexing after a one-file change, from the previous snapshot.
    const edited = repo.modules.find((m) => m.language === "typescript" && statSync(join(dir, m.path)).size > 6000).path
    const reindexRuns = []
    let previous = snapshot
    for (let i = 0; i < 3; i++) {
      appendFileSync(join(dir, edited), `\nexport const benchEdit${i} = (value: number): number => value * ${i + 2}\n`)
      const run = await timed(() => Indexer.indexRepository(dir, { previous }))
      const { changes, reparsed } = run.value
      if (changes.changed.length !== 1 || changes.changed[0] !== edited || changes.added.length + changes.removed.length !== 0 || reparsed.length !== 1) {
        problems.push(`re-index after editing ${edited}: changes ${JSON.stringify(changes)}, reparsed ${reparsed.length}`)
      }
      reindexRuns.push({ wallMs: run.wallMs, cpuMs: run.cpuMs })
      previous = run.value.snapshot
    }
    const reindex = { edited, runs: reindexRuns, wallMs: median(reindexRuns.map((r) => r.wallMs)), cpuMs: median(reindexRuns.map((r) => r.cpuMs)), maxMs: Math.max(...reindexRuns.map((r) => r.wallMs)) }
    log(`grounding: re-index after a one-file change ${reindexRuns.map((r) => `${r.wallMs.toFixed(0)} ms`).join(", ")}`)

    // 6. Storage (its modules loaded only now, so that the memory figures above are the index's alone).
    const stored = store ? await measureStore({ dir, work, snapshot: previous, edited, log, problems }) : undefined

    const results = {
      seed,
      repository: { ...repo.counts, ...shape, generateMs: generated.wallMs, commitMs: committed.wallMs },
      fullIndex: {
        git: { wallMs: full.wallMs, cpuMs: full.cpuMs },
        walk: walked && { wallMs: walked.wallMs, cpuMs: walked.cpuMs }
      },
      memory: {
        heapRetainedBytes: after.heapUsed - before.heapUsed,
        externalRetainedBytes: after.external - before.external,
        rssGrowthBytes: after.rss - before.rss,
        peakRssBytes: peakAfterIndex,
        snapshotJsonBytes,
        chunkTextBytes,
        lexicalHeapBytes: afterBuild.heapUsed - beforeBuild.heapUsed
      },
      lexical: { wallMs: built.wallMs, cpuMs: built.cpuMs },
      retrieval: { questions: questions.length, modes, focused, deep },
      reindex,
      store: stored,
      targets,
      verdicts: {
        fullIndex: full.wallMs <= targets.fullIndexMs,
        retrieval: focused.p95 <= targets.retrievalP95Ms,
        reindex: reindex.wallMs <= targets.reindexMs
      },
      problems,
      machine: { cores: cpus().length, cpu: cpus()[0]?.model, loadavg: loadavg(), node: process.version }
    }
    return results
  } finally {
    if (keep) log(`grounding: kept ${work}`)
    else rmSync(work, { recursive: true, force: true })
  }
}

/**
 * The snapshot through `SqlRepositoryStore` on PGlite, as `IndexJobs` stores it: a lease, the
 * first run's full delta, then a run after a one-file change (the previous snapshot read back
 * from the store, as a job on any instance does); then `LexicalCodeSearch` opening the new
 * version for the first question.
 */
const measureStore = async ({ dir, work, snapshot, edited, log, problems }) => {
  const { DateTime, Duration, Effect, Layer, ManagedRuntime, Option } = await import("effect")
  const { SqlClient } = await import("@effect/sql")
  const { Database, SqlRepositoryStore } = await import("@huddle/adapters")
  const { LexicalCodeSearch } = await import("@huddle/adapters/grounding/index")
  const { CodeSearch } = await import("@huddle/domain/grounding/CodeSearch")
  const { IndexChanges, IndexProgress, noProgress, RepositoryConnection } = await import("@huddle/domain/grounding/RepositoryConnection")
  const { RepositoryStore } = await import("@huddle/domain/grounding/RepositoryStore")
  const SnapshotDelta = await import("@huddle/domain/grounding/SnapshotDelta")

  const dataDir = join(work, "pglite")
  const opened = performance.now()
  const runtime = ManagedRuntime.make(
    LexicalCodeSearch.layer.pipe(Layer.provideMerge(SqlRepositoryStore.layer), Layer.provideMerge(Database.layer({ _tag: "Pglite", dataDir })))
  )
  try {
    await runtime.runPromise(Effect.void)
    const openMs = performance.now() - opened
    const run = (effect) => timed(() => runtime.runPromise(effect))
    const repositoryId = "rep_bench"
    const lease = { repositoryId, holder: "idx_bench", duration: Duration.minutes(10) }
    const runOf = (delta, served, next) =>
      Effect.map(DateTime.now, (at) => ({
        delta,
        served,
        progress: new IndexProgress({ seen: next.files.length + next.skipped.length, indexed: next.files.length, skipped: next.skipped.length }),
        changes: new IndexChanges(delta.changes),
        at
      }))
    await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* RepositoryStore
      yield* sql`INSERT INTO users (id, email, password_hash, created_at) VALUES ('usr_bench', 'bench@example.invalid', 'x', now())`
      yield* sql`INSERT INTO workspaces (id, owner_id, name, personal, created_at) VALUES ('wsp_bench', 'usr_bench', 'bench', true, now())`
      yield* store.connect(new RepositoryConnection({
        id: repositoryId, workspace_id: "wsp_bench", source: "path", location: dir, status: "pending", error: null, progress: noProgress,
        changes: null, index_version: 0, requested: 1, served: 0, connected_by: "usr_bench", connected_at: yield* DateTime.now, started_at: null, finished_at: null
      }))
      if (Option.isNone(yield* store.claim(lease))) return yield* Effect.dieMessage("the bench's repository could not be claimed")
      yield* store.started(lease, yield* DateTime.now)
    }))

    // The first run: every row is new.
    const first = await run(Effect.gen(function*() {
      const store = yield* RepositoryStore
      const delta = SnapshotDelta.between(undefined, snapshot, { added: snapshot.files.map((f) => f.path), changed: [], removed: [] })
      return yield* store.store(lease, yield* runOf(delta, 1, snapshot))
    }))
    if (!first.value) problems.push("the store refused the first run")
    const dataDirBytes = sizeOnDisk(dataDir)
    log(`grounding: stored the snapshot in PGlite in ${(first.wallMs / 1000).toFixed(2)} s (data directory ${(dataDirBytes / 1e6).toFixed(0)} MB)`)

    // A re-index job after a one-file change, step by step as IndexJobs runs it.
    appendFileSync(join(dir, edited), "\nexport const benchStored = (value: number): number => value + 1\n")
    const job = await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* RepositoryStore
      yield* sql`UPDATE repositories SET requested = requested + 1 WHERE id = ${repositoryId}`
      yield* store.claim(lease)
      const t0 = performance.now()
      const stored = Option.getOrThrow(yield* store.snapshot(repositoryId))
      const t1 = performance.now()
      const indexed = yield* Effect.promise(() => Indexer.indexRepository(dir, { previous: stored }))
      const t2 = performance.now()
      const delta = SnapshotDelta.between(stored, indexed.snapshot, indexed.changes)
      const ok = yield* store.store(lease, yield* runOf(delta, 2, indexed.snapshot))
      const t3 = performance.now()
      return { ok, changes: delta.changes, readMs: t1 - t0, indexMs: t2 - t1, storeMs: t3 - t2, totalMs: t3 - t0 }
    }))
    if (!job.ok || job.changes.changed !== 1 || job.changes.added + job.changes.removed !== 0) problems.push(`the stored re-index run: ${JSON.stringify(job)}`)
    log(`grounding: re-index job after a one-file change ${job.totalMs.toFixed(0)} ms (read the stored snapshot ${job.readMs.toFixed(0)} ms, index ${job.indexMs.toFixed(0)} ms, delta and store ${job.storeMs.toFixed(0)} ms)`)

    // The first question after it: the new version is read and indexed before it is answered.
    const firstQuestion = await run(Effect.gen(function*() {
      const search = yield* CodeSearch
      const searchable = Option.getOrThrow(yield* search.open(repositoryId, 2))
      return searchable.search("where is `benchStored` defined?", modes.focused)
    }))
    if (!firstQuestion.value.files.includes(edited)) problems.push(`the first question after the re-index did not find ${edited}`)
    log(`grounding: first question after the re-index ${(firstQuestion.wallMs / 1000).toFixed(2)} s (reads the new version and builds its index)`)
    return {
      engine: "pglite",
      openMs,
      fullStoreMs: first.wallMs,
      fullStoreCpuMs: first.cpuMs,
      dataDirBytes,
      job,
      firstQuestionMs: firstQuestion.wallMs
    }
  } finally {
    await runtime.dispose()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values: args } = parseArgs({
    options: {
      files: { type: "string", default: "5000" },
      seed: { type: "string", default: "1" },
      questions: { type: "string", default: "200" },
      "no-store": { type: "boolean", default: false },
      "no-walk": { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      json: { type: "string" },
      "clock-offset": { type: "string", default: "0" }
    }
  })
  const offset = Number(args["clock-offset"])
  const log = (...parts) => console.log(`[bench ${((offset + performance.now()) / 1000).toFixed(1).padStart(5)}s]`, ...parts)
  try {
    const results = await measure({
      files: Number(args.files),
      seed: Number(args.seed),
      questions: Number(args.questions),
      store: !args["no-store"],
      walk: !args["no-walk"],
      keep: args.keep,
      log
    })
    if (args.json) writeFileSync(args.json, JSON.stringify(results, null, 2))
    else print(results)
    if (results.problems.length > 0) {
      console.error(`[bench] grounding: the indexer or the store did not do what was expected:\n  ${results.problems.join("\n  ")}`)
      process.exitCode = 1
    }
  } catch (error) {
    console.error(`[bench] grounding failed: ${error.stack ?? error}`)
    process.exitCode = 1
  }
}
