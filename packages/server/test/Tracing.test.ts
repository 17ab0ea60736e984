/**
 * Traces exported over OTLP/HTTP (docs/operations.md, Traces) to an in-process receiver: the span
 * tree of a chat completion and of a council run, a `traceparent` honoured on the way in and
 * passed on to the upstream, and nothing secret in the spans.
 */
import { randomBytes } from "node:crypto"
import * as net from "node:net"
import * as Tracing from "@huddle/server/edge/Tracing"
import { Accounts, type FakeOpenAi, OtlpReceiver, TestServer, WithFakeUpstream } from "@huddle/testkit"
import { Context, Effect, Exit, Option, Tracer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const newTraceId = () => randomBytes(16).toString("hex")
const newSpanId = () => randomBytes(8).toString("hex")

/** The names of the spans on the way from `span` up to the root, `span` first. */
const ancestry = (spans: ReadonlyArray<OtlpReceiver.Span>, span: OtlpReceiver.Span): Array<string> => {
  const byId = new Map(spans.map((s) => [s.spanId, s]))
  const names: Array<string> = []
  for (let at: OtlpReceiver.Span | undefined = span; at !== undefined; at = byId.get(at.parentSpanId)) names.push(at.name)
  return names
}

/**
 * One chat completion with `key` (the fake upstream answers `answer`), sent with the caller's
 * `traceparent` when given; it must be answered 200.
 */
const complete = async (
  started: { readonly server: TestServer.TestServer; readonly fake: FakeOpenAi.FakeOpenAi },
  key: string,
  { answer = "Traced.", traceparent, usage = { prompt_tokens: 5, completion_tokens: 2 } }: { answer?: string; traceparent?: string; usage?: { prompt_tokens: number; completion_tokens: number } } = {}
) => {
  started.fake.enqueue({ answer, usage })
  const response = await fetch(`${started.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(traceparent === undefined ? {} : { traceparent }) },
    body: JSON.stringify({ model: "fake-standard", messages: [{ role: "user", content: answer }] })
  })
  expect(response.status).toBe(200)
}

/**
 * For the enclosing `describe`: an OTLP receiver, and the server in front of a fake upstream
 * exporting its traces to it (as `serviceName`, with the tracing `options` given); `onStart`
 * receives them.
 */
const tracedSuite = (
  serviceName: string,
  options: Pick<Tracing.Options, "sampler" | "sql">,
  onStart: (started: { receiver: OtlpReceiver.OtlpReceiver; fake: FakeOpenAi.FakeOpenAi; server: TestServer.TestServer }) => void
) => {
  let receiver: OtlpReceiver.OtlpReceiver | undefined
  let stop: (() => Promise<void>) | undefined
  beforeAll(async () => {
    receiver = await OtlpReceiver.start()
    const started = await WithFakeUpstream.start([WithFakeUpstream.model("fake-standard", "standard", { max_output_tokens: 500 })], {
      tracing: { url: receiver.url, serviceName, exportInterval: "50 millis", ...options }
    })
    stop = started.stop
    onStart({ receiver, fake: started.fake, server: started.server })
  }, 60_000)
  afterAll(async () => {
    await stop?.()
    await receiver?.stop()
  })
}

describe("traces", () => {
  let receiver: OtlpReceiver.OtlpReceiver
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  tracedSuite("huddle-under-test", {}, (started) => ({ receiver, fake, server } = started))

  it("a chat completion: one trace under the caller's, with the spans of authentication, scope, policy, credits and the upstream call", async () => {
    const user = await Accounts.signupAndLogin(server, "traced")
    const { key } = await Accounts.createApiKey(server, user)
    const traceId = newTraceId()
    const callerSpan = newSpanId()
    fake.reset()
    await complete({ server, fake }, key, { traceparent: `00-${traceId}-${callerSpan}-01`, usage: { prompt_tokens: 40, completion_tokens: 10 } })

    const spans = await receiver.trace(traceId, (spans) => spans.some((s) => s.name === "POST /v1/chat/completions"))
    const root = spans.find((s) => s.name === "POST /v1/chat/completions")!
    expect(root.parentSpanId).toBe(callerSpan)
    expect(root.kind).toBe(2)
    expect(root.service).toBe("huddle-under-test")
    expect(root.attributes["http.response.status_code"]).toBe(200)
    // Every span of the request hangs under its server span.
    for (const span of spans) expect(ancestry(spans, span).at(-1)).toBe("POST /v1/chat/completions")

    const named = (name: string) => spans.filter((s) => s.name === name)
    for (const name of ["Authentication.authenticate", "RequestScopes.resolve", "OrgSettings.rulesFor", "Credits.reserve", "Credits.settle"]) {
      expect(named(name), name).not.toHaveLength(0)
    }
    // A leaf's span hangs where it was made (the reservation under the metered call).
    expect(ancestry(spans, named("Credits.reserve")[0]!).slice(0, 2)).toEqual(["Credits.reserve", "MeteredCall.run"])
    // The SQL client's spans are left out unless asked for (HUDDLE_TRACE_SQL), in requests and
    // in the server's background work alike.
    expect(receiver.spans().filter((s) => s.service === "huddle-under-test" && s.name.startsWith("sql."))).toEqual([])
    const [call] = named("chat fake-standard")
    expect(call).toBeDefined()
    expect(call!.kind).toBe(3)
    expect(call!.attributes).toMatchObject({
      "gen_ai.system": "fake",
      "gen_ai.request.model": "fake-standard",
      "gen_ai.usage.input_tokens": 40,
      "gen_ai.usage.output_tokens": 10,
      "huddle.attempt": 1
    })
    // The upstream got the call's span as its parent.
    expect(fake.requests.at(-1)!.headers.traceparent).toBe(`00-${traceId}-${call!.spanId}-01`)
    // Credentials never reach a span.
    for (const span of spans) {
      for (const value of Object.values(span.attributes)) expect(String(value)).not.toContain(key)
    }
  })

  it("records nothing of a request whose caller's traceparent says not sampled, and tells the upstream so", async () => {
    const user = await Accounts.signupAndLogin(server, "unsampled-caller")
    const { key } = await Accounts.createApiKey(server, user)
    const traceId = newTraceId()
    fake.reset()
    await complete({ server, fake }, key, { answer: "Not traced.", traceparent: `00-${traceId}-${newSpanId()}-00` })
    expect(fake.requests.at(-1)!.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`))
    // A traced request after it, to know the exporter has sent what it had.
    const after = newTraceId()
    await complete({ server, fake }, key, { traceparent: `00-${after}-${newSpanId()}-01` })
    await receiver.trace(after, (spans) => spans.some((s) => s.name === "POST /v1/chat/completions"))
    expect(receiver.spans().filter((s) => s.traceId === traceId)).toEqual([])
  })

  it("a council run: its four rounds, each participant's calls under its round", async () => {
    const user = await Accounts.signupAndLogin(server, "council")
    const traceId = newTraceId()
    const response = await fetch(`${server.url}/v1/huddle`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.session}`, "content-type": "application/json", traceparent: `00-${traceId}-${newSpanId()}-01` },
      body: JSON.stringify({ input: "Should we use PostgreSQL or MySQL for analytics?", mode: "multi" })
    })
    expect(response.status).toBe(200)
    const report = ((await response.json()) as { consensus: { participants: Array<unknown> } }).consensus

    const spans = await receiver.trace(traceId, (spans) => spans.some((s) => s.name === "POST /v1/huddle"))
    const rounds = spans.filter((s) => s.name === "Council.round")
    expect(rounds.map((s) => s.attributes["huddle.round"]).sort()).toEqual(["critique", "proposals", "ratification", "synthesis"])
    for (const round of rounds) expect(ancestry(spans, round)).toContain("Council.run")
    const participants = spans.filter((s) => s.name === "Council.participant")
    for (const participant of participants) {
      const round = spans.find((s) => s.spanId === participant.parentSpanId)!
      expect(round.name).toBe("Council.round")
      expect(participant.attributes["huddle.round"]).toBe(round.attributes["huddle.round"])
      // Each participant's model calls are its own descendants.
      const byId = new Map(spans.map((s) => [s.spanId, s]))
      const under = (span: OtlpReceiver.Span): boolean => {
        for (let at = byId.get(span.parentSpanId); at !== undefined; at = byId.get(at.parentSpanId)) if (at === participant) return true
        return false
      }
      expect(spans.filter((s) => s.name.startsWith("chat ") && under(s)).length).toBeGreaterThanOrEqual(1)
    }
    // Three seats propose, critique and ratify; at least one writes the synthesis.
    const seatsIn = (round: string) => participants.filter((p) => p.attributes["huddle.round"] === round).length
    expect([seatsIn("proposals"), seatsIn("critique"), seatsIn("ratification")]).toEqual([3, 3, 3])
    expect(seatsIn("synthesis")).toBeGreaterThanOrEqual(1)
    expect(report.participants).toHaveLength(3)
  })
})

describe("SQL statements (HUDDLE_TRACE_SQL=on)", () => {
  let receiver: OtlpReceiver.OtlpReceiver
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  tracedSuite("huddle-sql", { sql: true }, (started) => ({ receiver, fake, server } = started))

  it("records each statement under the domain's span that ran it, leaves included", async () => {
    const user = await Accounts.signupAndLogin(server, "sql")
    const { key } = await Accounts.createApiKey(server, user)
    const traceId = newTraceId()
    await complete({ server, fake }, key, { answer: "Statements.", traceparent: `00-${traceId}-${newSpanId()}-01` })
    const spans = await receiver.trace(traceId, (spans) => spans.some((s) => s.name === "POST /v1/chat/completions"))
    const statements = spans.filter((s) => s.name === "sql.execute")
    expect(statements.length).toBeGreaterThan(0)
    for (const statement of statements) expect(statement.attributes["db.query.text"]).toEqual(expect.any(String))
    // The API key is looked up by a statement under authentication, a leaf otherwise.
    expect(statements.map((s) => ancestry(spans, s)[1])).toContain("Authentication.authenticate")
    // The leaves (recorded without being made current when statements are not traced) have
    // nothing below them but statements: a traced call added to one would show up here.
    const leaves = spans.filter((s) => /^(Authentication\.|Credits\.|OrgAccess\.|OrgSettings\.rulesFor|ContextAssembly\.)/.test(s.name))
    expect(leaves.length).toBeGreaterThanOrEqual(4)
    const below = spans.filter((s) => leaves.some((leaf) => leaf.spanId === s.parentSpanId))
    expect(below.length).toBeGreaterThan(0)
    for (const span of below) expect(span.name).toMatch(/^sql\./)
  })
})

describe("sampling (OTEL_TRACES_SAMPLER)", () => {
  let receiver: OtlpReceiver.OtlpReceiver
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  tracedSuite("huddle-sampled", { sampler: Tracing.samplerOf("parentbased_traceidratio", 0) }, (started) => ({ receiver, fake, server } = started))

  const completeSampled = (key: string, traceparent?: string) =>
    complete({ server, fake }, key, { answer: "Sampled?", ...(traceparent === undefined ? {} : { traceparent }) })

  it("records no trace the sampler leaves out, and tells the upstream so; a caller's sampled trace is recorded whole", async () => {
    const user = await Accounts.signupAndLogin(server, "sampled")
    const { key } = await Accounts.createApiKey(server, user)
    fake.reset()
    await completeSampled(key)
    const [unsampled] = fake.requests
    expect(unsampled!.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/)

    const traceId = newTraceId()
    await completeSampled(key, `00-${traceId}-${newSpanId()}-01`)
    const spans = await receiver.trace(traceId, (spans) => spans.some((s) => s.name === "POST /v1/chat/completions"))
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(["Credits.reserve", "chat fake-standard"]))
    // Nothing of the first request: every span received is of the caller's trace.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(new Set(receiver.spans().filter((s) => s.service === "huddle-sampled").map((s) => s.traceId))).toEqual(new Set([traceId]))
  })

  it("keeps about the ratio of new traces, decided on their ids", () => {
    const kept: Array<string> = []
    const inner = Tracer.make({
      span: (name, parent, context, links, startTime, kind) => {
        const span: Tracer.Span = {
          _tag: "Span", name, spanId: newSpanId(), traceId: newTraceId(), parent, context, status: { _tag: "Started", startTime },
          attributes: new Map(), links, sampled: true, kind, end: () => kept.push(name), attribute: () => {}, event: () => {}, addLinks: () => {}
        }
        return span
      },
      context: (f) => f()
    })
    const tracer = Tracing.sampling(inner, Tracing.samplerOf("traceidratio", 0.3))
    for (let i = 0; i < 2000; i++) tracer.span(`root ${i}`, Option.none(), Context.empty(), [], 0n, "server").end(1n, Exit.void)
    expect(kept.length).toBeGreaterThan(2000 * 0.3 - 120)
    expect(kept.length).toBeLessThan(2000 * 0.3 + 120)
  })
})

describe("the SQL client's spans, left out (withoutSql)", () => {
  /** A tracer that records the spans it makes: their names, parents and trace ids, and which ended. */
  const recording = () => {
    const made: Array<{ name: string; spanId: string; traceId: string; parentSpanId: string | undefined }> = []
    const ended: Array<string> = []
    const tracer = Tracer.make({
      span: (name, parent, context, links, startTime, kind) => {
        const span: Tracer.Span = {
          _tag: "Span", name, spanId: newSpanId(), traceId: Option.isSome(parent) ? parent.value.traceId : newTraceId(), parent, context,
          status: { _tag: "Started", startTime }, attributes: new Map(), links, sampled: true, kind,
          end: () => ended.push(name), attribute: () => {}, event: () => {}, addLinks: () => {}
        }
        made.push({ name, spanId: span.spanId, traceId: span.traceId, parentSpanId: Option.isSome(parent) ? parent.value.spanId : undefined })
        return span
      },
      context: (f) => f()
    })
    return { tracer, made, ended }
  }

  it("makes a statement or a transaction transparent: what runs in it hangs under its parent, which it never ends", () => {
    const { ended, made, tracer } = recording()
    const traced = Tracing.withoutSql(tracer)
    const request = traced.span("POST /v1/chat/completions", Option.none(), Context.empty(), [], 0n, "server")
    const transaction = traced.span("sql.transaction", Option.some(request), Context.empty(), [], 0n, "client")
    expect([transaction.spanId, transaction.traceId, transaction.sampled]).toEqual([request.spanId, request.traceId, true])
    const inner = traced.span("Credits.reserve", Option.some(transaction), Context.empty(), [], 0n, "internal")
    traced.span("sql.execute", Option.some(inner), Context.empty(), [], 0n, "client").end(1n, Exit.void)
    transaction.end(1n, Exit.void)
    expect(made.map((s) => [s.name, s.parentSpanId])).toEqual([["POST /v1/chat/completions", undefined], ["Credits.reserve", request.spanId]])
    expect(ended).toEqual([])
  })

  it("records nothing made under a statement with no parent (background work), whatever made it", () => {
    const { made, tracer } = recording()
    const traced = Tracing.withoutSql(tracer)
    const batch = traced.span("sql.transaction", Option.none(), Context.empty(), [], 0n, "client")
    expect(batch.sampled).toBe(false)
    const below = traced.span("Credits.settle", Option.some(batch), Context.empty(), [], 0n, "internal")
    traced.span("http.client POST", Option.some(below), Context.empty(), [], 0n, "client")
    expect(below.sampled).toBe(false)
    expect(made).toEqual([])
  })
})

describe("the exporter", () => {
  it("gives up on a collector that takes the connection but never answers, within the export timeout", async () => {
    let opened = 0
    let closed = 0
    // Reads what it is sent and never answers.
    const collector = net.createServer((socket) => {
      opened++
      socket.on("close", () => closed++).resume()
    })
    await new Promise<void>((done) => collector.listen(0, "127.0.0.1", done))
    const { port } = collector.address() as net.AddressInfo
    try {
      const seen = await Effect.runPromise(Effect.gen(function*() {
        yield* Effect.withSpan(Effect.void, "exported")
        yield* Effect.sleep("700 millis")
        return { opened, closed }
      }).pipe(Effect.provide(Tracing.layer({ url: `http://127.0.0.1:${port}/v1/traces`, serviceName: "timeout-check", exportInterval: "50 millis", exportTimeout: "200 millis" }))))
      // The export was sent, and its connection given up by Huddle, not kept waiting.
      expect(seen.opened).toBeGreaterThanOrEqual(1)
      expect(seen.closed).toBeGreaterThanOrEqual(1)
    } finally {
      collector.close()
    }
  })
})
