/**
 * Prompt caching priced at the model's cache rates (DESIGN §8, Prices), end to end: a fake OpenAI
 * upstream reporting `prompt_tokens_details.cached_tokens` and a fake Anthropic upstream reporting
 * `cache_read_input_tokens` and `cache_creation_input_tokens`, through the real server and the
 * `openai` SDK; what the caller's balance, ledger and usage show. And the rates that
 * `GET /v1/models/{model}` shows.
 */
import { Accounts, type FakeAnthropic, FakeOpenAi, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import OpenAI from "openai"
import { beforeEach, describe, expect, it } from "vitest"
import { anthropicSuite } from "./anthropicSuite.js"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

/** A prompt of about a thousand tokens: the reservation covers the scripted usages below. */
const longPrompt = "cache me ".repeat(450)

interface LedgerRow {
  readonly kind: string
  readonly delta: number
  readonly reservation_id: string | null
  readonly input_tokens: number | null
  readonly output_tokens: number | null
}

const ledgerOf = async (server: TestServer.TestServer, user: Accounts.TestUser) =>
  (await server.request("GET", "/v1/me/credits/ledger", { token: user.session })).body.data as ReadonlyArray<LedgerRow>

/** The one model call's settle row, and what its reservation cost in all (reserve and settle). */
const chargeOf = (rows: ReadonlyArray<LedgerRow>) => {
  const settle = rows.filter((row) => row.kind === "settle")
  expect(settle).toHaveLength(1)
  const reserve = rows.find((row) => row.kind === "reserve" && row.reservation_id === settle[0]!.reservation_id)!
  return { settle: settle[0]!, reserved: -reserve.delta, charged: -(reserve.delta + settle[0]!.delta) }
}

const clientFor = (server: TestServer.TestServer, apiKey: string) => new OpenAI({ apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 })

describe("an OpenAI-compatible upstream's cached prompt tokens", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let client: OpenAI

  // One credit per uncached input token, a quarter per cached one, two per output token.
  const cachedPricing = { input: 1_000_000, output: 2_000_000, cache_read: 250_000 }
  fakeUpstreamSuite(
    [
      WithFakeUpstream.model("cached-economy", "economy", { pricing: cachedPricing }),
      WithFakeUpstream.model("plain-standard", "standard")
    ],
    (started) => ({ fake, server } = started)
  )
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
    client = clientFor(server, (await Accounts.createApiKey(server, user)).key)
  })

  it("charges the cached tokens at the cache-read rate, and shows them in the usage and the ledger", async () => {
    fake.enqueue({ answer: "Cached.", usage: { prompt_tokens: 1000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 800 } } })
    const completion = await client.chat.completions.create({ model: "cached-economy", messages: [{ role: "user", content: longPrompt }] })
    // As OpenAI reports them: the prompt counts its cached tokens, which are also shown apart.
    expect(completion.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010, prompt_tokens_details: { cached_tokens: 800 } })

    // 200 uncached × 1 + 800 cached × 0.25 + 10 output × 2 = 420 (not 1,020 with no cache rate).
    const { charged, settle } = chargeOf(await ledgerOf(server, user))
    expect(charged).toBe(420)
    expect(settle).toMatchObject({ input_tokens: 1000, output_tokens: 10 })
    expect((await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance).toBe(100_000 - 420)
  })

  it("streams the same usage and charge, and charges a model without cache rates its input rate for cached tokens", async () => {
    fake.enqueue({ answer: "Cached again.", chunks: 2, usage: { prompt_tokens: 1000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 800 } } })
    const stream = await client.chat.completions.create({
      model: "cached-economy",
      messages: [{ role: "user", content: longPrompt }],
      stream: true,
      stream_options: { include_usage: true }
    })
    const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk> = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010, prompt_tokens_details: { cached_tokens: 800 } })
    expect(chargeOf(await ledgerOf(server, user)).charged).toBe(420)

    // Absent cache rates are the input rate: 1,000 prompt tokens × 1 + 10 × 2.
    const other = await Accounts.signupAndLogin(server)
    fake.enqueue({ answer: "Plain.", usage: { prompt_tokens: 1000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 800 } } })
    await clientFor(server, (await Accounts.createApiKey(server, other)).key).chat.completions.create({
      model: "plain-standard",
      messages: [{ role: "user", content: longPrompt }]
    })
    expect(chargeOf(await ledgerOf(server, other)).charged).toBe(1020)
  })

  it("shows a catalog model's pricing at GET /v1/models/{model} and in the listing; a tier shows none", async () => {
    const found = await server.request("GET", "/v1/models/cached-economy", { token: user.session })
    expect(found.status).toBe(200)
    expect(found.body).toEqual({ id: "cached-economy", object: "model", created: expect.any(Number), owned_by: "fake", pricing: cachedPricing })
    // Absent cache rates stay absent: they are the input rate.
    expect((await client.models.retrieve("plain-standard")) as unknown).toMatchObject({ pricing: { input: 1_000_000, output: 2_000_000 } })
    const tier = await server.request("GET", "/v1/models/economy", { token: user.session })
    expect(tier.body).toEqual({ id: "economy", object: "model", created: expect.any(Number), owned_by: "huddle" })

    const listed = (await client.models.list()).data as unknown as ReadonlyArray<{ readonly id: string; readonly pricing?: unknown }>
    expect(listed.find((model) => model.id === "cached-economy")!.pricing).toEqual(cachedPricing)
    expect(listed.filter((model) => model.pricing === undefined).map((model) => model.id)).toEqual(
      expect.arrayContaining(["economy", "standard"])
    )
  })
})

describe("an Anthropic upstream's cache reads and writes", () => {
  let anthropic: FakeAnthropic.FakeAnthropic
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let client: OpenAI

  // claude-fake: one credit per input token, two per output token, 0.1 per cache read, 1.25 per cache write.
  anthropicSuite((started) => ({ anthropic, server } = started))
  beforeEach(async () => {
    anthropic.reset()
    user = await Accounts.signupAndLogin(server)
    client = clientFor(server, (await Accounts.createApiKey(server, user)).key)
  })

  it("charges cache reads and writes at their rates, the prompt's every token in the ledger", async () => {
    anthropic.enqueue({
      answer: "From the cache.",
      usage: { input_tokens: 50, output_tokens: 7, cache_creation_input_tokens: 300, cache_read_input_tokens: 600 }
    })
    const completion = await client.chat.completions.create({ model: "claude-fake", messages: [{ role: "user", content: longPrompt }] })
    expect(completion.usage).toEqual({ prompt_tokens: 950, completion_tokens: 7, total_tokens: 957, prompt_tokens_details: { cached_tokens: 600 } })

    // 50 × 1 + 300 written × 1.25 + 600 read × 0.1 + 7 × 2 = 50 + 375 + 60 + 14 = 499.
    const { charged, reserved, settle } = chargeOf(await ledgerOf(server, user))
    expect(charged).toBe(499)
    expect(settle).toMatchObject({ input_tokens: 950, output_tokens: 7 })
    // The reservation priced the prompt at the cache-write rate, the dearest: it covers a prompt all written to the cache.
    expect(reserved).toBeGreaterThanOrEqual(Math.ceil(950 * 1.25) + 2 * 7)
  })

  it("reserves enough for a prompt written whole to the cache at 1.25×, and charges it in full", async () => {
    // The prompt as the quote estimates it with its headroom: (3 + 4 + 4,050 characters / 4) × 1.25 = 1,275
    // tokens; the provider reports all of them written to its cache, and the 3 output tokens asked for.
    anthropic.enqueue({ answer: "Written.", chunks: 1, usage: { input_tokens: 0, output_tokens: 3, cache_creation_input_tokens: 1275 } })
    const stream = await client.chat.completions.create({
      model: "claude-fake",
      messages: [{ role: "user", content: longPrompt }],
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true }
    })
    for await (const _ of stream) { /* drained */ }
    // ceil(1,275 × 1.25) + 3 × 2 = 1,594 + 6 = 1,600: a reservation at the input rate (1,281) would have cut it short.
    const { charged, reserved } = chargeOf(await ledgerOf(server, user))
    expect(charged).toBe(1600)
    expect(reserved).toBe(1600)
  })
})
