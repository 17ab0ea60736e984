/**
 * `POST /v1/embeddings` passed through to an OpenAI-compatible upstream (the fake, which records
 * what it receives): what reaches it, the vectors and usage that come back, the upstream's usage
 * charged exactly, its refusals and failures, and an org's tier ceiling on embedding models.
 */
import { Accounts, FakeOpenAi, Orgs, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import OpenAI from "openai"
import { beforeEach, describe, expect, it } from "vitest"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.price: one credit per input token.
const catalog = [
  WithFakeUpstream.model("fake-economy", "economy"),
  WithFakeUpstream.model("fake-embed", "economy", { upstream_model: "embed-v1", kind: "embedding" }),
  WithFakeUpstream.model("fake-embed-large", "premium", { upstream_model: "embed-large-v1", kind: "embedding" })
]

type UpstreamBody = Record<string, unknown>

describe("embeddings through an OpenAI-compatible upstream", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let client: OpenAI

  const balance = async (someone = user) => (await server.request("GET", "/v1/me", { token: someone.session })).body.credits.balance as number
  const clientFor = (apiKey: string, organization?: string) =>
    new OpenAI({ apiKey, baseURL: `${server.url}/v1`, maxRetries: 0, ...(organization === undefined ? {} : { organization }) })

  fakeUpstreamSuite(catalog, (started) => ({ fake, server } = started))
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
    client = clientFor((await Accounts.createApiKey(server, user)).key)
  })

  it("passes input, upstream model, dimensions, encoding_format and user through; charges the upstream's usage once", async () => {
    const before = await balance()
    // About 120 tokens by Huddle's estimate (150 reserved); the upstream counts 97, and that is charged.
    const input = ["alpha ".repeat(40), "beta ".repeat(48)]
    fake.enqueue({ usage: { prompt_tokens: 97, completion_tokens: 0 } })
    const { data: result, response } = await client.embeddings
      .create({ model: "fake-embed", input, dimensions: 4, encoding_format: "float", user: "end-user-7" })
      .withResponse()

    expect(fake.requests).toHaveLength(1)
    expect(fake.requests[0]!.path).toBe("/v1/embeddings")
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${WithFakeUpstream.upstreamKey}`)
    expect(fake.requests[0]!.body as UpstreamBody).toEqual({
      model: "embed-v1",
      input,
      dimensions: 4,
      encoding_format: "float",
      user: "end-user-7"
    })
    expect(result.model).toBe("fake-embed")
    expect(result.data.map((d) => d.embedding.length)).toEqual([4, 4])
    expect(result.data[0]!.embedding).not.toEqual(result.data[1]!.embedding)
    expect(result.usage).toEqual({ prompt_tokens: 97, total_tokens: 97 })
    expect(response.headers.get("huddle-credits-charged")).toBe("97")
    expect(await balance()).toBe(before - 97)
  })

  it("the SDK's default base64 path: asked of the upstream, decoded there and here to the same floats", async () => {
    const floats = await client.embeddings.create({ model: "fake-embed", input: "gamma ray", encoding_format: "float" })
    const decoded = await client.embeddings.create({ model: "fake-embed", input: "gamma ray" })
    expect((fake.requests[1]!.body as UpstreamBody).encoding_format).toBe("base64")
    expect(decoded.data[0]!.embedding).toEqual(floats.data[0]!.embedding)
    // Token ids go through as they are.
    await client.embeddings.create({ model: "fake-embed", input: [[1, 2, 3], [4, 5]], encoding_format: "float" })
    expect((fake.requests[2]!.body as UpstreamBody).input).toEqual([[1, 2, 3], [4, 5]])
  })

  it("an upstream 400 naming a param is the client's 400 naming it; a 5xx is 502; neither is charged", async () => {
    const before = await balance()
    fake.enqueue(FakeOpenAi.badParam("dimensions", "This model does not support specifying dimensions."))
    const refused = await client.embeddings.create({ model: "fake-embed", input: "x", dimensions: 3 }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect(refused).toMatchObject({ param: "dimensions", message: expect.stringContaining("does not support specifying dimensions") })

    fake.enqueue(FakeOpenAi.serverError(503))
    const failed = await client.embeddings.create({ model: "fake-embed", input: "x" }).catch((e: unknown) => e)
    expect(failed).toBeInstanceOf(OpenAI.APIError)
    expect(failed).toMatchObject({ status: 502, code: "UPSTREAM_UNAVAILABLE" })
    expect(await balance()).toBe(before)
  })

  it("an org's tier ceiling refuses a premium embedding model (403) before the upstream is called", async () => {
    const org = await Orgs.createOrg(server)
    const policy = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { model_tier: "economy" } })
    expect(policy.status).toBe(200)
    const member = await Orgs.addMember(server, org)
    const inOrg = clientFor((await Accounts.createApiKey(server, member)).key, org.id)

    const error = await inOrg.embeddings.create({ model: "fake-embed-large", input: "x" }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError)
    expect(error).toMatchObject({ status: 403, code: "POLICY_VIOLATION", param: "model" })
    expect(fake.requests).toHaveLength(0)
    const ids = (await inOrg.models.list()).data.map((m) => m.id)
    expect(ids).toContain("fake-embed")
    expect(ids).not.toContain("fake-embed-large")

    // The economy one is allowed, and the tier of chat models is not served by embedding models.
    await expect(inOrg.embeddings.create({ model: "fake-embed", input: "x" })).resolves.toMatchObject({ model: "fake-embed" })
    fake.enqueue({ answer: "chat", usage: { prompt_tokens: 3, completion_tokens: 1 } })
    const chat = await inOrg.chat.completions.create({ model: "economy", messages: [{ role: "user", content: "hi" }] })
    expect(chat.model).toBe("fake-economy")
  })
})
