/**
 * `/v1/chat/completions` and `/v1/models` through the official `openai` SDK, unmodified, against
 * the in-process server and a fake OpenAI-compatible upstream: shapes, exact usage and credits,
 * streams, errors as the SDK's classes, policies, memories, disconnects and tools.
 */
import { Accounts, FakeOpenAi, Orgs, TestServer, WithFakeUpstream } from "@huddle/testkit"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.pricing: one credit per input token, two per output token.
const model = (id: string, tier: string, upstream_model?: string) =>
  WithFakeUpstream.model(id, tier, { ...(upstream_model === undefined ? {} : { upstream_model }), max_output_tokens: 500 })
const catalog = {
  models: [
    model("fake-economy", "economy", "economy-v1"),
    model("fake-standard", "standard", "standard-v1"),
    model("fake-premium", "premium", "premium-v1"),
    // Ids with a slash, as OpenRouter's are.
    model("vendor/fake-mini", "economy")
  ]
}

/** An upstream answer that calls a tool, streamed in pieces as OpenAI does. */
const toolCallAnswer = FakeOpenAi.toolCallReply("get_weather", "{\"city\":\"Paris\"}")

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  }
}

const upstreamBody = (request: FakeOpenAi.RecordedRequest) => request.body as { model: string; messages: Array<{ role: string; content: unknown }> } & Record<string, unknown>

describe("chat completions through the openai SDK", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let client: OpenAI
  let apiKey: string

  const clientFor = (apiKey: string, options: { organization?: string; url?: string } = {}) =>
    new OpenAI({
      apiKey,
      baseURL: `${options.url ?? server.url}/v1`,
      maxRetries: 0,
      ...(options.organization === undefined ? {} : { organization: options.organization })
    })

  const balanceOf = async (someone: Accounts.TestUser) =>
    (await server.request("GET", "/v1/me", { token: someone.session })).body.credits.balance as number

  fakeUpstreamSuite(catalog.models, (started) => ({ fake, server } = started))
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
    apiKey = (await Accounts.createApiKey(server, user)).key
    client = clientFor(apiKey)
  })

  describe("answers", () => {
    it("creates a chat.completion with the upstream's usage, and charges exactly that", async () => {
      fake.enqueue({ answer: "The build is green on main.", chunks: 4, usage: { prompt_tokens: 321, completion_tokens: 17 } })
      const completion = await client.chat.completions.create({
        model: "fake-standard",
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Is the build green?" }]
      })
      expect(completion).toMatchObject({
        object: "chat.completion",
        model: "fake-standard",
        choices: [{ index: 0, message: { role: "assistant", content: "The build is green on main." }, finish_reason: "stop" }],
        usage: { prompt_tokens: 321, completion_tokens: 17, total_tokens: 338 }
      })
      expect(completion.id).toMatch(/^chatcmpl-/)
      expect(completion.created).toBeGreaterThan(1_600_000_000)
      expect(await balanceOf(user)).toBe(100_000 - (321 + 2 * 17))

      const sent = upstreamBody(fake.requests[0]!)
      expect(sent.model).toBe("standard-v1")
      // No memories: the conversation goes upstream as the client sent it.
      expect(sent.messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Is the build green?" }])
    })

    it("streams chat.completion.chunk objects with a usage chunk, and charges exactly the streamed usage", async () => {
      fake.enqueue({ answer: "one two three four five", chunks: 5, usage: { prompt_tokens: 123, completion_tokens: 45 } })
      const stream = await client.chat.completions.create({
        model: "fake-standard",
        messages: [{ role: "user", content: "Count to five" }],
        stream: true,
        stream_options: { include_usage: true }
      })
      const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk> = []
      for await (const chunk of stream) chunks.push(chunk)

      expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk" && chunk.model === "fake-standard")).toBe(true)
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1)
      expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant")
      const text = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? "")).join("")
      expect(text).toBe("one two three four five")
      expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter((r) => r !== null)).toEqual(["stop"])
      const last = chunks.at(-1)!
      expect(last.choices).toEqual([])
      expect(last.usage).toEqual({ prompt_tokens: 123, completion_tokens: 45, total_tokens: 168 })
      expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true)
      expect(await balanceOf(user)).toBe(100_000 - (123 + 2 * 45))
    })

    it("ends the event stream with data: [DONE], and sends no usage chunk unless asked", async () => {
      fake.enqueue({ answer: "a b", chunks: 2, usage: { prompt_tokens: 10, completion_tokens: 2 } })
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "fake-economy", messages: [{ role: "user", content: "x" }], stream: true })
      })
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toContain("text/event-stream")
      const text = await res.text()
      expect(text.endsWith("data: [DONE]\n\n")).toBe(true)
      const frames = text.split("\n\n").filter((frame) => frame.length > 0)
      const objects = frames.slice(0, -1).map((frame) => JSON.parse(frame.replace(/^data: /, "")))
      expect(objects.every((object) => object.usage === undefined && object.choices.length === 1)).toBe(true)
      // The upstream was still asked for usage, so the charge is exact.
      expect(await balanceOf(user)).toBe(100_000 - (10 + 2 * 2))
    })

    it("answers a tier name with that tier's model", async () => {
      fake.enqueue({ answer: "cheap", usage: { prompt_tokens: 5, completion_tokens: 1 } })
      const completion = await client.chat.completions.create({ model: "economy", messages: [{ role: "user", content: "x" }] })
      expect(completion.model).toBe("fake-economy")
      expect(upstreamBody(fake.requests[0]!).model).toBe("economy-v1")
    })

    it("passes parameters, developer and tool messages through to the upstream", async () => {
      fake.enqueue({ answer: "ok", usage: { prompt_tokens: 5, completion_tokens: 1 } })
      await client.chat.completions.create({
        model: "fake-economy",
        messages: [
          { role: "developer", content: "Answer in French." },
          { role: "user", content: [{ type: "text", text: "Weather" }, { type: "text", text: "in Paris?" }] },
          { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
          { role: "tool", tool_call_id: "call_1", content: "18°C, sunny" }
        ],
        temperature: 0.3,
        top_p: 0.9,
        max_completion_tokens: 50,
        stop: ["\n\n"],
        seed: 7,
        user: "end-user-1",
        response_format: { type: "json_object" },
        tools: [weatherTool],
        tool_choice: "auto"
      })
      const sent = upstreamBody(fake.requests[0]!)
      expect(sent).toMatchObject({
        temperature: 0.3,
        top_p: 0.9,
        max_tokens: 50,
        stop: ["\n\n"],
        seed: 7,
        user: "end-user-1",
        response_format: { type: "json_object" },
        tools: [weatherTool],
        tool_choice: "auto"
      })
      expect(sent.messages).toEqual([
        { role: "system", content: "Answer in French." },
        { role: "user", content: "Weather\nin Paris?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
        { role: "tool", content: "18°C, sunny", tool_call_id: "call_1" }
      ])
    })

    it("returns the upstream's tool calls, with finish_reason tool_calls", async () => {
      fake.enqueue(toolCallAnswer)
      const completion = await client.chat.completions.create({
        model: "fake-standard",
        messages: [{ role: "user", content: "Weather in Paris?" }],
        tools: [weatherTool]
      })
      expect(completion.choices[0]).toMatchObject({
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }]
        }
      })
      expect(completion.usage).toEqual({ prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 })
      expect(await balanceOf(user)).toBe(100_000 - (40 + 2 * 9))
    })

    it("streams tool-call deltas", async () => {
      fake.enqueue(toolCallAnswer)
      const stream = await client.chat.completions.create({
        model: "fake-standard",
        messages: [{ role: "user", content: "Weather in Paris?" }],
        tools: [weatherTool],
        stream: true,
        stream_options: { include_usage: true }
      })
      const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk> = []
      for await (const chunk of stream) chunks.push(chunk)
      const calls = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []))
      expect(calls[0]).toMatchObject({ index: 0, id: "call_1", type: "function", function: { name: "get_weather" } })
      expect(calls.map((call) => call.function?.arguments ?? "").join("")).toBe("{\"city\":\"Paris\"}")
      expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter((r) => r !== null)).toEqual(["tool_calls"])
      expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 })
    })

    it("settles a stream the client abandons for what was consumed, and cancels the upstream call", async () => {
      const before = await balanceOf(user)
      fake.enqueue({ answer: Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "), chunks: 40, chunkDelayMs: 100 })
      const stream = await client.chat.completions.create({
        model: "fake-standard",
        messages: [{ role: "user", content: "a long answer please" }],
        stream: true
      })
      let received = 0
      // Leaving the loop aborts the SDK's request.
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) received++
        if (received === 2) break
      }
      expect(received).toBe(2)
      const disconnects = await fake.waitForDisconnects(1, 2000)
      expect(disconnects[0]!.chunksWritten).toBeLessThan(40)
      let spent = 0
      for (let i = 0; i < 30 && spent === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        spent = before - (await balanceOf(user))
      }
      // Charged for what was produced (an estimate: the upstream never reported usage), not
      // the reserved worst case (the input plus 500 output tokens at two credits each).
      expect(spent).toBeGreaterThan(0)
      expect(spent).toBeLessThan(500 * 2)
    })

    it("releases the reservation when the client leaves before the first token", async () => {
      const before = await balanceOf(user)
      fake.enqueue({ answer: "too late", firstByteDelayMs: 3000 })
      const controller = new AbortController()
      const pending = client.chat.completions.create(
        { model: "fake-standard", messages: [{ role: "user", content: "x" }], stream: true },
        { signal: controller.signal }
      ).catch((e: unknown) => e)
      await fake.waitForRequests(1, 2000)
      // Held: the worst case is reserved while the upstream is silent.
      expect(await balanceOf(user)).toBeLessThan(before)
      controller.abort()
      expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError)
      await fake.waitForDisconnects(1, 2000)
      let balance = 0
      for (let i = 0; i < 30 && balance !== before; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        balance = await balanceOf(user)
      }
      expect(balance).toBe(before)
    })
  })

  describe("models", () => {
    it("lists the tier aliases and the catalog in OpenAI's list shape", async () => {
      const page = await client.models.list()
      expect(page.data.map((m) => m.id)).toEqual([
        "economy",
        "standard",
        "premium",
        "council",
        "council-economy",
        "council-standard",
        "council-premium",
        "fake-economy",
        "fake-standard",
        "fake-premium",
        "vendor/fake-mini"
      ])
      for (const listed of page.data) {
        expect(listed).toMatchObject({ object: "model", owned_by: expect.any(String), created: expect.any(Number) })
      }
      expect(page.data.find((m) => m.id === "fake-premium")!.owned_by).toBe("fake")
      const raw = await server.request("GET", "/v1/models", { token: user.session })
      expect(raw.body.object).toBe("list")
    })

    it("retrieves one model, and answers an unknown one with NotFoundError", async () => {
      await expect(client.models.retrieve("fake-premium")).resolves.toMatchObject({ id: "fake-premium", object: "model", owned_by: "fake" })
      await expect(client.models.retrieve("premium")).resolves.toMatchObject({ id: "premium", owned_by: "huddle" })
      await expect(client.models.retrieve("vendor/fake-mini")).resolves.toMatchObject({ id: "vendor/fake-mini" })
      const error = await client.models.retrieve("gpt-9").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.NotFoundError)
      expect(error).toMatchObject({ status: 404, code: "NOT_FOUND", type: "invalid_request_error" })
    })

    it("refuses an unknown model on completions with NotFoundError", async () => {
      const error = await client.chat.completions.create({ model: "gpt-9", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.NotFoundError)
      expect(error).toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("The model `gpt-9` does not exist") })
      expect(fake.requests).toHaveLength(0)
    })
  })

  describe("organizations", () => {
    it("enforces an org's tier ceiling: a premium model is refused, the listing hides it, a tier name is lowered", async () => {
      const org = await Orgs.createOrg(server)
      const policy = await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { model_tier: "economy" } })
      expect(policy.status).toBe(200)
      const member = await Orgs.addMember(server, org)
      const key = (await Accounts.createApiKey(server, member)).key
      const inOrg = clientFor(key, { organization: org.id })

      const error = await inOrg.chat.completions.create({ model: "fake-premium", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError)
      expect(error).toMatchObject({ status: 403, code: "POLICY_VIOLATION", type: "permission_error" })
      expect(fake.requests).toHaveLength(0)

      expect((await inOrg.models.list()).data.map((m) => m.id)).toEqual(["economy", "council", "council-economy", "fake-economy", "vendor/fake-mini"])
      await expect(inOrg.models.retrieve("fake-premium")).rejects.toBeInstanceOf(OpenAI.NotFoundError)

      fake.enqueue({ answer: "lowered", usage: { prompt_tokens: 5, completion_tokens: 1 } })
      const lowered = await inOrg.chat.completions.create({ model: "premium", messages: [{ role: "user", content: "x" }] })
      expect(lowered.model).toBe("fake-economy")

      // Outside the org the same member may use every tier.
      const personal = clientFor(key)
      expect((await personal.models.list()).data.map((m) => m.id)).toContain("fake-premium")
      // A key bound to the org runs in it without the header.
      const bound = clientFor((await Accounts.createApiKey(server, member, { org_id: org.id })).key)
      await expect(bound.chat.completions.create({ model: "fake-premium", messages: [{ role: "user", content: "x" }] }))
        .rejects.toBeInstanceOf(OpenAI.PermissionDeniedError)
    })

    it("puts the org's memories in front of the conversation as a system message", async () => {
      const org = await Orgs.createOrg(server)
      const memory = await server.request("POST", "/v1/memories", {
        token: org.admin.session,
        body: { content: "Our deploys go out on Tuesdays.", scope: "org", org_id: org.id }
      })
      expect(memory.status).toBe(201)
      const member = await Orgs.addMember(server, org)
      const inOrg = clientFor((await Accounts.createApiKey(server, member)).key, { organization: org.id })

      fake.enqueue({ answer: "Tuesday", usage: { prompt_tokens: 50, completion_tokens: 1 } })
      await inOrg.chat.completions.create({
        model: "fake-economy",
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "When do we deploy?" }]
      })
      const sent = upstreamBody(fake.requests[0]!).messages
      expect(sent[0]!.role).toBe("system")
      expect(sent[0]!.content).toContain("Our deploys go out on Tuesdays.")
      expect(sent.slice(1)).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "When do we deploy?" }])
    })

    it("runs a call whose OpenAI-Organization holds an OpenAI org id (OPENAI_ORG_ID) in the caller's own context, and says so", async () => {
      const before = await balanceOf(user)
      fake.enqueue({ answer: "hi", usage: { prompt_tokens: 5, completion_tokens: 1 } })
      const { data, response } = await clientFor(apiKey, { organization: "org-AbCdEf0123456789abcdEFGH" })
        .chat.completions.create({ model: "economy", messages: [{ role: "user", content: "x" }] })
        .withResponse()
      expect(data.choices[0]!.message.content).toBe("hi")
      expect(response.headers.get("huddle-organization")).toBe("personal")
      // Whatever its length: it is not read.
      fake.enqueue({ answer: "hi", usage: { prompt_tokens: 5, completion_tokens: 1 } })
      const long = await clientFor(apiKey, { organization: `org-${"x".repeat(100)}` })
        .chat.completions.create({ model: "economy", messages: [{ role: "user", content: "x" }] })
        .withResponse()
      expect(long.response.headers.get("huddle-organization")).toBe("personal")
      const charged = Number(response.headers.get("huddle-credits-charged"))
      expect(charged).toBeGreaterThan(0)
      expect(await balanceOf(user)).toBe(before - charged - Number(long.response.headers.get("huddle-credits-charged")))

      // A Huddle org id in the same header selects the org, and the answer names it.
      const org = await Orgs.createOrg(server)
      const member = await Orgs.addMember(server, org)
      fake.enqueue({ answer: "in org", usage: { prompt_tokens: 5, completion_tokens: 1 } })
      const inOrg = await clientFor((await Accounts.createApiKey(server, member)).key, { organization: org.id })
        .chat.completions.create({ model: "economy", messages: [{ role: "user", content: "x" }] })
        .withResponse()
      expect(inOrg.response.headers.get("huddle-organization")).toBe(org.id)
      const listed = await clientFor((await Accounts.createApiKey(server, member)).key, { organization: org.id }).models.list().withResponse()
      expect(listed.response.headers.get("huddle-organization")).toBe(org.id)
      // Huddle's own header always asks: an id that is not an org of the caller's is not found.
      const asked = await server.request("POST", "/v1/chat/completions", {
        token: apiKey,
        headers: { "huddle-organization": "org-AbCdEf0123456789abcdEFGH" },
        body: { model: "economy", messages: [{ role: "user", content: "x" }] }
      })
      expect(asked.status).toBe(404)
      // `personal`, as the responses name that context, asks for it: a member runs outside the org.
      fake.enqueue({ answer: "mine", usage: { prompt_tokens: 5, completion_tokens: 1 } })
      const memberKey = (await Accounts.createApiKey(server, member)).key
      const personal = await server.request("POST", "/v1/chat/completions", {
        token: memberKey,
        headers: { "huddle-organization": "personal" },
        body: { model: "economy", messages: [{ role: "user", content: "x" }] }
      })
      expect(personal.status, personal.text).toBe(200)
      expect(personal.headers.get("huddle-organization")).toBe("personal")
      // A key bound to the org has no personal context.
      const bound = (await server.request("POST", "/v1/api-keys", { token: member.session, body: { name: "bound", org_id: org.id } })).body.key
      const refused = await server.request("POST", "/v1/chat/completions", {
        token: bound,
        headers: { "huddle-organization": "personal" },
        body: { model: "economy", messages: [{ role: "user", content: "x" }] }
      })
      expect(refused.status).toBe(404)
      expect(refused.text).toContain("no personal context")
    })

    it("answers an org the caller does not belong to with NotFoundError", async () => {
      const org = await Orgs.createOrg(server)
      const error = await clientFor(apiKey, { organization: org.id })
        .chat.completions.create({ model: "economy", messages: [{ role: "user", content: "x" }] })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.NotFoundError)
      expect(error).toMatchObject({ code: "NOT_FOUND" })
    })
  })

  describe("errors in OpenAI's envelope", () => {
    it("refuses unsupported values with BadRequestError naming the field", async () => {
      const n = await client.chat.completions.create({ model: "economy", n: 2, messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e)
      expect(n).toBeInstanceOf(OpenAI.BadRequestError)
      expect(n).toMatchObject({ status: 400, code: "INVALID_REQUEST", type: "invalid_request_error", message: expect.stringContaining("n:") })

      const image = await client.chat.completions.create({
        model: "economy",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }]
      }).catch((e: unknown) => e)
      expect(image).toBeInstanceOf(OpenAI.BadRequestError)
      expect(image).toMatchObject({ message: expect.stringContaining("image_url content parts are not supported") })

      const audio = await client.chat.completions.create({
        model: "economy",
        modalities: ["text", "audio"],
        audio: { voice: "alloy", format: "mp3" },
        messages: [{ role: "user", content: "x" }]
      }).catch((e: unknown) => e)
      expect(audio).toBeInstanceOf(OpenAI.BadRequestError)
      expect(fake.requests).toHaveLength(0)
    })

    it("answers schema failures and malformed JSON in OpenAI's envelope", async () => {
      const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }
      const missing = await server.request("POST", "/v1/chat/completions", { headers, body: { model: "economy" } })
      expect(missing.status).toBe(400)
      expect(missing.body).toEqual({
        error: { message: expect.stringContaining("messages"), type: "invalid_request_error", param: "messages", code: "INVALID_REQUEST" }
      })
      const malformed = await server.request("POST", "/v1/chat/completions", { headers, body: "{\"model\": " })
      expect(malformed.status).toBe(400)
      // No field to name in a body that is not JSON.
      expect(malformed.body.error).toMatchObject({ type: "invalid_request_error", param: null, code: "INVALID_REQUEST" })
      // Other paths keep Huddle's own envelope.
      const elsewhere = await server.request("POST", "/v1/huddle", { headers, body: "{\"input\": " })
      expect(elsewhere.body).toMatchObject({ error: "INVALID_REQUEST" })
    })

    it("answers an unknown route or a wrong method under these paths in OpenAI's envelope, and documents them", async () => {
      const unknown = await server.request("GET", "/v1/chat/completions/nothing-here", { token: apiKey })
      expect(unknown.status).toBe(404)
      expect(unknown.body.error).toMatchObject({ type: "invalid_request_error" })
      const wrong = await server.request("GET", "/v1/chat/completions", { token: apiKey })
      expect(wrong.status).toBe(405)
      expect(wrong.headers.get("allow")).toBe("POST")
      expect(wrong.body.error).toMatchObject({ type: "invalid_request_error", code: "METHOD_NOT_ALLOWED" })
      const openapi = await server.request("GET", "/v1/openapi.json")
      expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining(["/v1/chat/completions", "/v1/models", "/v1/models/{model}"]))
    })

    it("answers bad credentials with AuthenticationError", async () => {
      const error = await clientFor("hk_not-a-real-key").chat.completions.create({ model: "economy", messages: [{ role: "user", content: "x" }] })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError)
      expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED", type: "authentication_error" })
      await expect(clientFor("hk_not-a-real-key").models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError)
    })

    it("answers 502 when every model fails, before any stream starts, and charges nothing", async () => {
      fake.setDefault(FakeOpenAi.badRequest("nope"))
      try {
        const before = await balanceOf(user)
        const plain = await client.chat.completions.create({ model: "fake-standard", messages: [{ role: "user", content: "x" }] })
          .catch((e: unknown) => e)
        expect(plain).toBeInstanceOf(OpenAI.InternalServerError)
        expect(plain).toMatchObject({ status: 502, code: "UPSTREAM_UNAVAILABLE", type: "server_error" })
        const streamed = await client.chat.completions.create({ model: "fake-standard", messages: [{ role: "user", content: "x" }], stream: true })
          .catch((e: unknown) => e)
        expect(streamed).toBeInstanceOf(OpenAI.InternalServerError)
        expect(String((streamed as Error).message)).not.toContain("sk-upstream-secret")
        expect(await balanceOf(user)).toBe(before)
      } finally {
        fake.setDefault({})
      }
    })

    it("answers a whole answer that fails midway with 502 and what its output cost in Huddle-Credits-Charged, as the balance shows", async () => {
      // Over plain HTTP, to read the failure's headers.
      const completeOverHttp = () =>
        fetch(`${server.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "fake-standard", messages: [{ role: "user", content: "x" }] })
        })
      try {
        const before = await balanceOf(user)
        // Every attempt (the retries too) breaks off after three pieces.
        fake.setDefault({ answer: "one two three four five six", chunks: 6, dropAfterChunks: 3 })
        const res = await completeOverHttp()
        expect(res.status).toBe(502)
        expect(await res.json()).toMatchObject({ error: { code: "UPSTREAM_UNAVAILABLE", type: "server_error" } })
        const charged = before - await balanceOf(user)
        // What the attempts produced was charged (an estimate: the provider reported no usage).
        expect(charged).toBeGreaterThan(0)
        expect(res.headers.get("huddle-credits-charged")).toBe(String(charged))

        // Nothing produced: nothing charged, and the answer says so.
        fake.setDefault({ answer: "never", chunks: 2, dropAfterChunks: 0 })
        const none = await completeOverHttp()
        expect(none.status).toBe(502)
        expect(none.headers.get("huddle-credits-charged")).toBe("0")
        expect(before - await balanceOf(user)).toBe(charged)
      } finally {
        fake.setDefault({})
      }
    })

    it("surfaces a failure in the middle of a stream as an APIError, and settles what was used", async () => {
      const before = await balanceOf(user)
      fake.enqueue({ answer: "one two three four five six", chunks: 6, malformedAfterChunks: 3 })
      const stream = await client.chat.completions.create({ model: "fake-standard", messages: [{ role: "user", content: "x" }], stream: true })
      let text = ""
      const error = await (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ""
      })().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE" })
      expect(text).toBe("one two three ")
      const spent = before - (await balanceOf(user))
      expect(spent).toBeGreaterThan(0)
      expect(spent).toBeLessThan(500 * 2)
    })
  })
})

describe("chat completions without credits", () => {
  let server: TestServer.TestServer

  beforeAll(async () => {
    server = await TestServer.start({ starterCredits: 0 })
  }, 60_000)
  afterAll(() => server.stop())

  it("answers 402 INSUFFICIENT_CREDITS as the SDK's APIError, streaming or not", async () => {
    const user = await Accounts.signupAndLogin(server)
    const client = new OpenAI({ apiKey: (await Accounts.createApiKey(server, user)).key, baseURL: `${server.url}/v1`, maxRetries: 0 })
    for (const stream of [false, true]) {
      const error = await client.chat.completions.create({ model: "economy", messages: [{ role: "user", content: "x" }], stream })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect(error).toMatchObject({ status: 402, code: "INSUFFICIENT_CREDITS", type: "insufficient_quota" })
    }
    const audit = await server.request("GET", "/v1/me/audit-log", { token: user.session })
    expect(audit.body.data.filter((event: { event_type: string }) => event.event_type === "credits.denied")).toHaveLength(2)
    const models = await client.models.list()
    expect(models.data.map((m) => m.id)).toContain("offline-economy")
  })
})
