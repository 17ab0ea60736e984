#!/usr/bin/env node
/**
 * What a recorded trace costs, apart from everything else a request does (not part of
 * `npm run bench`; run it by hand after `npx tsc -b`: `node bench/spans.mjs`, about a minute).
 *
 * A program in the shape of a completion's trace: a server span set as the request's parent
 * the way `edge/ServerSpan.ts` sets it, under it ten domain spans through `Traced.span` (four
 * with children, six leaves), in a context of 20 services (a completion's holds 5–20 since
 * decision 0031; `--services N` tries others). Each mode runs in a process of its own,
 * alternating, and reports CPU per request (user + system, median of 5 rounds):
 *
 * - `off`: no tracer (a server that exports nothing);
 * - `unrecorded`: the sampler leaves every trace out (`OTEL_TRACES_SAMPLER_ARG=0`);
 * - `spans only`: every span recorded by a tracer that keeps nothing: Effect's span machinery alone;
 * - `exported`: Huddle's tracer (`edge/Tracing.ts`), every span exported as OTLP/JSON to a local
 *   sink that reads and drops the batches.
 *
 * Options: --requests N (per round, default 15000) --rounds N (alternations, default 3)
 * --services N (the context's size, default 20)
 */
import { spawnSync } from "node:child_process"
import http from "node:http"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Context, Effect, FiberRef, Layer, Tracer } from "effect"
import * as Traced from "../packages/domain/dist/observability/Traced.js"
import * as Tracing from "../packages/server/dist/edge/Tracing.js"

const modes = ["off", "unrecorded", "spans only", "exported"]
const { values } = parseArgs({ options: { requests: { type: "string", default: "15000" }, rounds: { type: "string", default: "3" }, services: { type: "string", default: "20" }, mode: { type: "string" } } })
const requests = Number(values.requests)
const contextSize = Number(values.services)

if (values.mode === undefined) {
  const results = new Map(modes.map((mode) => [mode, []]))
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const mode of modes) {
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--mode", mode, "--requests", String(requests), "--services", String(contextSize)], { encoding: "utf8" })
      if (child.status !== 0) throw new Error(`${mode}: ${child.stderr}`)
      results.get(mode).push(Number(child.stdout.trim()))
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const off = median(results.get("off"))
  console.log(`CPU per request of ten spans, ${contextSize} services in its context (median of ${values.rounds} alternating processes, ${requests} requests a round):`)
  console.table(modes.map((mode) => {
    const us = median(results.get(mode))
    return { mode, "µs per request": us.toFixed(1), "µs per span over off": ((us - off) / 10).toFixed(1), runs: results.get(mode).map((x) => x.toFixed(0)).join(" ") }
  }))
} else {
  const mode = values.mode
  const sink = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => response.end("{}"))
  })
  await new Promise((resolve) => sink.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${sink.address().port}/v1/traces`

  let services = Context.empty()
  for (let i = 0; i < contextSize; i++) services = Context.add(services, Context.GenericTag(`service${i}`), { i })
  const leaf = (name) => Traced.span(Effect.map(Effect.succeed(1), (n) => n + 1), name, { leaf: true })
  const parent = (name, effect) => Traced.span(effect, name)
  const domain = parent("Completions.complete", Effect.zipRight(
    leaf("Authentication.authenticate"),
    parent("MeteredCall.run", Effect.all([leaf("Credits.reserve"), leaf("OrgSettings.rulesFor"), leaf("ContextAssembly.memoriesFor"), parent("Router.call", leaf("upstream")), leaf("Credits.settle")]))
  ))
  const request = Effect.withFiberRuntime((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled)
      ? Effect.useSpan("POST /v1/chat/completions", { kind: "server", captureStackTrace: false }, (span) =>
        Effect.zipRight(FiberRef.update(FiberRef.currentContext, Context.add(Tracer.ParentSpan, span)), domain))
      : domain
  )
  const program = Effect.gen(function*() {
    const rounds = []
    for (let round = 0; round < 5; round++) {
      const before = process.cpuUsage()
      for (let i = 0; i < requests; i++) yield* Effect.provide(request, services)
      const used = process.cpuUsage(before)
      rounds.push((used.user + used.system) / requests)
    }
    return rounds.sort((a, b) => a - b)[2]
  })
  const keepsNothing = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => ({
      _tag: "Span", name, spanId: "b7ad6b7169203331", traceId: "0af7651916cd43dd8448eb211c80319c", parent, context,
      status: { _tag: "Started", startTime }, attributes: new Map(), links, sampled: true, kind,
      end() {}, attribute() {}, event() {}, addLinks() {}
    }),
    context: (f) => f()
  })
  const tracer = mode === "off"
    ? Layer.locallyScoped(FiberRef.currentTracerEnabled, false)
    : mode === "spans only"
    ? Layer.setTracer(keepsNothing)
    : Tracing.layer({ url, serviceName: "bench", exportInterval: "1 second", ...(mode === "unrecorded" ? { sampler: { parentBased: true, ratio: 0 } } : {}) })
  const us = await Effect.runPromise(Effect.scoped(Effect.provide(program, tracer)))
  sink.close()
  console.log(us)
}
