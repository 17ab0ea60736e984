/**
 * `Idempotency-Key` (docs/decisions/0012-idempotency.md) against the in-process server and a
 * fake OpenAI-compatible upstream: replays charge nothing and call no model, a reused key is
 * refused, concurrent duplicates run once, streams replay as recorded, keys belong to one
 * credential, and the OpenAI SDK works with the header. Also the contract's declarations.
 */
import { randomBytes } from "node:crypto"
import { HttpApi, OpenApi } from "@effect/platform"
import * as AnswerSealing from "@huddle/adapters/crypto/AnswerSealing"
import { Api } from "@huddle/server/Api"
import * as Idempotency from "@huddle/server/shared/Idempotency"
import { RateLimited } from "@huddle/server/shared/RateLimit"
import { Authenticated } from "@huddle/server/shared/Security"
import * as IdempotencyLive from "@huddle/server/shared/IdempotencyLive"
import { Accounts, FakeOpenAi, SseClient, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import OpenAI from "openai"
import { beforeEach, describe, expect, it } from "vitest"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

// Priced as WithFakeUpstream.pricing: one credit per input token, two per output token.
const models = [
  WithFakeUpstream.model("fake-standard", "standard", { upstream_model: "standard-v1" }),
  WithFakeUpstream.model("fake-economy", "economy"),
  WithFakeUpstream.model("fake-premium", "premium")
]

const newKey = () => `key-${randomBytes(8).toString("hex")}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("Idempotency-Key", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  let user: Accounts.TestUser
  let apiKey: string
  fakeUpstreamSuite(models, (started) => ({ fake, server } = started))
  beforeEach(async () => {
    fake.reset()
    user = await Accounts.signupAndLogin(server)
    apiKey = (await Accounts.createApiKey(server, user)).key
  })

  const balanceOf = async (someone: Accounts.TestUser) =>
    (await server.request("GET", "/v1/me", { token: someone.session })).body.credits.balance as number
  const sessionCount = async (someone: Accounts.TestUser) =>
    (await server.request("GET", "/v1/huddle/sessions", { token: someone.session })).body.data.length as number
  const post = (path: string, key: string | undefined, body: unknown, token = apiKey) =>
    server.request("POST", path, { token, body, headers: key === undefined ? {} : { "idempotency-key": key } })
  const replayed = (res: TestServer.Response) => res.headers.get("idempotent-replayed")

  describe("replays", () => {
    it("answers a retry of POST /v1/huddle with the first answer, without running or charging again", async () => {
      fake.enqueue({ answer: "First and only answer.", usage: { prompt_tokens: 10, completion_tokens: 3 } })
      const before = await balanceOf(user)
      const key = newKey()
      const first = await post("/v1/huddle", key, { input: "Summarise the plan" })
      expect(first.status, first.text).toBe(200)
      expect(replayed(first)).toBeNull()
      expect(first.body).toMatchObject({ output: "First and only answer.", credits_charged: 16 })

      const second = await post("/v1/huddle", key, { input: "Summarise the plan" })
      expect(second.status).toBe(200)
      expect(second.text).toBe(first.text)
      expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"))
      expect(replayed(second)).toBe("true")
      // A replay is a request of its own: its own request id, and it counts against the rate limit.
      expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"))
      expect(Number(second.headers.get("ratelimit-remaining"))).toBe(Number(first.headers.get("ratelimit-remaining")) - 1)

      expect(fake.requests).toHaveLength(1)
      expect(await balanceOf(user)).toBe(before - 16)
      expect(await sessionCount(user)).toBe(1)
    })

    it("replays an intent.submit over JSON-RPC, charged once", async () => {
      const before = await balanceOf(user)
      const key = newKey()
      const call = { jsonrpc: "2.0", id: 7, method: "intent.submit", params: { input: "Plan the release" } }
      const first = await post("/v1/rpc", key, call)
      expect(first.status, first.text).toBe(200)
      const charged = first.body.result.credits_charged as number
      expect(charged).toBeGreaterThan(0)
      const second = await post("/v1/rpc", key, call)
      expect(replayed(second)).toBe("true")
      expect(second.text).toBe(first.text)
      const listed = await post("/v1/rpc", undefined, { jsonrpc: "2.0", id: 8, method: "intent.list", params: {} })
      expect(listed.body.result.data).toHaveLength(1)
      expect(await balanceOf(user)).toBe(before - charged)
    })

    it("replays the creation of an API key, an organization, a memory and an invitation: each made once", async () => {
      const keyName = { name: "ci" }
      const k = newKey()
      const createdKey = await post("/v1/api-keys", k, keyName, user.session)
      expect(createdKey.status, createdKey.text).toBe(201)
      const again = await post("/v1/api-keys", k, keyName, user.session)
      expect(again.status).toBe(201)
      expect(replayed(again)).toBe("true")
      // The secret is shown again to the client that lost the first answer, and to no one else.
      expect(again.body.key).toBe(createdKey.body.key)
      const keys = await server.request("GET", "/v1/api-keys", { token: user.session })
      expect(keys.body.data.filter((listed: { name: string }) => listed.name === "ci")).toHaveLength(1)

      const o = newKey()
      const org = await post("/v1/orgs", o, { name: "Acme" }, user.session)
      expect(org.status, org.text).toBe(201)
      expect((await post("/v1/orgs", o, { name: "Acme" }, user.session)).body.id).toBe(org.body.id)
      expect((await server.request("GET", "/v1/orgs", { token: user.session })).body.data).toHaveLength(1)

      const invite = { email: Accounts.uniqueEmail("invitee") }
      const i = newKey()
      const invited = await post(`/v1/orgs/${org.body.id}/admin/members/invite`, i, invite, user.session)
      expect(invited.status, invited.text).toBe(201)
      // Without the key, the second invitation would be a 409 CONFLICT.
      const reinvited = await post(`/v1/orgs/${org.body.id}/admin/members/invite`, i, invite, user.session)
      expect(reinvited.status).toBe(201)
      expect(replayed(reinvited)).toBe("true")

      const m = newKey()
      const memory = { content: "We deploy on Tuesdays", scope: "personal" }
      const created = await post("/v1/memories", m, memory)
      expect(created.status, created.text).toBe(201)
      expect((await post("/v1/memories", m, memory)).body.id).toBe(created.body.id)
      expect((await server.request("GET", "/v1/memories", { token: apiKey })).body.data).toHaveLength(1)
    })

    it("replays a 4xx first answer too", async () => {
      const key = newKey()
      const first = await post("/v1/huddle/sessions/hud_missing/messages", key, { content: "hello?" })
      expect(first.status).toBe(404)
      expect(first.body.error).toBe("NOT_FOUND")
      const second = await post("/v1/huddle/sessions/hud_missing/messages", key, { content: "hello?" })
      expect(second.status).toBe(404)
      expect(second.text).toBe(first.text)
      expect(replayed(second)).toBe("true")
    })

    it("does not keep a 5xx: the retry runs, and only the success is charged", async () => {
      fake.setDefault(FakeOpenAi.badRequest("nope"))
      const before = await balanceOf(user)
      const key = newKey()
      try {
        const failed = await post("/v1/huddle", key, { input: "x" })
        expect(failed.status).toBe(502)
      } finally {
        fake.setDefault({})
      }
      expect(await balanceOf(user)).toBe(before)
      fake.enqueue({ answer: "Now it works.", usage: { prompt_tokens: 4, completion_tokens: 1 } })
      const retried = await post("/v1/huddle", key, { input: "x" })
      expect(retried.status, retried.text).toBe(200)
      expect(replayed(retried)).toBeNull()
      expect(retried.body.output).toBe("Now it works.")
      expect(await balanceOf(user)).toBe(before - 6)
    })

    it("keeps a JSON-RPC 2.0 call by its REST status: an upstream failure answered 200 is not kept, a NOT_FOUND is", async () => {
      fake.setDefault(FakeOpenAi.badRequest("nope"))
      const before = await balanceOf(user)
      const key = newKey()
      const call = { jsonrpc: "2.0", id: 1, method: "intent.submit", params: { input: "x" } }
      try {
        const failed = await post("/v1/rpc", key, call)
        expect(failed.status).toBe(200)
        expect(failed.body.error).toMatchObject({ code: -32006, data: { error: "UPSTREAM_UNAVAILABLE" } })
      } finally {
        fake.setDefault({})
      }
      fake.enqueue({ answer: "Now it works.", usage: { prompt_tokens: 4, completion_tokens: 1 } })
      const retried = await post("/v1/rpc", key, call)
      expect(retried.status, retried.text).toBe(200)
      expect(replayed(retried)).toBeNull()
      expect(retried.body.result).toMatchObject({ status: "completed", output: "Now it works." })
      expect(await balanceOf(user)).toBe(before - retried.body.result.credits_charged)

      const missing = { jsonrpc: "2.0", id: 2, method: "intent.get", params: { id: "int_01HZZZZZZZZZZZZZZZZZZZZZZZ" } }
      const notFoundKey = newKey()
      const first = await post("/v1/rpc", notFoundKey, missing)
      expect(first.body.error).toMatchObject({ code: -32004 })
      const second = await post("/v1/rpc", notFoundKey, missing)
      expect(replayed(second)).toBe("true")
      expect(second.text).toBe(first.text)
    })

    it("replays a streamed huddle as the recorded event stream", async () => {
      fake.enqueue({ answer: "Streamed once, replayed whole.", chunks: 4, usage: { prompt_tokens: 20, completion_tokens: 4 } })
      const before = await balanceOf(user)
      const key = newKey()
      const options = { token: apiKey, body: { input: "Stream it" }, headers: { "idempotency-key": key } }
      const first = await SseClient.post(`${server.url}/v1/huddle?stream=true`, options)
      expect(first.events.map((e) => e.event).slice(-2)).toEqual(["metadata", "done"])
      const second = await SseClient.post(`${server.url}/v1/huddle?stream=true`, options)
      expect(second.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(second.headers.get("idempotent-replayed")).toBe("true")
      expect(second.events).toEqual(first.events)
      expect(fake.requests).toHaveLength(1)
      expect(await balanceOf(user)).toBe(before - 28)
      // The streamed request and the plain one are different requests.
      const plain = await post("/v1/huddle", key, { input: "Stream it" })
      expect(plain.status).toBe(422)
    })

    it("gives the key back when the client goes away mid-stream, so that a retry runs", async () => {
      fake.enqueue({ answer: Array.from({ length: 30 }, (_, i) => `w${i}`).join(" "), chunks: 30, chunkDelayMs: 50 })
      const key = newKey()
      const options = { token: apiKey, body: { input: "a long answer" }, headers: { "idempotency-key": key } }
      await SseClient.post(`${server.url}/v1/huddle?stream=true`, {
        ...options,
        until: (_event, events) => events.filter((e) => e.event === "token").length >= 2
      })
      await fake.waitForDisconnects(1, 2000)
      fake.enqueue({ answer: "Complete this time.", usage: { prompt_tokens: 5, completion_tokens: 3 } })
      let retried: SseClient.Stream | undefined
      for (let i = 0; i < 20; i++) {
        retried = await SseClient.post(`${server.url}/v1/huddle?stream=true`, options)
        if (retried.status !== 409) break
        await sleep(100)
      }
      expect(retried!.status).toBe(200)
      expect(retried!.headers.get("idempotent-replayed")).toBeNull()
      expect(retried!.events.find((e) => e.event === "metadata")!.data.output).toBe("Complete this time.")
    })

    it("gives the key back when the client goes away before the answer, so that a retry runs", async () => {
      fake.enqueue({ answer: "Too late.", firstByteDelayMs: 1_500, usage: { prompt_tokens: 5, completion_tokens: 3 } })
      const key = newKey()
      const body = JSON.stringify({ model: "standard", messages: [{ role: "user", content: "slow" }] })
      const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": key }
      const gone = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers, body, signal: AbortSignal.timeout(300) })
        .then(() => "answered", (error: Error) => error.name)
      expect(gone).toBe("TimeoutError")
      await fake.waitForDisconnects(1, 3_000)
      fake.enqueue({ answer: "On time.", usage: { prompt_tokens: 5, completion_tokens: 3 } })
      let retried: Response | undefined
      for (let i = 0; i < 20; i++) {
        retried = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers, body })
        if (retried.status !== 409) break
        await sleep(100)
      }
      expect(retried!.status).toBe(200)
      expect(retried!.headers.get("idempotent-replayed")).toBeNull()
      const answer = await retried!.json() as { choices: Array<{ message: { content: string } }> }
      expect(answer.choices[0]!.message.content).toBe("On time.")
    })

    it("does not keep a stream that ended in an error event", async () => {
      fake.enqueue({ answer: "one two three four", chunks: 4, malformedAfterChunks: 2 })
      const key = newKey()
      const options = { token: apiKey, body: { input: "x" }, headers: { "idempotency-key": key } }
      const broken = await SseClient.post(`${server.url}/v1/huddle?stream=true`, options)
      expect(broken.events.map((e) => e.event).slice(-2)).toEqual(["error", "done"])
      fake.enqueue({ answer: "whole", usage: { prompt_tokens: 3, completion_tokens: 1 } })
      const retried = await SseClient.post(`${server.url}/v1/huddle?stream=true`, options)
      expect(retried.headers.get("idempotent-replayed")).toBeNull()
      expect(retried.events.find((e) => e.event === "metadata")!.data.output).toBe("whole")
    })
  })

  describe("misuse", () => {
    it("refuses the same key with another body with 422, and changes nothing", async () => {
      fake.enqueue({ answer: "First.", usage: { prompt_tokens: 5, completion_tokens: 1 } })
      const key = newKey()
      expect((await post("/v1/huddle", key, { input: "one thing" })).status).toBe(200)
      const balance = await balanceOf(user)
      const sessions = await sessionCount(user)

      const reused = await post("/v1/huddle", key, { input: "another thing" })
      expect(reused.status).toBe(422)
      expect(reused.body).toEqual({ error: "IDEMPOTENCY_KEY_REUSED", message: expect.any(String) })
      // On another path, or selecting another organization, it is another request too.
      expect((await post("/v1/rpc", key, { method: "intent.submit", params: { input: "one thing" } })).status).toBe(422)
      const otherOrg = await server.request("POST", "/v1/huddle", {
        token: apiKey,
        body: { input: "one thing" },
        headers: { "idempotency-key": key, "huddle-organization": "org_elsewhere" }
      })
      expect(otherOrg.status).toBe(422)

      expect(fake.requests).toHaveLength(1)
      expect(await balanceOf(user)).toBe(balance)
      expect(await sessionCount(user)).toBe(sessions)
    })

    it("refuses a malformed key with 400 before anything runs", async () => {
      for (const key of ["x".repeat(256), "tab\tinside", " "]) {
        const res = await post("/v1/huddle", key, { input: "x" })
        expect(res.status, JSON.stringify(key)).toBe(400)
        expect(res.body.error).toBe("INVALID_REQUEST")
        expect(res.body.message).toContain("Idempotency-Key")
      }
      expect(fake.requests).toHaveLength(0)
      expect(await sessionCount(user)).toBe(0)
      // At the limit, fine.
      fake.enqueue({ answer: "ok" })
      expect((await post("/v1/huddle", "k".repeat(255), { input: "x" })).status).toBe(200)
    })

    it("refuses a keyed request whose body is not JSON with 400 at once, changing nothing", async () => {
      const key = newKey()
      for (const contentType of ["application/vnd.api+json", "application/octet-stream", "multipart/form-data; boundary=x"]) {
        const res = await fetch(`${server.url}/v1/api-keys`, {
          method: "POST",
          headers: { authorization: `Bearer ${user.session}`, "content-type": contentType, "idempotency-key": key },
          body: JSON.stringify({ name: "not json" }),
          signal: AbortSignal.timeout(5_000)
        })
        expect(res.status, contentType).toBe(400)
        expect(await res.json()).toEqual({ error: "INVALID_REQUEST", message: expect.stringContaining("JSON") })
      }
      const keys = await server.request("GET", "/v1/api-keys", { token: user.session })
      expect(keys.body.data.map((k: { name: string }) => k.name)).not.toContain("not json")
      // The key was not used up: a JSON request with it runs.
      const made = await server.request("POST", "/v1/api-keys", { token: user.session, body: { name: "json" }, headers: { "idempotency-key": key } })
      expect(made.status, made.text).toBe(201)
    })

    it("ignores the header on endpoints that do not declare it", async () => {
      const res = await server.request("PUT", "/v1/me/preferences", {
        token: apiKey,
        body: { model_tier: "economy" },
        headers: { "idempotency-key": "not looked at\t" }
      })
      expect(res.status).toBe(200)
    })
  })

  describe("concurrency", () => {
    it("runs one of two concurrent duplicates; the other gets 409 with Retry-After, then the replay", async () => {
      fake.enqueue({ answer: "Slow answer.", firstByteDelayMs: 800, usage: { prompt_tokens: 10, completion_tokens: 2 } })
      const before = await balanceOf(user)
      const key = newKey()
      const first = post("/v1/huddle", key, { input: "slow" })
      for (let i = 0; i < 50 && fake.requests.length === 0; i++) await sleep(20)
      const duplicate = await post("/v1/huddle", key, { input: "slow" })
      expect(duplicate.status).toBe(409)
      expect(duplicate.body).toEqual({ error: "IDEMPOTENCY_IN_PROGRESS", message: expect.any(String) })
      expect(duplicate.headers.get("retry-after")).toBe(String(IdempotencyLive.inProgressRetryAfterSeconds))
      // Even while it runs, another body with that key is a misuse rather than a wait.
      expect((await post("/v1/huddle", key, { input: "not slow" })).status).toBe(422)

      const answered = await first
      expect(answered.status).toBe(200)
      const later = await post("/v1/huddle", key, { input: "slow" })
      expect(later.text).toBe(answered.text)
      expect(replayed(later)).toBe("true")
      expect(fake.requests).toHaveLength(1)
      expect(await balanceOf(user)).toBe(before - 14)
    })

    it("runs exactly one of many simultaneous duplicates", async () => {
      fake.setDefault({ answer: "Only once.", firstByteDelayMs: 200, usage: { prompt_tokens: 10, completion_tokens: 2 } })
      try {
        const before = await balanceOf(user)
        const key = newKey()
        const answers = await Promise.all(Array.from({ length: 8 }, () => post("/v1/huddle", key, { input: "race" })))
        const ran = answers.filter((res) => res.status === 200 && replayed(res) === null)
        expect(ran).toHaveLength(1)
        for (const res of answers) {
          if (res === ran[0]) continue
          if (res.status === 200) expect(res.text).toBe(ran[0]!.text)
          else expect(res.body.error).toBe("IDEMPOTENCY_IN_PROGRESS")
        }
        expect(fake.requests).toHaveLength(1)
        expect(await balanceOf(user)).toBe(before - 14)
        expect(await sessionCount(user)).toBe(1)
      } finally {
        fake.setDefault({})
      }
    })
  })

  describe("scope", () => {
    it("keeps keys apart per credential: another user's, or another credential's, same key runs", async () => {
      const other = await Accounts.signupAndLogin(server, "other")
      const otherKey = (await Accounts.createApiKey(server, other)).key
      const key = newKey()
      fake.setDefault({ answer: "Answer.", usage: { prompt_tokens: 5, completion_tokens: 1 } })
      try {
        const [mine, theirs] = [await balanceOf(user), await balanceOf(other)]
        const a = await post("/v1/huddle", key, { input: "same" })
        const b = await post("/v1/huddle", key, { input: "same" }, otherKey)
        expect([a.status, b.status]).toEqual([200, 200])
        expect(replayed(b)).toBeNull()
        expect(b.body.session_id).not.toBe(a.body.session_id)
        expect(await balanceOf(other)).toBe(theirs - 7)
        // The same user's web session is another credential: its keys are its own too.
        const viaSession = await post("/v1/huddle", key, { input: "same" }, user.session)
        expect(replayed(viaSession)).toBeNull()
        expect(await balanceOf(user)).toBe(mine - 14)
        expect(fake.requests).toHaveLength(3)
      } finally {
        fake.setDefault({})
      }
    })
  })

  describe("through the openai SDK", () => {
    const clientFor = (key: string, maxRetries = 0) => new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries })

    it("replays a chat completion sent with an Idempotency-Key in the request options", async () => {
      fake.enqueue({ answer: "Green on main.", usage: { prompt_tokens: 30, completion_tokens: 5 } })
      const before = await balanceOf(user)
      const client = clientFor(apiKey)
      const body = { model: "fake-standard", messages: [{ role: "user" as const, content: "Is the build green?" }] }
      const options = { headers: { "Idempotency-Key": newKey() } }
      const first = await client.chat.completions.create(body, options).withResponse()
      const second = await client.chat.completions.create(body, options).withResponse()
      expect(second.data).toEqual(first.data)
      expect(first.response.headers.get("idempotent-replayed")).toBeNull()
      expect(second.response.headers.get("idempotent-replayed")).toBe("true")
      expect(second.response.headers.get("huddle-credits-charged")).toBe("40")
      expect(fake.requests).toHaveLength(1)
      expect(await balanceOf(user)).toBe(before - 40)

      // The same key with another body: OpenAI's envelope, raised as the SDK's 422 class.
      const error = await client.chat.completions.create({ ...body, temperature: 0 }, options).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError)
      expect(error).toMatchObject({ status: 422, code: "IDEMPOTENCY_KEY_REUSED", type: "invalid_request_error" })
    })

    it("replays a streamed chat completion as the recorded chunks", async () => {
      fake.enqueue({ answer: "one two three", chunks: 3, usage: { prompt_tokens: 12, completion_tokens: 3 } })
      const before = await balanceOf(user)
      const client = clientFor(apiKey)
      const body = {
        model: "fake-standard",
        messages: [{ role: "user" as const, content: "Count" }],
        stream: true as const,
        stream_options: { include_usage: true }
      }
      const options = { headers: { "Idempotency-Key": newKey() } }
      const read = async () => {
        const chunks = []
        for await (const chunk of await client.chat.completions.create(body, options)) chunks.push(chunk)
        return chunks
      }
      const first = await read()
      const second = await read()
      expect(second).toEqual(first)
      expect(first.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("one two three")
      expect(fake.requests).toHaveLength(1)
      expect(await balanceOf(user)).toBe(before - 18)
    })

    it("the SDK's own retry of a 409 ends with the replay", async () => {
      fake.enqueue({ answer: "Worth the wait.", firstByteDelayMs: 400, usage: { prompt_tokens: 8, completion_tokens: 3 } })
      const body = { model: "fake-standard", messages: [{ role: "user" as const, content: "slow one" }] }
      const options = { headers: { "Idempotency-Key": newKey() } }
      const first = clientFor(apiKey).chat.completions.create(body, options)
      for (let i = 0; i < 50 && fake.requests.length === 0; i++) await sleep(20)
      const retried = await clientFor(apiKey, 3).chat.completions.create(body, options).withResponse()
      expect(retried.data).toEqual(await first)
      expect(retried.response.headers.get("idempotent-replayed")).toBe("true")
      expect(fake.requests).toHaveLength(1)
    })
  })
})

describe("Idempotency-Key in the contract", () => {
  const endpoints: Array<{ route: string; keyed: boolean; declared: boolean; middleware: ReadonlyArray<unknown> }> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations, middleware }) => {
      endpoints.push({
        route: `${endpoint.method} ${endpoint.path}`,
        keyed: Idempotency.isKeyed(mergedAnnotations),
        declared: mergedAnnotations.unsafeMap.has(Idempotency.Keyed.key),
        middleware: [...middleware]
      })
    }
  })

  it("is declared on every POST that creates something or spends credits", () => {
    const keyed = endpoints.filter((e) => e.keyed).map((e) => e.route)
    expect(keyed).toEqual(expect.arrayContaining([
      "POST /v1/huddle",
      "POST /v1/huddle/sessions/:session_id/messages",
      "POST /v1/rpc",
      "POST /v1/chat/completions",
      "POST /v1/api-keys",
      "POST /v1/orgs",
      "POST /v1/orgs/:orgId/admin/members/invite",
      "POST /v1/memories",
      "POST /v1/orgs/:orgId/admin/workspaces",
      "POST /v1/workspaces/:id/repository/reindex"
    ]))
  })

  it("makes every authenticated POST decide: a new one must say whether it is keyed", () => {
    for (const { declared, middleware, route } of endpoints) {
      if (route.startsWith("POST ") && middleware.includes(Authenticated)) expect(declared, route).toBe(true)
    }
  })

  it("enforces it inside authentication and rate limits: Idempotent is declared first", () => {
    for (const { keyed, middleware, route } of endpoints) {
      if (!keyed) continue
      const idempotent = middleware.indexOf(Idempotency.Idempotent)
      expect(idempotent, `${route} has no Idempotent middleware`).toBeGreaterThanOrEqual(0)
      expect(idempotent, route).toBeLessThan(middleware.indexOf(RateLimited))
      expect(idempotent, route).toBeLessThan(middleware.indexOf(Authenticated))
    }
  })

  it("documents the header and its errors in the OpenAPI document", () => {
    const spec = OpenApi.fromApi(Api)
    const start = spec.paths["/v1/huddle"]?.post
    expect(start?.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: "Idempotency-Key", in: "header", required: false })]))
    expect(Object.keys(start?.responses ?? {})).toEqual(expect.arrayContaining(["409", "422"]))
    const names = (operation: OpenApi.OpenAPISpecOperation | undefined) => (operation?.parameters ?? []).map((p) => p.name)
    expect(names(spec.paths["/v1/chat/completions"]?.post)).toContain("Idempotency-Key")
    expect(names(spec.paths["/v1/me/preferences"]?.put)).not.toContain("Idempotency-Key")
  })
})

describe("sealed records", () => {
  const recorded = { status: 201, headers: { "content-type": "application/json" }, body: new TextEncoder().encode("{\"key\":\"hk_secret\"}") }

  it("open only with the credential's secret and for the same request", () => {
    const key = AnswerSealing.sealingKey("hk_one")
    const sealed = AnswerSealing.seal(key, "fp", IdempotencyLive.encodeRecorded(recorded))
    expect(Buffer.from(sealed).toString("latin1")).not.toContain("hk_secret")
    expect(IdempotencyLive.decodeRecorded(AnswerSealing.unseal(key, "fp", sealed)!)).toEqual(recorded)
    expect(AnswerSealing.unseal(AnswerSealing.sealingKey("hk_two"), "fp", sealed)).toBeUndefined()
    expect(AnswerSealing.unseal(key, "other", sealed)).toBeUndefined()
  })

  it("keeps 2xx and 4xx answers but not 5xx or 429", () => {
    expect([200, 201, 204, 400, 402, 404, 409, 422].every(IdempotencyLive.isKeptStatus)).toBe(true)
    expect([429, 499, 500, 502, 503].some(IdempotencyLive.isKeptStatus)).toBe(false)
  })
})
