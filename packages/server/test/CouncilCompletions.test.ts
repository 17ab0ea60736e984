/**
 * Chat completions (and responses) through a council model id, with the official `openai` SDK
 * against the in-process server and a fake OpenAI-compatible upstream that answers the council's
 * rounds: the listing, the consensus as the answer with its report in `consensus`, exact usage
 * and credits, streams, and what is refused before any model is called.
 */
import { Accounts, FakeOpenAi, Operator, Orgs, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import OpenAI from "openai"
import { beforeEach, describe, expect, it } from "vitest"
import { answerCouncil, consensusText, dissent, position, roundOfRequest, usagePerCall } from "./councilUpstream.js"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.pricing: one credit per input token, two per output token.
const catalog = [
  WithFakeUpstream.model("fake-economy-a", "economy", { upstream_model: "econ-a" }),
  WithFakeUpstream.model("fake-economy-b", "economy", { upstream_model: "econ-b" }),
  WithFakeUpstream.model("fake-standard", "standard"),
  WithFakeUpstream.model("fake-premium", "premium")
]

/** Three seats (econ-a, econ-b, econ-a): three proposals, three critiques, one synthesis, three votes. */
const calls = 10
const perCall = usagePerCall.prompt_tokens + 2 * usagePerCall.completion_tokens

/** A report as the wire carries it. */
interface Report {
  readonly text: string
  readonly position: string
  readonly agreement_ratio: number
  readonly participants: ReadonlyArray<{ seat: number; model: string; vote: string; endorsed: boolean | null; credits: number; usage: { input_tokens: number; output_tokens: number } }>
  readonly dissents: ReadonlyArray<{ seat: number; model: string; claim: string; rationale: string }>
  readonly dropped: ReadonlyArray<{ model: string; reason: string }>
  readonly rounds: number
}

const reportOf = (value: unknown): Report => (value as { consensus: Report }).consensus

describe("chat completions through a council model id", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let client: OpenAI

  const clientFor = async (someone: Accounts.TestUser, organization?: string) =>
    new OpenAI({
      apiKey: (await Accounts.createApiKey(server, someone)).key,
      baseURL: `${server.url}/v1`,
      maxRetries: 0,
      ...(organization === undefined ? {} : { organization })
    })
  const balanceOf = async (someone: Accounts.TestUser) =>
    (await server.request("GET", "/v1/me", { token: someone.session })).body.credits.balance as number
  /** A user the starter grant leaves short of any council's worst case, topped up to run one. */
  const funded = async () => {
    const someone = await Accounts.signupAndLogin(server)
    await Operator.grant(server, { user_id: someone.id }, 99_000)
    return someone
  }

  // A thousand credits cover a single answer, not a council.
  fakeUpstreamSuite(catalog, (started) => ({ fake, server } = started), { starterCredits: 1_000 })
  beforeEach(async () => {
    fake.reset()
    answerCouncil(fake, { dissenter: "econ-b" })
    user = await funded()
    client = await clientFor(user)
  })

  it("lists the councils that can be seated beside the tiers, and retrieves one", async () => {
    const page = await client.models.list()
    expect(page.data.map((m) => [m.id, m.owned_by])).toEqual([
      ["economy", "huddle"],
      ["standard", "huddle"],
      ["premium", "huddle"],
      ["council", "huddle"],
      ["council-economy", "huddle"],
      ["council-standard", "huddle"],
      ["council-premium", "huddle"],
      ["fake-economy-a", "fake"],
      ["fake-economy-b", "fake"],
      ["fake-standard", "fake"],
      ["fake-premium", "fake"]
    ])
    await expect(client.models.retrieve("council-economy")).resolves.toMatchObject({ id: "council-economy", object: "model", owned_by: "huddle" })
    await expect(client.models.retrieve("council-ultra")).rejects.toBeInstanceOf(OpenAI.NotFoundError)
  })

  it("answers with the consensus, its report in `consensus`, the run's usage, and charges exactly the participants' credits", async () => {
    const before = await balanceOf(user)
    const { data: completion, response } = await client.chat.completions.create({
      model: "council-economy",
      messages: [{ role: "user", content: "Where should the ledger live?" }]
    }).withResponse()

    expect(completion).toMatchObject({
      object: "chat.completion",
      model: "council-economy",
      choices: [{ index: 0, message: { role: "assistant", content: consensusText }, finish_reason: "stop" }],
      usage: {
        prompt_tokens: calls * usagePerCall.prompt_tokens,
        completion_tokens: calls * usagePerCall.completion_tokens,
        total_tokens: calls * (usagePerCall.prompt_tokens + usagePerCall.completion_tokens)
      }
    })
    const report = reportOf(completion)
    expect(report).toMatchObject({ text: consensusText, position, rounds: 4, dropped: [] })
    expect(report.participants.map((p) => [p.seat, p.model, p.vote, p.endorsed])).toEqual([
      [1, "fake-economy-a", "endorse", true],
      [2, "fake-economy-b", "dissent", false],
      [3, "fake-economy-a", "endorse", true]
    ])
    expect(report.agreement_ratio).toBeCloseTo(2 / 3)
    expect(report.dissents).toEqual([{ seat: 2, model: "fake-economy-b", ...dissent }])

    // The charge is what the report says each participant cost, and nothing else.
    const charged = report.participants.reduce((sum, p) => sum + p.credits, 0)
    expect(charged).toBe(calls * perCall)
    expect(response.headers.get("huddle-credits-charged")).toBe(String(charged))
    expect(await balanceOf(user)).toBe(before - charged)
    // Every upstream call was one of the council's rounds.
    expect(fake.requests).toHaveLength(calls)
    expect(fake.requests.map(roundOfRequest).sort()).toEqual(
      ["critique", "critique", "critique", "proposals", "proposals", "proposals", "ratification", "ratification", "ratification", "synthesis"]
    )
  })

  it("streams the consensus as text and puts the report on the last chunk before [DONE], with or without a usage chunk", async () => {
    for (const includeUsage of [true, false]) {
      fake.reset()
      answerCouncil(fake, { dissenter: "econ-b" })
      const stream = await client.chat.completions.create({
        model: "council-economy",
        messages: [{ role: "user", content: "Where should the ledger live?" }],
        stream: true,
        ...(includeUsage ? { stream_options: { include_usage: true } } : {})
      })
      const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk> = []
      for await (const chunk of stream) chunks.push(chunk)

      expect(chunks.every((chunk) => chunk.model === "council-economy")).toBe(true)
      expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? "")).join("")).toBe(consensusText)
      expect(chunks.filter((chunk) => chunk.choices.some((choice) => choice.delta.content)).length).toBeGreaterThan(1)
      expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter((r) => r !== null)).toEqual(["stop"])
      const last = chunks.at(-1)!
      expect(chunks.slice(0, -1).some((chunk) => "consensus" in chunk)).toBe(false)
      const report = reportOf(last)
      expect(report.text).toBe(consensusText)
      expect(report.dissents.map((d) => d.model)).toEqual(["fake-economy-b"])
      if (includeUsage) {
        expect(last.choices).toEqual([])
        expect(last.usage).toEqual({ prompt_tokens: 600, completion_tokens: 120, total_tokens: 720 })
      } else {
        expect(last.choices[0]!.finish_reason).toBe("stop")
      }
    }
  })

  it("starts the stream once the council's credits are held, long before the consensus", async () => {
    fake.reset()
    answerCouncil(fake, { dissenter: "econ-b", slow: { proposals: 400 } })
    const stream = await client.chat.completions.create({
      model: "council-economy",
      messages: [{ role: "user", content: "Where should the ledger live?" }],
      stream: true
    })
    const rounds = () => fake.requests.map(roundOfRequest)
    let first: { chunk: OpenAI.Chat.Completions.ChatCompletionChunk; critiqued: boolean } | undefined
    const text: Array<string> = []
    for await (const chunk of stream) {
      first ??= { chunk, critiqued: rounds().includes("critique") }
      text.push(chunk.choices[0]?.delta.content ?? "")
    }
    // The role came first, while the proposals were still being written; the consensus came after.
    expect(first!.critiqued).toBe(false)
    expect(first!.chunk.choices[0]!.delta).toEqual({ role: "assistant", content: "" })
    expect(text.join("")).toBe(consensusText)
  })

  it("caps the consensus at the client's max_tokens: the chair is asked for no more", async () => {
    fake.reset()
    answerCouncil(fake, { dissenter: "econ-b" })
    await client.chat.completions.create({ model: "council-economy", messages: [{ role: "user", content: "Where should the ledger live?" }], max_tokens: 7 })
    const capOf = (body: unknown) => {
      const b = body as { max_tokens?: number; max_completion_tokens?: number }
      return b.max_completion_tokens ?? b.max_tokens
    }
    const synthesis = fake.requests.filter((request) => roundOfRequest(request) === "synthesis")
    expect(synthesis.length).toBeGreaterThan(0)
    expect(synthesis.map((request) => capOf(request.body))).toEqual(synthesis.map(() => 7))
    const proposals = fake.requests.filter((request) => roundOfRequest(request) === "proposals")
    expect(proposals.every((request) => (capOf(request.body) ?? 0) > 7)).toBe(true)
  })

  it("refuses a tool request, naming `tools`, before anything is reserved or called", async () => {
    const before = await balanceOf(user)
    const error = await client.chat.completions.create({
      model: "council-economy",
      messages: [{ role: "user", content: "What is the weather in Paris?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }]
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect(error).toMatchObject({ status: 400, param: "tools", code: "INVALID_REQUEST", message: expect.stringContaining("council") })
    const format = await client.chat.completions.create({
      model: "council",
      messages: [{ role: "user", content: "x" }],
      response_format: { type: "json_object" }
    }).catch((e: unknown) => e)
    expect(format).toMatchObject({ status: 400, param: "response_format" })
    expect(fake.requests).toHaveLength(0)
    expect(await balanceOf(user)).toBe(before)
  })

  it("answers 402 before any upstream call when the balance cannot cover the council's worst case", async () => {
    const short = await Accounts.signupAndLogin(server)
    const shortClient = await clientFor(short)
    for (const stream of [false, true]) {
      const error = await shortClient.chat.completions.create({
        model: "council-economy",
        messages: [{ role: "user", content: "Where should the ledger live?" }],
        stream
      }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect(error).toMatchObject({ status: 402, code: "INSUFFICIENT_CREDITS", type: "insufficient_quota" })
    }
    expect(fake.requests).toHaveLength(0)
    expect(await balanceOf(short)).toBe(1_000)
    // The same balance covers one model's answer.
    fake.respondWith(undefined)
    fake.enqueue({ answer: "One model", usage: { prompt_tokens: 10, completion_tokens: 2 } })
    await expect(shortClient.chat.completions.create({ model: "economy", messages: [{ role: "user", content: "x" }] }))
      .resolves.toMatchObject({ choices: [{ message: { content: "One model" } }] })
  })

  it("answers 502 when fewer than two participants are left, charging only the calls that answered", async () => {
    fake.reset()
    // econ-a sits twice: both its seats fail, and one participant is left.
    answerCouncil(fake, { fails: ["econ-a"] })
    const before = await balanceOf(user)
    const error = await client.chat.completions.create({
      model: "council-economy",
      messages: [{ role: "user", content: "Where should the ledger live?" }]
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect(error).toMatchObject({ status: 502, code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining("1 of 3 participants left") })
    expect(await balanceOf(user)).toBe(before - perCall)
  })

  it("seats `council` at the caller's effective tier, and lowers a council tier to an enforced ceiling", async () => {
    const org = await Orgs.createOrg(server)
    const policy = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { model_tier: "economy" } })
    expect(policy.status, policy.text).toBe(200)
    const member = await Orgs.addMember(server, org)
    await Operator.grant(server, { user_id: member.id }, 99_000)
    const inOrg = await clientFor(member, org.id)

    expect((await inOrg.models.list()).data.map((m) => m.id)).toEqual(["economy", "council", "council-economy", "fake-economy-a", "fake-economy-b"])
    for (const model of ["council", "council-premium"]) {
      const completion = await inOrg.chat.completions.create({ model, messages: [{ role: "user", content: "Where should the ledger live?" }] })
      expect(completion.model).toBe(model)
      expect(new Set(reportOf(completion).participants.map((p) => p.model))).toEqual(new Set(["fake-economy-a", "fake-economy-b"]))
    }
    // Outside the org, `council` is the member's effective tier: the service's default, standard.
    const personal = await clientFor(member)
    const standard = await personal.chat.completions.create({ model: "council", messages: [{ role: "user", content: "Where should the ledger live?" }] })
    expect(reportOf(standard).participants.map((p) => p.model)).toEqual(["fake-standard", "fake-standard", "fake-standard"])
  })

  it("answers through the Responses API too: the consensus as output text, the report in `consensus`", async () => {
    const before = await balanceOf(user)
    const response = await client.responses.create({ model: "council-economy", input: "Where should the ledger live?" })
    expect(response).toMatchObject({ object: "response", status: "completed", model: "council-economy", usage: { input_tokens: 600, output_tokens: 120 } })
    expect(response.output_text).toBe(consensusText)
    const report = reportOf(response)
    expect(report.dissents).toHaveLength(1)
    expect(await balanceOf(user)).toBe(before - report.participants.reduce((sum, p) => sum + p.credits, 0))

    const refused = await client.responses.create({
      model: "council-economy",
      input: "x",
      text: { format: { type: "json_object" } }
    }).catch((e: unknown) => e)
    expect(refused).toMatchObject({ status: 400, param: "text.format" })
  })
})
