import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as OpenAiCompatibleProvider from "@huddle/adapters/models/OpenAiCompatibleProvider"
import { CatalogModel, type ModelChunk, type ModelRequest } from "@huddle/domain/models/Model"
import type { Provider, ProviderFailure } from "@huddle/domain/models/ModelProviders"
import * as FakeOpenAi from "@huddle/testkit/FakeOpenAi"
import { Chunk, Duration, Effect, Either, Fiber, Redacted, type Scope, Stream } from "effect"

const secret = "sk-test-0123456789abcdef"

const model = new CatalogModel({
  id: "gpt-test",
  tier: "economy",
  provider: "openai",
  upstream_model: "gpt-upstream-name",
  pricing: { input: 1000, output: 2000 },
  context_window: 8192,
  max_output_tokens: 512
})

const request: ModelRequest = {
  model,
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Say hello" }
  ],
  temperature: 0.3,
  maxOutputTokens: 64
}

interface Setup {
  readonly fake: FakeOpenAi.FakeOpenAi
  readonly provider: Provider
}

const setup = (options: { readonly timeout?: Duration.DurationInput; readonly apiKey?: string | null } = {}): Effect.Effect<Setup, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fake = yield* FakeOpenAi.scoped({ apiKey: secret })
    const apiKey = options.apiKey === undefined ? secret : options.apiKey
    const provider = yield* OpenAiCompatibleProvider.make({
      name: "openai",
      baseUrl: fake.baseUrl,
      apiKey: apiKey === null ? undefined : Redacted.make(apiKey),
      timeout: options.timeout ?? "2 seconds"
    })
    return { fake, provider }
  })

const collect = (provider: Provider, req: ModelRequest = request) =>
  Stream.runCollect(provider.stream(req)).pipe(Effect.map(Chunk.toReadonlyArray))

/** Every chunk up to the failure, and the failure. */
const untilFailure = (provider: Provider, req: ModelRequest = request) =>
  provider.stream(req).pipe(
    Stream.either,
    Stream.runCollect,
    Effect.map((items) => {
      const all = Chunk.toReadonlyArray(items)
      const chunks = all.flatMap((item) => (Either.isRight(item) ? [item.right] : []))
      const failure = all.flatMap((item) => (Either.isLeft(item) ? [item.left] : []))[0]
      return { chunks, failure }
    })
  )

const textOf = (chunks: ReadonlyArray<ModelChunk>) => chunks.flatMap((chunk) => (chunk._tag === "Delta" ? [chunk.text] : [])).join("")
const tagsOf = (chunks: ReadonlyArray<ModelChunk>) => chunks.map((chunk) => chunk._tag)

const sse = (...events: ReadonlyArray<string>) => ({
  status: 200,
  headers: { "content-type": "text/event-stream" },
  body: events.map((event) => `data: ${event}\n\n`).join("")
})

/** A loopback server that answers every request with `handler`, for bodies the fake cannot write; closed with the scope. */
const rawServer = (handler: (res: ServerResponse, req: IncomingMessage) => void): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<ReturnType<typeof createServer>>((resolve) => {
        const server = createServer((req, res) => {
          req.resume()
          handler(res, req)
        })
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
    ),
    (server) => Effect.promise(() => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }))
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`))

const expectNoSecret = (failure: ProviderFailure) => {
  expect(failure.message).not.toContain(secret)
  expect(JSON.stringify(failure)).not.toContain(secret)
  expect(String(failure)).not.toContain(secret)
}

describe("OpenAiCompatibleProvider", () => {
  it.scopedLive("streams the deltas in order, then usage, then finish, and sends the request OpenAI expects", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const answer = "The quick brown fox jumps over the lazy dog."
      fake.enqueue({ answer, chunks: 5, usage: { prompt_tokens: 21, completion_tokens: 9 } })
      const chunks = yield* collect(provider)
      expect(tagsOf(chunks)).toEqual(["Delta", "Delta", "Delta", "Delta", "Delta", "Usage", "Finish"])
      expect(textOf(chunks)).toBe(answer)
      expect(chunks[5]).toMatchObject({ _tag: "Usage", usage: { input_tokens: 21, output_tokens: 9 } })
      expect(chunks[6]).toEqual({ _tag: "Finish", reason: "stop" })

      const [received] = fake.requests
      expect(received?.method).toBe("POST")
      expect(received?.path).toBe("/v1/chat/completions")
      expect(received?.headers.authorization).toBe(`Bearer ${secret}`)
      expect(received?.headers["content-type"]).toContain("application/json")
      expect(received?.body).toEqual({
        model: "gpt-upstream-name",
        messages: request.messages,
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 64,
        temperature: 0.3
      })
    }))

  it.scopedLive("reports the prompt's cached tokens as cache reads, the rest as uncached input", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(
        { answer: "cached", usage: { prompt_tokens: 1000, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 768 } } },
        { answer: "none cached", usage: { prompt_tokens: 30, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 0 } } }
      )
      const cached = yield* collect(provider)
      expect(cached.find((chunk) => chunk._tag === "Usage")).toEqual({
        _tag: "Usage",
        usage: { input_tokens: 232, output_tokens: 4, cache_read_tokens: 768 }
      })
      const uncached = yield* collect(provider)
      expect(uncached.find((chunk) => chunk._tag === "Usage")).toEqual({ _tag: "Usage", usage: { input_tokens: 30, output_tokens: 4 } })
    }))

  it.scopedLive("reads usage in each placement, and emits no Usage when there is none", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const usage = { prompt_tokens: 12, completion_tokens: 4 }
      fake.enqueue(
        { answer: "one two three four", usage, usagePlacement: "final-chunk", finishReason: "length" },
        { answer: "one two three four", usage, usagePlacement: "last-content-chunk" },
        { answer: "one two three four", usage, usagePlacement: "missing" }
      )
      const finalChunk = yield* collect(provider)
      expect(finalChunk.slice(-2)).toMatchObject([{ _tag: "Usage", usage: { input_tokens: 12, output_tokens: 4 } }, { _tag: "Finish", reason: "length" }])
      const lastContent = yield* collect(provider)
      expect(textOf(lastContent)).toBe("one two three four")
      expect(lastContent.slice(-2)).toMatchObject([{ _tag: "Usage", usage: { input_tokens: 12, output_tokens: 4 } }, { _tag: "Finish", reason: "stop" }])
      const missing = yield* collect(provider)
      expect(textOf(missing)).toBe("one two three four")
      expect(tagsOf(missing)).not.toContain("Usage")
      expect(missing.at(-1)).toEqual({ _tag: "Finish", reason: "stop" })
    }))

  it.scopedLive("keeps the last usage when several chunks carry one", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(sse(
        `{"choices":[{"delta":{"content":"a"},"finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`,
        `{"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`,
        `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}`,
        "[DONE]"
      ))
      const chunks = yield* collect(provider)
      expect(chunks).toMatchObject([
        { _tag: "Delta", text: "a" },
        { _tag: "Delta", text: "b" },
        { _tag: "Usage", usage: { input_tokens: 5, output_tokens: 3 } },
        { _tag: "Finish", reason: "stop" }
      ])
    }))

  it.scopedLive("accepts a stream that ends after a finish_reason without [DONE]", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({ answer: "no done marker", omitDone: true, usage: { prompt_tokens: 3, completion_tokens: 3 } })
      const chunks = yield* collect(provider)
      expect(textOf(chunks)).toBe("no done marker")
      expect(chunks.slice(-2)).toMatchObject([{ _tag: "Usage" }, { _tag: "Finish", reason: "stop" }])
    }))

  it.scopedLive("fails with a retryable connection failure when the stream ends without finish_reason or [DONE]", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(sse(`{"choices":[{"delta":{"content":"cut"},"finish_reason":null}]}`))
      const { chunks, failure } = yield* untilFailure(provider)
      expect(textOf(chunks)).toBe("cut")
      expect(failure).toMatchObject({ _tag: "ProviderFailure", reason: "connection", retryable: true })
    }))

  it.scopedLive("429 with Retry-After in seconds: rate_limited, retryable, with that delay", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(FakeOpenAi.rateLimited("7"))
      const failure = yield* Effect.flip(collect(provider))
      expect(failure).toMatchObject({ provider: "openai", model: "gpt-test", reason: "rate_limited", retryable: true, status: 429 })
      expect(failure.retryAfter && Duration.toMillis(failure.retryAfter)).toBe(7000)
      expect(failure.message).toContain("Rate limit reached")
    }))

  it.scopedLive("429 with Retry-After as an HTTP date: the delay until then", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(FakeOpenAi.rateLimited(new Date(Date.now() + 30_000).toUTCString()))
      const failure = yield* Effect.flip(collect(provider))
      expect(failure.reason).toBe("rate_limited")
      const millis = failure.retryAfter ? Duration.toMillis(failure.retryAfter) : -1
      // HTTP dates have whole seconds.
      expect(millis).toBeGreaterThan(28_000)
      expect(millis).toBeLessThanOrEqual(30_000)
    }))

  it.scopedLive("429 without Retry-After: retryable, no delay given", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(FakeOpenAi.rateLimited())
      const failure = yield* Effect.flip(collect(provider))
      expect(failure).toMatchObject({ reason: "rate_limited", retryable: true })
      expect(failure.retryAfter).toBeUndefined()
    }))

  it.scopedLive("5xx: server_error, retryable", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(FakeOpenAi.serverError(500), FakeOpenAi.serverError(503))
      expect(yield* Effect.flip(collect(provider))).toMatchObject({ reason: "server_error", retryable: true, status: 500 })
      expect(yield* Effect.flip(collect(provider))).toMatchObject({ reason: "server_error", retryable: true, status: 503 })
    }))

  it.scopedLive("400: rejected, not retryable, with the upstream's message", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(FakeOpenAi.badRequest("max_tokens is too large"))
      const failure = yield* Effect.flip(collect(provider))
      expect(failure).toMatchObject({ reason: "rejected", retryable: false, status: 400 })
      expect(failure.message).toContain("max_tokens is too large")
    }))

  it.scopedLive("a wrong API key: rejected, and the key never appears in the failure even when the upstream echoes it", () =>
    Effect.gen(function*() {
      const wrong = "sk-wrong-key-abcdef0123456789"
      const { fake, provider } = yield* setup({ apiKey: wrong })
      const failure = yield* Effect.flip(collect(provider))
      expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${wrong}`)
      expect(failure).toMatchObject({ reason: "rejected", retryable: false, status: 401 })
      expect(failure.message).toContain("Incorrect API key provided")
      expect(failure.message).not.toContain(wrong)
      expect(JSON.stringify(failure)).not.toContain(wrong)
    }))

  it.scopedLive("sends no Authorization header without an API key", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      const provider = yield* OpenAiCompatibleProvider.make({ name: "local", baseUrl: `${fake.baseUrl}/`, timeout: "2 seconds" })
      const chunks = yield* collect(provider)
      expect(textOf(chunks)).toBe(FakeOpenAi.defaultAnswer)
      expect(fake.requests[0]?.path).toBe("/v1/chat/completions")
      expect(fake.requests[0]?.headers.authorization).toBeUndefined()
    }))

  it.scopedLive("a connection dropped mid-stream: a retryable connection failure after the chunks already delivered", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({ answer: "alpha beta gamma delta epsilon", dropAfterChunks: 2 })
      const { chunks, failure } = yield* untilFailure(provider)
      expect(textOf(chunks)).toBe("alpha beta ")
      expect(failure).toMatchObject({ reason: "connection", retryable: true })
      if (failure) expectNoSecret(failure)
    }))

  it.scopedLive("a malformed data line: bad_response, not retryable, after the chunks before it", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({ answer: "alpha beta gamma", malformedAfterChunks: 1 })
      const { chunks, failure } = yield* untilFailure(provider)
      expect(textOf(chunks)).toBe("alpha ")
      expect(failure).toMatchObject({ reason: "bad_response", retryable: false })
    }))

  it.scopedLive("a body that is not an event stream: bad_response", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(
        { status: 200, headers: { "content-type": "text/html" }, body: "<html>captive portal</html>" },
        { status: 200, body: { id: "chatcmpl-1", object: "chat.completion", choices: [] } },
        { status: 200, headers: { "content-type": "text/event-stream" }, body: "this is not\nserver-sent events\n" }
      )
      for (let i = 0; i < 3; i++) {
        expect(yield* Effect.flip(collect(provider))).toMatchObject({ reason: "bad_response", retryable: false })
      }
    }))

  it.scopedLive("an error chunk in the stream: server_error", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue(sse(
        `{"choices":[{"delta":{"content":"partial"},"finish_reason":null}]}`,
        `{"error":{"message":"upstream provider overloaded","code":502},"choices":[{"delta":{"content":""},"finish_reason":"error"}]}`
      ))
      const { chunks, failure } = yield* untilFailure(provider)
      expect(textOf(chunks)).toBe("partial")
      expect(failure).toMatchObject({ reason: "server_error", retryable: true })
      expect(failure?.message).toContain("upstream provider overloaded")
    }))

  it.scopedLive("times out, retryably, when the first byte is too slow, and aborts the request", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup({ timeout: "200 millis" })
      fake.enqueue({ answer: "too late", firstByteDelayMs: 3000 })
      const started = Date.now()
      const failure = yield* Effect.flip(collect(provider))
      expect(Date.now() - started).toBeLessThan(1500)
      expect(failure).toMatchObject({ reason: "timeout", retryable: true })
      const disconnects = yield* Effect.promise(() => fake.waitForDisconnects(1, 1000))
      expect(disconnects[0]?.chunksWritten).toBe(0)
    }))

  it.scopedLive("times out when the stream goes silent between chunks", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup({ timeout: "300 millis" })
      fake.enqueue({ answer: "slow and steady", chunks: ["slow ", "and ", "steady"], chunkDelayMs: 2000 })
      const { failure } = yield* untilFailure(provider)
      expect(failure).toMatchObject({ reason: "timeout", retryable: true })
      yield* Effect.promise(() => fake.waitForDisconnects(1, 1000))
    }))

  it.scopedLive("stops waiting for a silent upstream at the call's deadline, long before its silence limit, and closes the connection", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup({ timeout: "60 seconds" })
      fake.enqueue({ answer: "slow and steady", chunks: ["slow ", "and ", "steady"], chunkDelayMs: 5000 })
      const started = Date.now()
      const { failure } = yield* untilFailure(provider, { ...request, deadline: started + 400 })
      const took = Date.now() - started
      expect(failure).toMatchObject({ reason: "timeout", message: expect.stringContaining("deadline") })
      expect(took).toBeGreaterThanOrEqual(390)
      expect(took).toBeLessThan(2_000)
      yield* Effect.promise(() => fake.waitForDisconnects(1, 1000))
    }))

  it.scopedLive("a refused connection: a retryable connection failure", () =>
    Effect.gen(function*() {
      const closed = yield* Effect.promise(() => FakeOpenAi.start())
      yield* Effect.promise(() => closed.stop())
      const provider = yield* OpenAiCompatibleProvider.make({
        name: "openai",
        baseUrl: closed.baseUrl,
        apiKey: Redacted.make(secret),
        timeout: "2 seconds"
      })
      const failure = yield* Effect.flip(collect(provider))
      expect(failure).toMatchObject({ reason: "connection", retryable: true })
      expectNoSecret(failure)
    }))

  it.scopedLive("taking part of the stream closes the connection: the upstream sees the client leave", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.enqueue({ answer: "one two three four five six seven eight nine ten", chunkDelayMs: 100 })
      const taken = yield* provider.stream(request).pipe(
        Stream.filter((chunk) => chunk._tag === "Delta"),
        Stream.take(2),
        Stream.runCollect
      )
      expect(textOf(Chunk.toReadonlyArray(taken))).toBe("one two ")
      const [disconnect] = yield* Effect.promise(() => fake.waitForDisconnects(1, 1000))
      expect(disconnect?.chunksWritten).toBeLessThan(10)
    }))

  it.scopedLive("interrupting the fiber aborts the request in flight", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup({ timeout: "10 seconds" })
      fake.enqueue({ answer: "never sent", firstByteDelayMs: 5000 })
      const fiber = yield* Effect.fork(collect(provider))
      yield* Effect.promise(() => fake.waitForRequests(1, 1000))
      yield* Fiber.interrupt(fiber)
      const [disconnect] = yield* Effect.promise(() => fake.waitForDisconnects(1, 1000))
      expect(disconnect?.chunksWritten).toBe(0)
    }))

  it.scopedLive("decodes a body that arrives in small pieces, with CRLF line ends and characters split between pieces", () =>
    Effect.gen(function*() {
      const answer = ["héllo ", "😀 ", "wörld"]
      const body = Buffer.from([
        ": keep-alive",
        "",
        ...answer.flatMap((text) => [`data: {"choices":[{"delta":{"content":${JSON.stringify(text)}},"finish_reason":null}]}`, ""]),
        `data:{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":3}}`,
        "",
        "data: [DONE]",
        "",
        ""
      ].join("\r\n"))
      const baseUrl = yield* rawServer(async (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        for (let at = 0; at < body.length; at += 5) {
          res.write(body.subarray(at, at + 5))
          await new Promise((resolve) => setTimeout(resolve, 1))
        }
        res.end()
      })
      const provider = yield* OpenAiCompatibleProvider.make({ name: "openai", baseUrl, timeout: "2 seconds" })
      const chunks = yield* collect(provider)
      expect(chunks).toMatchObject([
        ...answer.map((text) => ({ _tag: "Delta", text })),
        { _tag: "Usage", usage: { input_tokens: 3, output_tokens: 3 } },
        { _tag: "Finish", reason: "stop" }
      ])
    }))

  it.scopedLive("ends at [DONE] when the body stays open after it, and closes the connection", () =>
    Effect.gen(function*() {
      let left: () => void = () => {}
      const clientLeft = new Promise<void>((resolve) => (left = resolve))
      const baseUrl = yield* rawServer((res) => {
        res.on("close", () => left())
        res.writeHead(200, { "content-type": "text/event-stream" })
        // …and never ends.
        res.write(`data: {"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`)
      })
      const provider = yield* OpenAiCompatibleProvider.make({ name: "openai", baseUrl, timeout: "10 seconds" })
      const started = Date.now()
      expect(yield* collect(provider)).toEqual([{ _tag: "Delta", text: "hi" }, { _tag: "Finish", reason: "stop" }])
      expect(Date.now() - started).toBeLessThan(2_000)
      yield* Effect.promise(() => clientLeft).pipe(Effect.timeout("2 seconds"))
    }))

  it.scopedLive("a slow consumer is not a silent upstream: the idle timeout counts only while waiting for data", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup({ timeout: "200 millis" })
      fake.enqueue({ answer: "one two three", chunks: ["one ", "two ", "three"], chunkDelayMs: 20 })
      const chunks = yield* provider.stream(request).pipe(
        Stream.tap(() => Effect.sleep("300 millis")),
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray)
      )
      expect(textOf(chunks)).toBe("one two three")
      expect(chunks.at(-1)).toEqual({ _tag: "Finish", reason: "stop" })
    }))

  it.scopedLive("a completed stream is not counted as a disconnect", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      yield* collect(provider)
      yield* collect(provider)
      expect(fake.requests).toHaveLength(2)
      yield* Effect.sleep("50 millis")
      expect(fake.disconnects).toHaveLength(0)
    }))
})
