/**
 * A member whose balance cannot cover a request's worst case but can cover a useful answer gets
 * that answer with `max_tokens` lowered to what the balance pays for — said in `Huddle-Max-Tokens`
 * and in the usage — rather than 402; below the floor (256 output tokens), 402 as before. Through
 * the official `openai` SDK (chat completions, streamed or not; the Responses API), the huddle and
 * JSON-RPC, on both engines.
 */
import { Accounts, type FakeOpenAi, TestDatabase, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"

// One credit per input token, two per output token; 500 output tokens at most: a worst case of
// about 1,010 credits for a short question, and about 522 at the floor.
const catalog = [WithFakeUpstream.model("fake-economy", "economy", { upstream_model: "economy-v1", max_output_tokens: 500 })]
const starter = 700

const loweredOf = (header: string | null) => {
  const match = /^(\d+); lowered-from=(\d+)$/.exec(header ?? "")
  expect(match, `Huddle-Max-Tokens: ${header}`).not.toBeNull()
  return { to: Number(match![1]), from: Number(match![2]) }
}

describe.each(TestDatabase.availableEngines())("a small balance lowers max_tokens instead of refusing (%s)", (engine) => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let stop: () => Promise<void>
  let user: Accounts.TestUser
  let client: OpenAI

  beforeAll(async () => {
    ;({ fake, server, stop } = await WithFakeUpstream.start(catalog, { engine, starterCredits: starter }))
  }, 60_000)
  afterAll(() => stop())
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
    client = new OpenAI({ apiKey: (await Accounts.createApiKey(server, user)).key, baseURL: `${server.url}/v1`, maxRetries: 0 })
  })

  const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
  const upstreamMaxTokens = () => fake.requests.map((request) => (request.body as { max_tokens?: number }).max_tokens)

  it("answers a chat completion with max_tokens lowered, says so, charges within the balance, and refuses below the floor", async () => {
    fake.enqueue({ answer: "Short and useful.", chunks: 2, usage: { prompt_tokens: 9, completion_tokens: 300 } })
    const { data: completion, response } = await client.chat.completions.create({
      model: "fake-economy",
      messages: [{ role: "user", content: "Hi" }]
    }).withResponse()

    const lowered = loweredOf(response.headers.get("huddle-max-tokens"))
    expect(lowered.from).toBe(500)
    expect(lowered.to).toBeGreaterThanOrEqual(256)
    expect(lowered.to).toBeLessThan(500)
    // What the balance pays for: the input's worst case plus two credits a token.
    expect(2 * lowered.to).toBeLessThanOrEqual(starter)
    expect(upstreamMaxTokens()).toEqual([lowered.to])
    expect(completion.choices[0]!.message.content).toBe("Short and useful.")
    expect(completion.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 300, max_tokens_lowered: lowered })
    const charged = Number(response.headers.get("huddle-credits-charged"))
    expect(charged).toBe(9 + 2 * 300)
    expect(charged).toBeLessThanOrEqual(starter)
    expect(await balance()).toBe(starter - charged)

    // 91 credits left: less than the floor's worst case. 402, streaming or not, and nothing called.
    for (const stream of [false, true]) {
      const error = await client.chat.completions.create({ model: "fake-economy", messages: [{ role: "user", content: "Hi" }], stream })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect(error).toMatchObject({ status: 402, code: "INSUFFICIENT_CREDITS" })
    }
    expect(fake.requests).toHaveLength(1)
    expect(await balance()).toBe(starter - charged)
  })

  it("says so in the header of a stream and in its usage chunk", async () => {
    fake.enqueue({ answer: "Streamed.", chunks: 3, usage: { prompt_tokens: 9, completion_tokens: 5 } })
    const { data: stream, response } = await client.chat.completions.create({
      model: "fake-economy",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 480,
      stream: true,
      stream_options: { include_usage: true }
    }).withResponse()
    const lowered = loweredOf(response.headers.get("huddle-max-tokens"))
    expect(lowered.from).toBe(480)
    let text = ""
    let usage: unknown
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ""
      if (chunk.usage) usage = chunk.usage
    }
    expect(text).toBe("Streamed.")
    expect(usage).toMatchObject({ completion_tokens: 5, max_tokens_lowered: lowered })
    expect(upstreamMaxTokens()).toEqual([lowered.to])
    expect(await balance()).toBe(starter - (9 + 2 * 5))
  })

  it("sends no header and reserves the full worst case when the balance covers it", async () => {
    fake.enqueue({ answer: "Fine.", usage: { prompt_tokens: 9, completion_tokens: 2 } })
    const { data, response } = await client.chat.completions.create({
      model: "fake-economy",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 100
    }).withResponse()
    expect(response.headers.get("huddle-max-tokens")).toBeNull()
    expect(data.usage).not.toHaveProperty("max_tokens_lowered")
    expect(upstreamMaxTokens()).toEqual([100])
  })

  it("shows the lowered cap as the Responses API's max_output_tokens", async () => {
    fake.enqueue({ answer: "Responded.", usage: { prompt_tokens: 9, completion_tokens: 4 } })
    const { data, response } = await client.responses.create({ model: "fake-economy", input: "Hi" }).withResponse()
    const lowered = loweredOf(response.headers.get("huddle-max-tokens"))
    expect(data.max_output_tokens).toBe(lowered.to)
    expect(data.usage).toMatchObject({ output_tokens: 4, max_tokens_lowered: lowered })
    expect(upstreamMaxTokens()).toEqual([lowered.to])
  })

  it("lowers a huddle's single-mode answer and JSON-RPC's intent.submit alike, and records it", async () => {
    // The catalog has economy models only.
    await server.request("PUT", "/v1/me/preferences", { token: user.session, body: { model_tier: "economy" } })
    fake.enqueue({ answer: "Huddled.", usage: { prompt_tokens: 40, completion_tokens: 10 } })
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Hi", mode: "single" } })
    expect(res.status, res.text).toBe(200)
    const lowered = loweredOf(res.headers.get("huddle-max-tokens"))
    expect(res.body).toMatchObject({ output: "Huddled.", credits_charged: 40 + 2 * 10, max_tokens_lowered: lowered })
    expect(upstreamMaxTokens()).toEqual([lowered.to])

    fake.enqueue({ answer: "Submitted.", usage: { prompt_tokens: 40, completion_tokens: 10 } })
    const rpc = await server.request("POST", "/v1/rpc", {
      token: user.session,
      body: { jsonrpc: "2.0", id: 1, method: "intent.submit", params: { input: "Hi" } }
    })
    expect(rpc.status, rpc.text).toBe(200)
    expect(rpc.body.result).toMatchObject({ status: "completed", plan: { max_output_tokens_lowered_from: 500 } })
    expect(rpc.body.result.plan.max_output_tokens).toBe(upstreamMaxTokens()[1])
    expect(await balance()).toBe(starter - 2 * (40 + 2 * 10))
  })
})
