/**
 * The edges of OpenAI compatibility that clients read besides the answer: OpenAI's rate-limit
 * headers, `param` on errors about a known field, and an OpenAI-envelope 404 (code
 * `unknown_url`) for the parts of OpenAI's API that Huddle does not serve. Through the official
 * `openai` SDK against the in-process server and its offline models.
 */
import * as RateLimit from "@huddle/server/shared/RateLimit"
import { Accounts, TestServer } from "@huddle/testkit"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"

/** OpenAI's reset duration (`45s`, `1m0s`) in seconds. */
const secondsOf = (duration: string | null) => {
  const match = /^(?:(\d+)m)?(\d+)s$/.exec(duration ?? "")
  return match === null ? Number.NaN : Number(match[1] ?? 0) * 60 + Number(match[2])
}

const openAiRateHeaders = (headers: Headers) => ({
  limit: headers.get("x-ratelimit-limit-requests"),
  remaining: headers.get("x-ratelimit-remaining-requests"),
  reset: headers.get("x-ratelimit-reset-requests")
})

describe("OpenAI's edges", () => {
  let server: TestServer.TestServer
  let client: OpenAI
  let apiKey: string

  beforeAll(async () => {
    // Every test has a credential of its own, so these limits are per test.
    server = await TestServer.start({ starterCredits: 1_000_000, rateLimits: { chat: 3, read: 50 } })
  })
  afterAll(() => server.stop())
  beforeEach(async () => {
    const user = await Accounts.signupAndLogin(server)
    apiKey = (await Accounts.createApiKey(server, user)).key
    client = new OpenAI({ apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 })
  })

  const ask = () => client.chat.completions.create({ model: "economy", messages: [{ role: "user", content: "hello" }] })

  describe("rate-limit headers", () => {
    it("writes a reset as OpenAI does, in Go's duration format", () => {
      expect([1, 45, 60, 61, 3723].map(RateLimit.openAiDuration)).toEqual(["1s", "45s", "1m0s", "1m1s", "1h2m3s"])
    })

    it("sends OpenAI's names beside the IETF ones, counting down, and on the 429", async () => {
      const first = await ask().withResponse()
      const second = await ask().withResponse()
      expect(openAiRateHeaders(first.response.headers)).toMatchObject({ limit: "3", remaining: "2" })
      expect(openAiRateHeaders(second.response.headers)).toMatchObject({ limit: "3", remaining: "1" })
      // The same counters as the IETF headers, the reset as OpenAI writes a duration.
      expect(second.response.headers.get("ratelimit-remaining")).toBe("1")
      const reset = secondsOf(second.response.headers.get("x-ratelimit-reset-requests"))
      expect(reset).toBe(Number(second.response.headers.get("ratelimit-reset")))
      expect(reset).toBeGreaterThanOrEqual(1)
      expect(reset).toBeLessThanOrEqual(60)

      await ask()
      const refused = await ask().catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError)
      const headers = (refused as InstanceType<typeof OpenAI.RateLimitError>).headers
      expect(openAiRateHeaders(headers)).toMatchObject({ limit: "3", remaining: "0" })
      expect(secondsOf(headers.get("x-ratelimit-reset-requests"))).toBe(Number(headers.get("retry-after")))
    })

    it("sends them on the model listing too, counted against reads", async () => {
      const first = await client.models.list().withResponse()
      const second = await client.models.list().withResponse()
      expect(openAiRateHeaders(first.response.headers)).toMatchObject({ limit: "50", remaining: "49" })
      expect(openAiRateHeaders(second.response.headers)).toMatchObject({ limit: "50", remaining: "48" })
    })
  })

  describe("param", () => {
    it("names the field a validation failure is about, as OpenAI writes it", async () => {
      const role = await client.chat.completions.create({
        model: "economy",
        messages: [{ role: "user", content: "x" }, { role: "wizard", content: "y" } as never]
      }).catch((e: unknown) => e)
      expect(role).toBeInstanceOf(OpenAI.BadRequestError)
      expect(role).toMatchObject({ status: 400, param: "messages[1].role", code: "INVALID_REQUEST", type: "invalid_request_error" })

      const temperature = await client.chat.completions.create({ model: "economy", messages: [{ role: "user", content: "x" }], temperature: 7 })
        .catch((e: unknown) => e)
      expect(temperature).toMatchObject({ status: 400, param: "temperature" })

      const model = await server.request("POST", "/v1/chat/completions", { token: apiKey, body: { messages: [{ role: "user", content: "x" }] } })
      expect(model.body).toEqual({ error: { message: expect.stringContaining("model"), type: "invalid_request_error", param: "model", code: "INVALID_REQUEST" } })
    })

    it("names the field of a domain refusal when the domain says which: an unknown model, messages too long", async () => {
      const unknown = await client.chat.completions.create({ model: "gpt-17", messages: [{ role: "user", content: "x" }] })
        .catch((e: unknown) => e)
      expect(unknown).toBeInstanceOf(OpenAI.NotFoundError)
      expect(unknown).toMatchObject({ status: 404, param: "model", code: "NOT_FOUND" })
      await expect(client.models.retrieve("gpt-17")).rejects.toMatchObject({ status: 404, param: "model" })

      // The offline models' context window is 32,768 tokens; four of these are about 50,000.
      const long = "word ".repeat(10_000)
      const tooLong = await client.chat.completions.create({
        model: "economy",
        messages: [1, 2, 3, 4].map(() => ({ role: "user" as const, content: long }))
      }).catch((e: unknown) => e)
      expect(tooLong).toBeInstanceOf(OpenAI.BadRequestError)
      expect(tooLong).toMatchObject({ status: 400, param: "messages" })
    })

    it("stays null when no field is known", async () => {
      const wrongKey = new OpenAI({ apiKey: "hk_not-a-real-key", baseURL: `${server.url}/v1`, maxRetries: 0 })
      await expect(wrongKey.models.list()).rejects.toMatchObject({ status: 401, param: null })
    })
  })

  describe("what Huddle does not serve of OpenAI's API", () => {
    it("answers a stored response's retrieval with a 404 a person can read, in OpenAI's envelope", async () => {
      // Responses are created, never kept: reading one back is not served.
      const error = await client.responses.retrieve("resp_123").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.NotFoundError)
      expect(error).toMatchObject({ status: 404, code: "unknown_url", type: "invalid_request_error", param: null })
      expect((error as Error).message).toBe(
        "404 Huddle does not serve GET /v1/responses/resp_123; of OpenAI's API it serves POST /v1/chat/completions, GET /v1/models, GET /v1/models/{model}, POST /v1/responses, POST /v1/embeddings"
      )
    })

    it("answers other OpenAI resources with what it serves instead", async () => {
      const moderations = await client.moderations.create({ input: "x" }).catch((e: unknown) => e)
      expect(moderations).toBeInstanceOf(OpenAI.NotFoundError)
      expect((moderations as Error).message).toBe(
        "404 Huddle does not serve POST /v1/moderations; of OpenAI's API it serves POST /v1/chat/completions, GET /v1/models, GET /v1/models/{model}, POST /v1/responses, POST /v1/embeddings"
      )
      for (const [method, path] of [["GET", "/v1/files"], ["POST", "/v1/audio/speech"], ["GET", "/v1/fine_tuning/jobs"], ["GET", "/v1/chat/completions/chatcmpl-1"]] as const) {
        const res = await server.request(method, path, { token: apiKey })
        expect(res.status, path).toBe(404)
        expect(res.body, path).toEqual({
          error: { message: expect.stringContaining(`${method} ${path}`), type: "invalid_request_error", param: null, code: "unknown_url" }
        })
      }
    })

    it("answers a path it serves asked with another method with 405, Allow and OpenAI's envelope", async () => {
      for (const [method, path, allow] of [["GET", "/v1/chat/completions", "POST"], ["DELETE", "/v1/models/economy", "GET, HEAD"], ["GET", "/v1/responses", "POST"]] as const) {
        const res = await server.request(method, path, { token: apiKey })
        expect(res.status, path).toBe(405)
        expect(res.headers.get("allow"), path).toBe(allow)
        expect(res.body, path).toEqual({
          error: { message: `${path} does not take ${method}; it takes ${allow}`, type: "invalid_request_error", param: null, code: "METHOD_NOT_ALLOWED" }
        })
      }
      // Through the SDK: its error for the status, with the message.
      const refused = await client.get("/chat/completions").catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(OpenAI.APIError)
      expect(refused).toMatchObject({ status: 405, code: "METHOD_NOT_ALLOWED" })
    })

    it("keeps Huddle's envelope for unknown paths that are not OpenAI's", async () => {
      const res = await server.request("GET", "/v1/nothing-here", { token: apiKey })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ error: "NOT_FOUND", message: "No route for GET /v1/nothing-here" })
    })
  })
})
