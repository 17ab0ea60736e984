#!/usr/bin/env node
/**
 * The council's own overhead (`npm run bench` runs it as its "council" section; alone:
 * `node bench/council.mjs` after `npx tsc -b`, about 20 s). The real `Council` service (domain,
 * from packages/domain/dist) runs over in-memory credits and a scripted provider whose seats
 * answer every round after a fixed latency, streamed in a few deltas, with valid protocol
 * answers. The wall time of a run is compared with its critical path: the sum over the rounds of
 * the slowest seat in that round, which is what a council of perfectly parallel rounds would
 * take. Target: wall ÷ critical path ≤ 1.10.
 *
 * Runs: one warm-up (not counted), then `--runs` councils one after another, then `--concurrent`
 * councils at once (each judged against the same critical path). CPU: `process.cpuUsage()` of
 * this process over each phase, per council (the scripted provider's few timers included).
 *
 * Options: --runs N (5) --concurrent N (3) --json FILE (write the results)
 * --clock-offset MS (added to the log's clock, so that `npm run bench` keeps one clock).
 * Exit status: 0 when the measurement ran (target met or not); 1 when a council did not
 * conclude as scripted (every seat answers at once and endorses) or credits were left held.
 */
import { writeFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { Duration, Effect, Layer, ManagedRuntime, Option, Stream } from "effect"
import * as Council from "@huddle/domain/council/Council"
import * as Protocol from "@huddle/domain/council/Protocol"
import * as Credits from "@huddle/domain/credits/Credits"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { Catalog } from "@huddle/domain/models/Catalog"
import * as MeteredCall from "@huddle/domain/models/MeteredCall"
import { CatalogModel, ModelCatalog, Usage } from "@huddle/domain/models/Model"
import { ModelProviders } from "@huddle/domain/models/ModelProviders"
import * as Router from "@huddle/domain/models/Router"
import * as InMemoryCreditStore from "@huddle/testkit/ports/InMemoryCreditStore"
import * as InMemoryPorts from "@huddle/testkit/ports/InMemoryPorts"
import { print } from "./lib/councilReport.mjs"

/** Each seat's latency in each round, ms (seat 1 chairs: the synthesis is one call). */
const latencies = {
  proposals: [300, 500, 800],
  critique: [200, 400, 600],
  synthesis: [700, 700, 700],
  ratification: [100, 150, 250]
}
const rounds = ["proposals", "critique", "synthesis", "ratification"]
/** Deltas each answer is streamed in, spread evenly over its latency. */
const deltasPerAnswer = 4
const target = 1.1

/** The fastest a council can be: every round as long as its slowest seat. */
const criticalPathMs = rounds.reduce((sum, round) => sum + Math.max(...latencies[round]), 0)

const providerName = "bench"
const seats = latencies.proposals.length
/** Every seat proposes, critiques and ratifies; the chair also writes the synthesis. */
const callsPerCouncil = 3 * seats + 1
const models = Array.from({ length: seats }, (_, i) =>
  new CatalogModel({
    id: `seat-${i + 1}`,
    tier: "standard",
    provider: providerName,
    pricing: { input: 1000, output: 2000 },
    context_window: 32_000,
    max_output_tokens: 2048
  }))

const answerOf = (round, seat) => {
  switch (round) {
    case "proposals":
      return `POSITION: Use a write-ahead log for durability.\nSeat ${seat} would keep the log on its own disk, fsync each commit, and replay it at start-up. That keeps every acknowledged write.`
    case "critique":
      return "CRITIQUE: The others are right about fsync; one forgets log rotation.\nPOSITION: Use a write-ahead log for durability.\nCHANGED: no\nREASON: Nothing said argues against it."
    case "synthesis":
      return "POSITION: Use a write-ahead log for durability.\nThe council agrees: a write-ahead log on its own disk, fsynced on commit, rotated, replayed at start-up."
    case "ratification":
      return JSON.stringify({ vote: "endorse", claim: "", rationale: "It is what I proposed, with rotation added." })
  }
}

const pieces = (text, n) => {
  const size = Math.ceil(text.length / n)
  return Array.from({ length: n }, (_, i) => text.slice(i * size, (i + 1) * size)).filter((p) => p.length > 0)
}

/**
 * The scripted provider: the round from the prompt, the seat from the model. Each delta is due
 * at its share of the latency from the call's start, so that timer lateness does not add up
 * within a call: an answer ends `latency` after it was asked for, give or take one timer.
 * Every answer is traced (when it was asked for, when its last delta went out) to tell the
 * council's share of a round's time from the scripted seats'.
 */
const answers = []
const provider = {
  name: providerName,
  kind: "openai-compatible",
  stream: (request) =>
    Stream.unwrap(Effect.sync(() => {
      const round = Protocol.roundOf(request.messages)
      const seat = Number(request.model.id.slice("seat-".length))
      const latency = latencies[round]?.[seat - 1]
      if (latency === undefined) throw new Error(`bench provider: no latency for ${request.model.id} in round ${round}`)
      const trace = { round, seat, latency, startedAt: performance.now(), endedAt: NaN }
      answers.push(trace)
      const parts = pieces(answerOf(round, seat), deltasPerAnswer)
      return Stream.fromIterable(parts.map((text, i) => ({ text, due: ((i + 1) * latency) / parts.length, last: i === parts.length - 1 }))).pipe(
        Stream.mapEffect(({ text, due, last }) =>
          Effect.sleep(Duration.millis(Math.max(0, trace.startedAt + due - performance.now()))).pipe(
            Effect.map(() => {
              if (last) trace.endedAt = performance.now()
              return { _tag: "Delta", text }
            })
          )),
        Stream.concat(Stream.make(
          { _tag: "Usage", usage: new Usage({ input_tokens: 400, output_tokens: 40 }) },
          { _tag: "Finish", reason: "stop" }
        ))
      )
    }))
}

const layer = Council.layer.pipe(
  Layer.provideMerge(MeteredCall.layer),
  Layer.provideMerge(Layer.mergeAll(Router.layer, Credits.layer)),
  Layer.provideMerge(Layer.mergeAll(
    Layer.succeed(ModelProviders, ModelProviders.of({ get: (name) => name === providerName ? Option.some(provider) : Option.none() })),
    Layer.succeed(Catalog, Catalog.fromCatalog(new ModelCatalog({ models })))
  )),
  Layer.provideMerge(Layer.mergeAll(InMemoryCreditStore.layer(), InMemoryPorts.auditLog)),
  Layer.provideMerge(InMemoryPorts.ids)
)

const payer = {
  userId: "usr_bench",
  orgId: null,
  creditFallback: false,
  authority: { via: "api_key", credentialId: "key_bench", actorId: "usr_bench" }
}
const messages = [
  { role: "system", content: "You are a careful engineer." },
  { role: "user", content: "How should a small service make its writes durable?" }
]

/**
 * One council, as a caller runs it: plan, reserve the worst case, run to `Concluded`. When
 * `alone` (no other council running), each round's time over its slowest seat is split into
 * the time before that seat was asked (`startLag`), the scripted answer's lateness (`late`),
 * and the time from its last delta to the round's end (`endLag`).
 */
const council = (alone) => Effect.gen(function*() {
  const service = yield* Council.Council
  const metered = yield* MeteredCall.MeteredCall
  if (alone) answers.length = 0
  const t0 = performance.now()
  const marks = []
  let result
  yield* Effect.scoped(Effect.gen(function*() {
    const plan = yield* service.plan({ models, messages, participants: seats })
    const budget = yield* metered.budget(payer, "council", plan.worstCase)
    yield* Stream.runForEach(service.run({ plan, payer, purpose: "council", budget, messages }), (event) =>
      Effect.sync(() => {
        if (event._tag === "RoundStarted" || event._tag === "RoundEnded") marks.push({ at: performance.now(), event: event._tag, round: event.round })
        if (event._tag === "Concluded") result = event.result
      }))
  }))
  const wallMs = performance.now() - t0
  const report = result?._tag === "Council" ? result.report : undefined
  const problems = []
  if (report === undefined) problems.push(`concluded with ${result?._tag ?? "nothing"}`)
  else {
    if (report.degraded) problems.push(`degraded: ${report.degraded_reasons.join("; ")}`)
    if (report.participants.some((p) => p.vote !== "endorse")) problems.push(`votes: ${report.participants.map((p) => p.vote).join(", ")}`)
  }
  // A retry (an answer the council could not read) would lengthen a round: not what is measured.
  if (alone && answers.length !== callsPerCouncil) problems.push(`${answers.length} model calls instead of ${callsPerCouncil}`)
  const perRound = rounds.map((round) => {
    const start = marks.find((m) => m.event === "RoundStarted" && m.round === round)?.at
    const end = marks.find((m) => m.event === "RoundEnded" && m.round === round)?.at
    const slowestMs = Math.max(...latencies[round])
    const timing = { round, ms: end - start, slowestMs }
    if (!alone) return timing
    const slowest = answers.filter((a) => a.round === round).reduce((a, b) => (b.endedAt > a.endedAt ? b : a))
    return {
      ...timing,
      startLag: slowest.startedAt - start,
      late: slowest.endedAt - slowest.startedAt - slowest.latency,
      endLag: end - slowest.endedAt
    }
  })
  return { wallMs, ratio: wallMs / criticalPathMs, perRound, problems, charged: result?.charged }
})

/**
 * For scale: one metered call on its own, as the council makes its calls (the same provider, a
 * ratification prompt: 100 ms), with nothing of the council around it.
 */
const singleCall = Effect.gen(function*() {
  const metered = yield* MeteredCall.MeteredCall
  const prompt = Protocol.ratificationPrompt(messages, 1, { initial: "A log.", final: "A log." }, { position: "A log.", text: "Use a log." })
  yield* Effect.scoped(Effect.gen(function*() {
    const quote = yield* metered.quote([models[0]], prompt, { maxOutputTokens: 256 })
    const running = yield* metered.run({ payer, purpose: "call", candidates: [models[0]], quote, messages: prompt })
    let text = ""
    yield* Stream.runForEach(running.events, (event) => Effect.sync(() => {
      if (event._tag === "Delta") text += event.text
    }))
    if (Protocol.parseBallot(text)?.vote !== "endorse") return yield* Effect.dieMessage(`a single call answered ${JSON.stringify(text)}`)
  }))
})

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const cpuMs = (since) => {
  const d = process.cpuUsage(since)
  return (d.user + d.system) / 1000
}

/** The measurement: the warm-up, `runs` councils in turn, then `concurrent` at once. */
export const measure = async ({ runs = 5, concurrent = 3, log = console.log } = {}) => {
  const runtime = ManagedRuntime.make(layer)
  try {
    await runtime.runPromise(Effect.flatMap(CreditStore, (store) =>
      store.grant({ account: { ownerType: "user", ownerId: payer.userId, pool: "personal" }, amount: 1e12, reason: "bench", actorId: null })))
    log(`council: ${seats} seats; latencies (ms) ${rounds.map((r) => `${r} ${latencies[r].join("/")}`).join(", ")}; critical path ${criticalPathMs} ms`)
    const warm = await runtime.runPromise(council(true))
    log(`council: warm-up ${warm.wallMs.toFixed(0)} ms (${warm.ratio.toFixed(3)} × critical path)`)
    const sequential = []
    const cpuBefore = process.cpuUsage()
    for (let i = 0; i < runs; i++) {
      const cpu = process.cpuUsage()
      const run = await runtime.runPromise(council(true))
      run.cpuMs = cpuMs(cpu)
      sequential.push(run)
      log(`council: run ${i + 1}/${runs} ${run.wallMs.toFixed(1)} ms, ${run.ratio.toFixed(3)} × critical path, CPU ${run.cpuMs.toFixed(1)} ms; rounds ${run.perRound.map((r) => `${r.round} ${r.ms.toFixed(0)}`).join(", ")}`)
    }
    const sequentialCpuMs = cpuMs(cpuBefore) / runs
    const cpuBatch = process.cpuUsage()
    const batch = await Promise.all(Array.from({ length: concurrent }, () => runtime.runPromise(council(false))))
    const concurrentCpuMs = cpuMs(cpuBatch) / concurrent
    log(`council: ${concurrent} at once ${batch.map((r) => `${r.wallMs.toFixed(1)} ms (${r.ratio.toFixed(3)})`).join(", ")}; CPU ${concurrentCpuMs.toFixed(1)} ms per council`)
    // Single calls, as many at a time as a round makes, after a batch to warm them up. (A call's
    // CPU depends on how many run at once: timers and scheduling are shared.)
    const calls = seats
    const batches = 10
    await runtime.runPromise(Effect.all(Array.from({ length: calls }, () => singleCall), { concurrency: "unbounded" }))
    const cpuCalls = process.cpuUsage()
    for (let i = 0; i < batches; i++) {
      await runtime.runPromise(Effect.all(Array.from({ length: calls }, () => singleCall), { concurrency: "unbounded" }))
    }
    const callCpuMs = cpuMs(cpuCalls) / (calls * batches)
    log(`council: for scale, one metered call on its own (same provider, ${calls} at a time): CPU ${callCpuMs.toFixed(2)} ms per call`)
    const held = await runtime.runPromise(Effect.flatMap(InMemoryCreditStore.CreditStoreState, (state) => state.held))
    const problems = [...warm.problems, ...sequential.flatMap((r) => r.problems), ...batch.flatMap((r) => r.problems)]
    if (held > 0) problems.push(`${held} credits still held after every council ended`)
    const summary = (list, cpu) => ({
      runs: list.length,
      wallMs: list.map((r) => r.wallMs),
      wallMsMedian: median(list.map((r) => r.wallMs)),
      ratioMedian: median(list.map((r) => r.ratio)),
      ratioWorst: Math.max(...list.map((r) => r.ratio)),
      overheadMsMedian: median(list.map((r) => r.wallMs - criticalPathMs)),
      cpuMsPerCouncil: cpu,
      // Before the first round (plan, reservation), between rounds, after the last.
      outsideRoundsMsMedian: median(list.map((r) => r.wallMs - r.perRound.reduce((sum, x) => sum + x.ms, 0))),
      // Each round's time over its slowest seat, and (councils run alone) where it went.
      rounds: Object.fromEntries(rounds.map((round, i) => {
        // Means, so that the parts add up to the whole.
        const of = (f) => list.reduce((sum, r) => sum + f(r.perRound[i]), 0) / list.length
        return [round, { overheadMs: of((x) => x.ms - x.slowestMs), startLagMs: of((x) => x.startLag), lateMs: of((x) => x.late), endLagMs: of((x) => x.endLag) }]
      }))
    })
    return {
      latencies,
      criticalPathMs,
      target,
      callsPerCouncil,
      callCpuMs,
      callsAtOnce: calls,
      sequential: summary(sequential, sequentialCpuMs),
      concurrent: { ...summary(batch, concurrentCpuMs), at: concurrent },
      pass: Math.max(...sequential.map((r) => r.ratio), ...batch.map((r) => r.ratio)) <= target,
      problems,
      machine: { cores: cpus().length, loadavg: loadavg(), node: process.version }
    }
  } finally {
    await runtime.dispose()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values: args } = parseArgs({
    options: {
      runs: { type: "string", default: "5" },
      concurrent: { type: "string", default: "3" },
      json: { type: "string" },
      "clock-offset": { type: "string", default: "0" }
    }
  })
  const offset = Number(args["clock-offset"])
  const log = (...parts) => console.log(`[bench ${((offset + performance.now()) / 1000).toFixed(1).padStart(5)}s]`, ...parts)
  try {
    const results = await measure({ runs: Number(args.runs), concurrent: Number(args.concurrent), log })
    if (args.json) writeFileSync(args.json, JSON.stringify(results, null, 2))
    else print(results)
    if (results.problems.length > 0) {
      console.error(`[bench] council: the councils did not run as scripted:\n  ${results.problems.join("\n  ")}`)
      process.exitCode = 1
    }
  } catch (error) {
    console.error(`[bench] council failed: ${error.stack ?? error}`)
    process.exitCode = 1
  }
}
