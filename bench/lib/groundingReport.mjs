/**
 * The grounding section's report (bench/grounding.mjs's results), printed as `npm run bench`
 * prints its other sections. Apart from bench/grounding.mjs so that bench/run.mjs can print it
 * without loading the adapters into the load generator's process.
 */
import { fmt, printTable } from "./table.mjs"

const s = (ms) => `${fmt(ms / 1000, 2)} s`
const ms = (x) => `${fmt(x, 1)} ms`
const mb = (bytes) => `${fmt(bytes / 1e6, 0)} MB`
const verdict = (pass) => (pass ? "PASS" : "MISS")

export const print = (results) => {
  const { repository: r, fullIndex, memory: m, lexical, retrieval, reindex, store, targets, verdicts } = results
  console.log("")
  console.log(`Grounding: a generated repository of ${r.tracked} committed files (${fmt(r.bytes / 1e6, 1)} MB; seed ${results.seed}): ${r.indexed} indexed, ${r.skipped} skipped entries (${Object.entries(r.skippedReasons).map(([k, v]) => `${v} ${k}`).join(", ")}); ${r.chunks} chunks, ${r.definitions} definitions, ${r.imports} imports, ${r.links} test links`)
  console.log("wall: elapsed time (the indexer and search run on one thread); CPU: the bench process's user+system CPU (V8's helper threads included)")
  const rows = [["measure", "wall", "CPU", "wanted", "verdict"]]
  rows.push(["full index, files listed by git (first run in the process)", s(fullIndex.git.wallMs), s(fullIndex.git.cpuMs), `≤ ${targets.fullIndexMs / 1000} s`, verdict(verdicts.fullIndex)])
  if (fullIndex.walk) rows.push(["full index, directory walk (no git)", s(fullIndex.walk.wallMs), s(fullIndex.walk.cpuMs), "", ""])
  rows.push(["lexical index build", s(lexical.wallMs), s(lexical.cpuMs), "", ""])
  const f = retrieval.focused
  const d = retrieval.deep
  rows.push([`retrieval, focused (${retrieval.modes.focused.maxFiles} files, ${retrieval.modes.focused.budgetTokens} tokens): p50 / p95 / p99`, `${fmt(f.p50, 1)} / ${fmt(f.p95, 1)} / ${fmt(f.p99, 1)} ms`, "", `p95 ≤ ${targets.retrievalP95Ms} ms`, verdict(verdicts.retrieval)])
  rows.push([`retrieval, deep (${retrieval.modes.deep.maxFiles} files, ${retrieval.modes.deep.budgetTokens} tokens): p50 / p95 / p99`, `${fmt(d.p50, 1)} / ${fmt(d.p95, 1)} / ${fmt(d.p99, 1)} ms`, "", "", ""])
  rows.push([`re-index after a one-file change (median of ${reindex.runs.length}; worst ${fmt(reindex.maxMs, 0)} ms)`, ms(reindex.wallMs), ms(reindex.cpuMs), `≤ ${targets.reindexMs / 1000} s`, verdict(verdicts.reindex)])
  if (store) {
    rows.push(["PGlite: store the first snapshot", s(store.fullStoreMs), s(store.fullStoreCpuMs), "", ""])
    // Not judged (the target is the indexer's), but it is what an operator waits for: compared for reference.
    rows.push(["PGlite: re-index job after a one-file change (read, index, store)", ms(store.job.totalMs), "", `(≤ ${targets.reindexMs / 1000} s)`, `(${verdict(store.job.totalMs <= targets.reindexMs)})`])
    rows.push(["PGlite: first question after it (read, build, search)", s(store.firstQuestionMs), "", "", ""])
  }
  printTable(rows)
  console.log(`  Memory: after the full index the heap keeps ${mb(m.heapRetainedBytes)} more (the snapshot: ${mb(m.snapshotJsonBytes)} as JSON, ${mb(m.chunkTextBytes)} of it chunk text), and ${mb(m.externalRetainedBytes)} outside the heap (tree-sitter's WebAssembly runtime and grammars, loaded once); RSS +${mb(m.rssGrowthBytes)}, peak ${mb(m.peakRssBytes)}. The lexical index keeps ${mb(m.lexicalHeapBytes)} of heap more`)
  console.log(`  Search check: the expected file among those returned for ${fmt(f.found * 100, 0)} % of the ${f.expected} "where is X defined" / "what does <path> do" questions (focused), ${fmt(d.found * 100, 0)} % (deep)`)
  if (store) {
    console.log(`  PGlite: opened in ${s(store.openMs)}; data directory ${mb(store.dataDirBytes)} after the first snapshot; re-index job = read the stored snapshot ${ms(store.job.readMs)} + index ${ms(store.job.indexMs)} + delta and store ${ms(store.job.storeMs)}`)
  }
}
