#!/usr/bin/env node
/**
 * CPU per upstream chunk of the model-call path alone: the built `OpenAiCompatibleProvider`, over
 * undici (as the server runs it), reading streamed answers from the testkit's `FakeOpenAi` in a
 * child process, so that only the client side is in this process's CPU figures. Not part of
 * `npm run bench`; run it by hand after `npx tsc -b`:
 *
 *   node bench/upstream-parse.mjs [--baseline DIR] [--rounds 5] [--calls 200] [--concurrency 20]
 *
 * `--baseline DIR` names another built tree (e.g. `git archive <commit> | tar -x -C DIR`, its
 * node_modules linked to this one's, `npx tsc -b` there) whose provider is measured in the same
 * run, in alternating rounds, so that the two are compared on the same machine at the same time.
 *
 * Two shapes of answer: the whole body in one write (the fake's default, as `npm run bench`
 * sees it), and one write per chunk (1 ms apart: what a real model's stream looks like). Each
 * with 1, 20 (as in `npm run bench`) and 81 content chunks; the difference between 81 and 1,
 * divided by 80, is the cost of one more chunk, free of the call's fixed cost.
 */
import { fork } from "node:child_process"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")

const sizes = [1, 20, 81]
const modes = [{ name: "one write", delay: 0 }, { name: "write per chunk", delay: 1 }]
const shapes = modes.flatMap(({ delay, name }) => sizes.map((pieces) => ({ name, pieces, delay })))
const scriptOf = ({ delay, pieces }) => ({
  chunks: Array.from({ length: pieces }, (_, i) => `tok${i} `),
  usage: { prompt_tokens: 10, completion_tokens: pieces },
  ...(delay > 0 ? { chunkDelayMs: delay } : {})
})

if (process.argv.includes("--serve")) {
  // The child: one fake per shape, so that every call gets its shape's answer as the default.
  const FakeOpenAi = await import("@huddle/testkit/FakeOpenAi")
  const fakes = await Promise.all(shapes.map((shape) => FakeOpenAi.start({ recordRequests: false, defaultScript: scriptOf(shape) })))
  process.send({ baseUrls: fakes.map((fake) => fake.baseUrl) })
  process.on("disconnect", () => Promise.all(fakes.map((fake) => fake.stop())).finally(() => process.exit(0)))
} else {
  const { values: args } = parseArgs({
    options: {
      baseline: { type: "string" },
      rounds: { type: "string", default: "5" },
      calls: { type: "string", default: "200" },
      concurrency: { type: "string", default: "20" }
    }
  })
  const rounds = Number(args.rounds)
  const calls = Number(args.calls)
  const concurrency = Number(args.concurrency)

  const { Effect, Layer, ManagedRuntime, Stream } = await import("effect")
  const { NodeHttpClient } = await import("@effect/platform-node")

  const child = fork(fileURLToPath(import.meta.url), ["--serve"], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const { baseUrls } = await new Promise((resolve, reject) => {
    child.once("message", resolve)
    child.once("exit", (code) => reject(new Error(`the fake upstream exited (${code})`)))
  })

  const runtime = ManagedRuntime.make(NodeHttpClient.layerUndici)
  const load = async (label, tree) => {
    const module = await import(pathToFileURL(join(tree, "packages/adapters/dist/models/OpenAiCompatibleProvider.js")).href)
    const providers = await Promise.all(baseUrls.map((baseUrl) =>
      runtime.runPromise(module.make({ name: "openai", baseUrl, timeout: "30 seconds" }))
    ))
    return { label, providers }
  }
  const implementations = [await load("this tree", root)]
  if (args.baseline) implementations.push(await load("baseline", resolve(args.baseline)))

  const request = {
    model: { id: "bench-model", upstream_model: "bench-model" },
    messages: [{ role: "user", content: "Say something" }],
    maxOutputTokens: 128
  }

  /** One call: checks the answer, so that a broken path cannot look fast. */
  const call = (provider, shape) =>
    Stream.runFold(provider.stream(request), { text: "", usage: undefined, finish: undefined }, (acc, chunk) => {
      if (chunk._tag === "Delta") acc.text += chunk.text
      else if (chunk._tag === "Usage") acc.usage = chunk.usage
      else if (chunk._tag === "Finish") acc.finish = chunk.reason
      return acc
    }).pipe(Effect.flatMap((acc) => {
      const expected = scriptOf(shape)
      return acc.text === expected.chunks.join("") && acc.usage?.output_tokens === shape.pieces && acc.finish === "stop"
        ? Effect.void
        : Effect.die(new Error(`wrong answer: ${JSON.stringify(acc).slice(0, 200)}`))
    }))

  const measure = async (provider, shape, count) => {
    const before = process.cpuUsage()
    const started = process.hrtime.bigint()
    await runtime.runPromise(Effect.forEach(Array.from({ length: count }), () => call(provider, shape), { concurrency, discard: true }))
    const cpu = process.cpuUsage(before)
    return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: Number(process.hrtime.bigint() - started) / 1e6 }
  }

  // Warm-up: every implementation and shape, until the JIT has settled.
  for (const impl of implementations) {
    for (const [index, shape] of shapes.entries()) await measure(impl.providers[index], shape, Math.max(100, calls / 2))
  }

  const totals = new Map()
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? implementations : [...implementations].reverse()
    for (const impl of order) {
      for (const [index, shape] of shapes.entries()) {
        const { cpuMs } = await measure(impl.providers[index], shape, calls)
        const key = `${impl.label}|${index}`
        totals.set(key, [...(totals.get(key) ?? []), cpuMs / calls])
      }
    }
  }

  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b)
    const middle = Math.floor(sorted.length / 2)
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
  }
  // Upstream events per call: the role chunk, the content chunks, the finish chunk, usage, [DONE].
  const eventsOf = (pieces) => pieces + 4
  console.log(`${rounds} rounds of ${calls} calls per shape, ${concurrency} at a time; medians of the rounds; Node ${process.version}`)
  console.log("")
  console.log("| implementation | answer | CPU µs per call: 1 chunk | 20 chunks | 81 chunks | CPU ms per 1000 events (81 chunks) | CPU µs per extra chunk |")
  console.log("| --- | --- | --- | --- | --- | --- | --- |")
  for (const impl of implementations) {
    for (const { name } of modes) {
      const perCall = sizes.map((pieces) => median(totals.get(`${impl.label}|${shapes.findIndex((shape) => shape.name === name && shape.pieces === pieces)}`)))
      const [small, , large] = perCall
      const perChunk = (large - small) / (sizes[2] - sizes[0])
      console.log(`| ${impl.label} | ${name} | ${perCall.map((ms) => (ms * 1000).toFixed(0)).join(" | ")} | ${(large * 1000 / eventsOf(sizes[2])).toFixed(1)} | ${(perChunk * 1000).toFixed(1)} |`)
    }
  }

  await runtime.dispose()
  child.disconnect()
}
