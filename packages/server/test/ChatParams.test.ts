/**
 * The parameters of a chat completion beyond the conversation, through the official `openai`
 * SDK against the in-process server with a fake OpenAI-compatible upstream, a fake Anthropic
 * upstream and the offline model: each one reaches the provider (as it is, or translated), is
 * applied, or is refused with a 400 naming it before anything is reserved (docs/models.md).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Accounts, FakeAnthropic, FakeOpenAi, TestServer } from "@huddle/testkit"
import { Redacted } from "effect"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"

const entry = (id: string, tier: string, provider: string) => ({
  id,
  tier,
  provider,
  pricing: { input: 1_000_000, output: 2_000_000 },
  context_window: 16_000,
  max_output_tokens: 200
})

// Each tier tries a model that cannot take some parameters first, to show that it is skipped.
const catalog = {
  models: [
    entry("offline-economy", "economy", "offline"),
    entry("gpt-fake", "economy", "fake"),
    entry("claude-fake", "standard", "anthropic"),
    entry("offline-standard", "standard", "offline"),
    entry("offline-premium", "premium", "offline")
  ]
}

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming

const question = [{ role: "user" as const, content: "Is the build green?" }]

describe("chat completion parameters, per provider", () => {
  let openai: FakeOpenAi.FakeOpenAi
  let anthropic: FakeAnthropic.FakeAnthropic
  let server: TestServer.TestServer
  let dir: string
  let user: Accounts.TestUser
  let client: OpenAI

  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
  const sentTo = (fake: { readonly requests: ReadonlyArray<{ readonly body: unknown }> }) =>
    fake.requests.map((request) => request.body as Record<string, unknown>)

  /** The error a request is refused with, after checking that nothing was called or charged. */
  const refusal = async (params: Params) => {
    const before = await balance()
    const error = await client.chat.completions.create(params).then(
      () => expect.unreachable("the request was answered"),
      (error: unknown) => error
    )
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect(openai.requests).toHaveLength(0)
    expect(anthropic.requests).toHaveLength(0)
    expect(await balance()).toBe(before)
    return error as InstanceType<typeof OpenAI.BadRequestError>
  }

  beforeAll(async () => {
    openai = await FakeOpenAi.start()
    anthropic = await FakeAnthropic.start()
    dir = mkdtempSync(join(tmpdir(), "huddle-params-"))
    writeFileSync(join(dir, "catalog.json"), JSON.stringify(catalog))
    server = await TestServer.start({
      starterCredits: 100_000,
      providers: {
        servers: [{ name: "fake", baseUrl: openai.baseUrl, apiKey: Redacted.make("sk-fake") }],
        anthropic: { apiKey: Redacted.make("sk-ant-fake"), baseUrl: anthropic.url }
      },
      catalog: { path: join(dir, "catalog.json") }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await openai?.stop()
    await anthropic?.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  beforeEach(async () => {
    openai.reset()
    anthropic.reset()
    user = await Accounts.signupAndLogin(server)
    client = new OpenAI({ apiKey: (await Accounts.createApiKey(server, user)).key, baseURL: `${server.url}/v1`, maxRetries: 0 })
  })

  it("passes every sampling and identifying parameter to an OpenAI-compatible upstream with its value", async () => {
    openai.enqueue({ answer: "Green.", usage: { prompt_tokens: 10, completion_tokens: 2 } })
    const passed = {
      top_p: 0.9,
      stop: ["\n\n", "END"],
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.25,
      logit_bias: { "50256": -100 },
      user: "user-7",
      safety_identifier: "hash-7",
      prompt_cache_key: "build-questions",
      reasoning_effort: "low" as const,
      verbosity: "high" as const,
      service_tier: "default" as const,
      parallel_tool_calls: false,
      tools: [{ type: "function" as const, function: { name: "ci_status", parameters: { type: "object", properties: {} } } }]
    }
    const completion = await client.chat.completions.create({ model: "gpt-fake", messages: question, store: false, ...passed })
    expect(completion.choices[0]!.message.content).toBe("Green.")
    const [sent] = sentTo(openai)
    expect(sent).toMatchObject({ model: "gpt-fake", ...passed })
    // `store: false` is what Huddle does anyway; it is not forwarded.
    expect(sent).not.toHaveProperty("store")
    expect(await balance()).toBe(100_000 - (10 + 2 * 2))
  })

  it("translates stop, top_p and user for Anthropic, and sends no neutral parameter it has no word for", async () => {
    anthropic.enqueue({ answer: "Green.", stopReason: "stop_sequence", usage: { input_tokens: 12, output_tokens: 3 } })
    const completion = await client.chat.completions.create({
      model: "claude-fake",
      messages: question,
      stop: "END",
      top_p: 0.8,
      user: "user-7",
      presence_penalty: 0,
      frequency_penalty: 0,
      logit_bias: {},
      service_tier: "auto"
    })
    expect(completion.choices[0]!).toMatchObject({ message: { content: "Green." }, finish_reason: "stop" })
    const [sent] = sentTo(anthropic)
    expect(sent).toMatchObject({ model: "claude-fake", stop_sequences: ["END"], top_p: 0.8, metadata: { user_id: "user-7" } })
    for (const absent of ["stop", "user", "presence_penalty", "frequency_penalty", "logit_bias", "service_tier", "seed"]) {
      expect(sent).not.toHaveProperty(absent)
    }
    expect(await balance()).toBe(100_000 - (12 + 2 * 3))
  })

  it("has the offline model stop before the first stop sequence, finishing with stop", async () => {
    const plain = await client.chat.completions.create({ model: "offline-premium", messages: question })
    expect(plain.choices[0]!.message.content).toContain("no model provider was called.\nYou asked")
    const stopped = await client.chat.completions.create({
      model: "offline-premium",
      messages: question,
      stop: ["You asked", "no model provider"],
      seed: 3,
      top_p: 0.5
    })
    expect(stopped.choices[0]!).toMatchObject({
      message: { content: "[offline] This answer comes from the offline model (offline-premium):" },
      finish_reason: "stop"
    })
    expect(stopped.usage!.completion_tokens).toBe(Math.ceil(stopped.choices[0]!.message.content!.length / 4))
    expect(stopped.usage!.completion_tokens).toBeLessThan(plain.usage!.completion_tokens)
  })

  it("answers a tier with its configured model, even with an offline model listed ahead of it", async () => {
    openai.enqueue({ answer: "From the upstream.", usage: { prompt_tokens: 5, completion_tokens: 3 } })
    const penalised = await client.chat.completions.create({ model: "economy", messages: question, presence_penalty: 1 })
    expect(penalised.choices[0]!.message.content).toBe("From the upstream.")
    expect(sentTo(openai)[0]).toMatchObject({ presence_penalty: 1 })

  })

  it("does not hand a parameter the tier's configured model cannot take to the offline model: it refuses it (decision 0034)", async () => {
    // The standard tier is claude-fake; its offline model is no stand-in without HUDDLE_OFFLINE_FALLBACK=on.
    const refused = await refusal({ model: "standard", messages: question, seed: 9 })
    expect(refused).toMatchObject({ status: 400, param: "seed" })
    expect(refused.message).toContain("asked of claude-fake")
  })

  it("refuses, naming it, a parameter no model of the target can take, before anything is reserved", async () => {
    expect(await refusal({ model: "claude-fake", messages: question, seed: 7 })).toMatchObject({ status: 400, param: "seed" })
    expect((await refusal({ model: "claude-fake", messages: question, seed: 7 })).message).toContain("`seed` is not supported by Anthropic")
    expect(await refusal({ model: "standard", messages: question, logit_bias: { "1": 5 } })).toMatchObject({ param: "logit_bias" })
    expect(await refusal({ model: "offline-premium", messages: question, frequency_penalty: 0.1 }))
      .toMatchObject({ param: "frequency_penalty" })
    expect(await refusal({ model: "claude-fake", messages: question, reasoning_effort: "high" })).toMatchObject({ param: "reasoning_effort" })
    expect(await refusal({ model: "claude-fake", messages: question, stop: "\n" })).toMatchObject({ param: "stop" })
  })

  it("refuses, naming it, a parameter Huddle does not honour for any provider", async () => {
    const cases: ReadonlyArray<readonly [string, Partial<Params>]> = [
      ["n", { n: 2 }],
      ["logprobs", { logprobs: true }],
      ["top_logprobs", { top_logprobs: 2 }],
      ["store", { store: true }],
      ["metadata", { metadata: { team: "ci" } }],
      ["service_tier", { service_tier: "priority" }],
      ["prediction", { prediction: { type: "content", content: "Green." } }],
      // Options of a stream, without one.
      ["stream_options", { stream_options: { include_usage: true } }],
      // Not an OpenAI parameter at all: refused as OpenAI refuses it, not dropped.
      ["top_k", { top_k: 40 } as Partial<Params>]
    ]
    for (const [param, extra] of cases) {
      const error = await refusal({ model: "gpt-fake", messages: question, ...extra })
      expect({ param: error.param, message: error.message }).toEqual({ param, message: expect.stringContaining(param) })
    }
  })
})
