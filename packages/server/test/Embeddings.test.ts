/**
 * `POST /v1/embeddings` through the clients users have — the `openai` SDK (floats, and its
 * default base64 path) and LangChain's `OpenAIEmbeddings` — against the in-process server and
 * its offline `offline-embed` model: vectors, usage, exact credits charged once (balance and
 * ledger), `dimensions`, idempotency, 402, and the 400/404s that name the field.
 */
import { OpenAIEmbeddings } from "@langchain/openai"
import { Accounts, Operator, Orgs, TestServer } from "@huddle/testkit"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"

/** `offline-embed`'s price: 0.5 credits per 1,000 input tokens, rounded up once per call. */
const offlineCharge = (tokens: number) => Math.ceil((tokens * 0.5) / 1000)
/** The offline model's token estimate: about four characters a token. */
const tokensOf = (text: string) => Math.ceil(text.length / 4)

const norm = (v: ReadonlyArray<number>) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0))
const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => a.reduce((sum, x, i) => sum + x * b[i]!, 0) / (norm(a) * norm(b))

describe("embeddings with the offline model", () => {
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let apiKey: string
  let client: OpenAI

  const balance = async (someone = user) => (await server.request("GET", "/v1/me", { token: someone.session })).body.credits.balance as number
  /** The ledger's rows of embedding calls: a hold and a settlement per call. */
  const embeddingEntries = async (someone = user) =>
    (await Operator.ledger(server, { user_id: someone.id })).data.filter((entry) => entry.reason.includes("embeddings"))
  /** What the ledger charged for embeddings, and how many calls were settled. */
  const embeddingCharges = async (someone = user) => {
    const entries = await embeddingEntries(someone)
    return { charged: -entries.reduce((sum, entry) => sum + entry.delta, 0), settled: entries.filter((entry) => entry.kind === "settle").length }
  }
  const post = (body: unknown, headers: Record<string, string> = {}) => server.request("POST", "/v1/embeddings", { token: apiKey, body, headers })

  beforeAll(async () => {
    // Few starter credits, so that a large request is refused; the tests' users are granted more.
    server = await TestServer.start({ starterCredits: 3 })
  }, 60_000)
  afterAll(() => server?.stop())
  beforeEach(async () => {
    user = await Accounts.signupAndLogin(server)
    await Operator.grant(server, { user_id: user.id }, 1000)
    apiKey = (await Accounts.createApiKey(server, user)).key
    client = new OpenAI({ apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 })
  })

  it("openai SDK, floats: one unit vector per input, the usage, charged exactly once", async () => {
    const before = await balance()
    const texts = ["The build is green on main.", "Deploys run every night at two.", "The build is green on main."]
    const { data: result, response } = await client.embeddings.create({ model: "offline-embed", input: texts, encoding_format: "float" }).withResponse()

    expect(result.object).toBe("list")
    expect(result.model).toBe("offline-embed")
    expect(result.data.map((d) => [d.object, d.index])).toEqual([["embedding", 0], ["embedding", 1], ["embedding", 2]])
    for (const { embedding } of result.data) {
      expect(embedding).toHaveLength(256)
      expect(norm(embedding)).toBeCloseTo(1, 6)
    }
    expect(result.data[2]!.embedding).toEqual(result.data[0]!.embedding)
    expect(result.data[1]!.embedding).not.toEqual(result.data[0]!.embedding)
    const tokens = texts.reduce((sum, text) => sum + tokensOf(text), 0)
    expect(result.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens })

    const charged = Number(response.headers.get("huddle-credits-charged"))
    expect(charged).toBe(offlineCharge(tokens))
    expect(charged).toBeGreaterThan(0)
    expect(await balance()).toBe(before - charged)
    expect(await embeddingCharges()).toEqual({ charged, settled: 1 })
    expect((await embeddingEntries())[0]!.reason).toContain("offline-embed")
  })

  it("openai SDK, its default base64 path, decodes to the same vectors as floats", async () => {
    const input = "Retrieval over the team's notes"
    const floats = await client.embeddings.create({ model: "offline-embed", input, encoding_format: "float" })
    const raw = await post({ model: "offline-embed", input, encoding_format: "base64" })
    expect(raw.status).toBe(200)
    expect(typeof raw.body.data[0].embedding).toBe("string")
    // No encoding_format: the SDK asks for base64 and decodes it itself.
    const decoded = await client.embeddings.create({ model: "offline-embed", input })
    expect(decoded.data[0]!.embedding).toHaveLength(256)
    decoded.data[0]!.embedding.forEach((x, i) => expect(x).toBeCloseTo(floats.data[0]!.embedding[i]!, 6))
  })

  it("token ids, one array or several, are embedded like texts", async () => {
    const one = await client.embeddings.create({ model: "offline-embed", input: [101, 2023, 2003], encoding_format: "float" })
    expect(one.data).toHaveLength(1)
    expect(one.usage.prompt_tokens).toBe(3)
    const many = await client.embeddings.create({ model: "offline-embed", input: [[101, 2023], [101, 2023, 2003]], encoding_format: "float" })
    expect(many.data).toHaveLength(2)
    expect(many.data[1]!.embedding).toEqual(one.data[0]!.embedding)
  })

  it("dimensions: shorter unit vectors; more than the model's 256 is a 400 naming dimensions, nothing charged", async () => {
    const short = await client.embeddings.create({ model: "offline-embed", input: "short vectors", dimensions: 64, encoding_format: "float" })
    expect(short.data[0]!.embedding).toHaveLength(64)
    expect(norm(short.data[0]!.embedding)).toBeCloseTo(1, 6)

    const before = await balance()
    const error = await client.embeddings.create({ model: "offline-embed", input: "x", dimensions: 512 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect(error).toMatchObject({ status: 400, param: "dimensions", code: "INVALID_REQUEST" })
    expect(await balance()).toBe(before)
  })

  it("LangChain's OpenAIEmbeddings: embedQuery and embedDocuments, near texts closer", async () => {
    const embeddings = new OpenAIEmbeddings({ model: "offline-embed", apiKey, configuration: { baseURL: `${server.url}/v1` }, maxRetries: 0 })
    const before = await balance()
    const query = await embeddings.embedQuery("How do I rotate an API key?")
    const docs = await embeddings.embedDocuments([
      "To rotate an API key, create a new key and revoke the old one.",
      "The cafeteria serves soup on Tuesdays."
    ])
    expect(query).toHaveLength(256)
    expect(docs).toHaveLength(2)
    expect(cosine(query, docs[0]!)).toBeGreaterThan(cosine(query, docs[1]!))
    // Two calls, each charged once.
    const { charged, settled } = await embeddingCharges()
    expect(settled).toBe(2)
    expect(charged).toBeGreaterThanOrEqual(2)
    expect(await balance()).toBe(before - charged)
  })

  it("/v1/models lists the embedding model; chat refuses it, embeddings refuse chat models and tiers (404 naming model)", async () => {
    expect((await client.models.list()).data.map((m) => m.id)).toContain("offline-embed")

    const chat = await client.chat.completions.create({ model: "offline-embed", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e)
    expect(chat).toBeInstanceOf(OpenAI.NotFoundError)
    expect(chat).toMatchObject({ param: "model", message: expect.stringContaining("embedding model") })

    for (const model of ["offline-economy", "economy", "council"]) {
      const error = await client.embeddings.create({ model, input: "x" }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.NotFoundError)
      expect(error).toMatchObject({ status: 404, param: "model" })
    }
    const chatModel = await post({ model: "offline-economy", input: "x" })
    expect(chatModel.body.error.message).toContain("offline-embed")
  })

  it("bad input: 400s in OpenAI's envelope naming the field, nothing charged", async () => {
    const before = await balance()
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ model: "offline-embed", input: "x", temperature: 1 }, "temperature"],
      [{ model: "offline-embed", input: [] }, "input"],
      [{ model: "offline-embed", input: "" }, "input"],
      [{ model: "offline-embed", input: ["a", ""] }, "input"],
      [{ model: "offline-embed", input: [1, -2] }, "input"],
      [{ model: "offline-embed", input: 42 }, "input"],
      [{ model: "offline-embed", input: "x", encoding_format: "int8" }, "encoding_format"],
      [{ model: "offline-embed", input: "x", dimensions: 0 }, "dimensions"],
      [{ input: "x" }, "model"]
    ]
    for (const [body, param] of cases) {
      const res = await post(body)
      expect({ body, status: res.status }).toEqual({ body, status: 400 })
      // Inside a field, its path (`input[1]`).
      expect({ body, param: String(res.body.error.param).replace(/\[\d+\]$/, "") }).toEqual({ body, param })
      expect(res.body.error.type).toBe("invalid_request_error")
    }
    expect(await balance()).toBe(before)
    expect(await embeddingEntries()).toEqual([])
  })

  it("402 when the credits cannot cover the worst case, nothing charged", async () => {
    const poor = await Accounts.signupAndLogin(server, "poor")
    const key = (await Accounts.createApiKey(server, poor)).key
    const poorClient = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 })
    // Three inputs of about 7,500 tokens: a worst case of about 15 credits, against 3.
    const input = Array.from({ length: 3 }, (_, i) => `${i} ${"word ".repeat(6000)}`)
    const error = await poorClient.embeddings.create({ model: "offline-embed", input }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect(error).toMatchObject({ status: 402, code: "INSUFFICIENT_CREDITS" })
    expect(await balance(poor)).toBe(3)
    // A small one still fits.
    const small = await poorClient.embeddings.create({ model: "offline-embed", input: "small" })
    expect(small.data).toHaveLength(1)
    expect(await balance(poor)).toBe(2)
  })

  it("in an org, its pool pays what the member's own credits cannot (credit fallback), and the answer says which context ran", async () => {
    const org = await Orgs.createOrg(server)
    await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 500, "plan")
    const member = await Orgs.addMember(server, org)
    const inOrg = new OpenAI({ apiKey: (await Accounts.createApiKey(server, member)).key, baseURL: `${server.url}/v1`, maxRetries: 0, organization: org.id })
    const input = Array.from({ length: 3 }, (_, i) => `${i} ${"word ".repeat(6000)}`)
    const { data: result, response } = await inOrg.embeddings.create({ model: "offline-embed", input }).withResponse()
    expect(result.data).toHaveLength(3)
    expect(response.headers.get("huddle-organization")).toBe(org.id)
    const charged = Number(response.headers.get("huddle-credits-charged"))
    expect(charged).toBe(offlineCharge(result.usage.prompt_tokens))
    const pool = (await server.request("GET", `/v1/orgs/${org.id}/credits`, { token: org.admin.session })).body
    expect(pool.subscription_balance).toBe(500 - charged)
    expect(await balance(member)).toBe(3)
  })

  it("Idempotency-Key: a retry gets the same answer, charged once", async () => {
    const before = await balance()
    const body = { model: "offline-embed", input: ["once", "only"], encoding_format: "float" }
    const first = await post(body, { "idempotency-key": "embed-retry-1" })
    const again = await post(body, { "idempotency-key": "embed-retry-1" })
    expect(first.status).toBe(200)
    expect(again.status).toBe(200)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    const charged = Number(first.headers.get("huddle-credits-charged"))
    expect(await balance()).toBe(before - charged)
    expect(await embeddingCharges()).toEqual({ charged, settled: 1 })
  })
})
