#!/usr/bin/env node
/**
 * How long lexical retrieval takes on a large repository (not part of `npm run bench`; run it by
 * hand: `node bench/retrieval.mjs`, after `npx tsc -b`; about half a minute). A generated snapshot
 * (default 5,000 files of 240 lines, 40,000 chunks of 30 lines; each file uses a few dozen
 * identifiers drawn from a Zipf vocabulary, a definition every 12 lines, three imports per file) is indexed, then searched with
 * questions of the shapes people ask (identifiers, words, paths); reports the build time and the
 * search latencies.
 *
 * Options: --files N (5000) --lines N (240 per file) --questions N (300) --builds N (3) --seed N (1);
 * run with `node --expose-gc` so that each build starts from a collected heap.
 */
import { availableParallelism, loadavg } from "node:os"
import { parseArgs } from "node:util"
import { performance } from "node:perf_hooks"
import * as LexicalIndex from "../packages/adapters/dist/grounding/LexicalIndex.js"

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "5000" },
    lines: { type: "string", default: "240" },
    questions: { type: "string", default: "300" },
    builds: { type: "string", default: "3" },
    seed: { type: "string", default: "1" }
  }
})
const FILES = Number(values.files)
const LINES = Number(values.lines)
const QUESTIONS = Number(values.questions)
const CHUNK = 30

let state = Number(values.seed) >>> 0 || 1
const random = () => {
  state ^= state << 13
  state ^= state >>> 17
  state ^= state << 5
  return (state >>> 0) / 4294967296
}
const pick = (list) => list[Math.floor(random() * list.length)]
const syllables = ["ar", "be", "co", "da", "el", "fi", "go", "ha", "in", "jo", "ka", "lu", "mo", "ne", "or", "pa", "qui", "ro", "su", "ta", "um", "ve", "wi", "xo", "yu", "ze"]
const word = () => Array.from({ length: 2 + Math.floor(random() * 2) }, () => pick(syllables)).join("")
const vocabulary = Array.from({ length: 4000 }, word)
// Zipf: the k-th word is drawn with probability ~1/k.
const zipf = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(Math.exp(random() * Math.log(vocabulary.length))) - 1)]
const identFrom = (words) => words.map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join("")
// Identifiers repeat across a codebase: a vocabulary of them, drawn Zipf-like too.
const identifiers = Array.from({ length: 30000 }, () => {
  const ws = Array.from({ length: 1 + Math.floor(random() * 3) }, zipf)
  return random() < 0.15 ? ws.join("_") : identFrom(ws)
})
const ident = () => identifiers[Math.min(identifiers.length - 1, Math.floor(Math.exp(random() * Math.log(identifiers.length))) - 1)]

const dirs = Array.from({ length: 120 }, (_, i) => `packages/${pick(["core", "api", "web", "cli", "db"])}/src/${word()}${i}`)
const paths = Array.from({ length: FILES }, (_, i) => `${pick(dirs)}/${word()}${i}${random() < 0.15 ? ".test" : ""}.ts`)
const files = []
const chunks = []
const definitions = []
const imports = []
const build0 = performance.now()
for (const path of paths) {
  // A file uses a few dozen identifiers, again and again.
  const local = Array.from({ length: 40 }, ident)
  const use = () => pick(local)
  const lines = []
  for (let l = 0; l < LINES; l++) {
    const r = random()
    if (l % 12 === 0) {
      const name = identFrom([zipf(), zipf()])
      definitions.push({ path, name, kind: "function", line: l + 1, end_line: Math.min(LINES, l + 12) })
      lines.push(`export function ${name}(${use()}: ${use()}) {`)
    } else if (r < 0.1) lines.push(r < 0.05 ? "" : "  }")
    else if (r < 0.25) lines.push(`  // ${zipf()} ${zipf()} ${zipf()} ${zipf()}`)
    else if (r < 0.45) lines.push(`    if (${use()}.${use()}) return ${use()}`)
    else lines.push(`    const ${use()} = ${use()}(${use()})`)
  }
  files.push({ path, category: path.includes(".test.") ? "test" : "source", language: "typescript", lines: LINES, bytes: 0, hash: "" })
  for (let s = 0; s < LINES; s += CHUNK) {
    chunks.push({ path, start_line: s + 1, end_line: Math.min(LINES, s + CHUNK), text: lines.slice(s, s + CHUNK).join("\n") })
  }
  for (let k = 0; k < 3; k++) imports.push({ from: path, to: pick(paths) })
}
const snapshot = { files, skipped: [], chunks, definitions, imports, links: [] }
const chars = chunks.reduce((n, c) => n + c.text.length, 0)
console.log(`snapshot: ${files.length} files, ${chunks.length} chunks, ${(chars / 1e6).toFixed(1)} MB of text, ${definitions.length} definitions (generated in ${((performance.now() - build0) / 1000).toFixed(1)} s)`)

const builds = []
let index
for (let run = 0; run < Number(values.builds); run++) {
  index = undefined
  global.gc?.()
  const t = performance.now()
  const cpu = process.cpuUsage()
  index = LexicalIndex.build(snapshot)
  const used = process.cpuUsage(cpu)
  builds.push([performance.now() - t, (used.user + used.system) / 1000])
}
global.gc?.()
const heap = process.memoryUsage().heapUsed / 1e6
// CPU time too: on a shared machine the wall clock also counts the time other processes had the CPU.
console.log(`build: ${builds.map(([ms, cpu]) => `${(ms / 1000).toFixed(2)} s (CPU ${(cpu / 1000).toFixed(2)} s)`).join(", ")}; heap after: ${heap.toFixed(0)} MB; load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs`)

const shapes = [
  () => `where is \`${pick(definitions).name}\` defined?`,
  () => `how does ${zipf()} ${zipf()} work with ${ident()}`,
  () => `what does ${pick(paths)} do`,
  () => `why does ${pick(definitions).name} call ${ident()} when ${zipf()} fails`,
  () => `${zipf()} ${zipf()} ${zipf()} ${zipf()}`
]
const questions = Array.from({ length: QUESTIONS }, (_, i) => shapes[i % shapes.length]())
for (const q of questions.slice(0, 20)) LexicalIndex.search(index, q, { budgetTokens: 6000, maxFiles: 8 })
const times = []
for (const q of questions) {
  const t = performance.now()
  LexicalIndex.search(index, q, { budgetTokens: 6000, maxFiles: 8 })
  times.push(performance.now() - t)
}
times.sort((a, b) => a - b)
const at = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))]
console.log(`search (${QUESTIONS} questions, budget 6000 tokens, 8 files): p50 ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, max ${times[times.length - 1].toFixed(1)} ms`)
