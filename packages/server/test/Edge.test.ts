import * as http from "node:http"
import { Api } from "@huddle/server/Api"
import { Accounts, Orgs, TestServer } from "@huddle/testkit"
import { Encoding, Option, Schema, SchemaAST } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

interface ContractEndpoint {
  readonly method: string
  readonly path: string
  readonly payloadSchema: Option.Option<Schema.Schema.Any>
  readonly urlParamsSchema: Option.Option<Schema.Schema.Any>
}

const envelope = { error: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String) }

describe("the HTTP edge", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({ maxBodyBytes: 4096 })
  })
  afterAll(() => server.stop())

  it("answers health and readiness outside /v1", async () => {
    expect(await server.request("GET", "/healthz")).toMatchObject({ status: 200, body: { status: "ok" } })
    expect(await server.request("GET", "/readyz")).toMatchObject({ status: 200, body: { status: "ready" } })
  })

  it("answers malformed JSON with 400 and the envelope", async () => {
    const res = await server.request("POST", "/v1/auth/signup", { body: "{\"email\": " })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: "INVALID_REQUEST", message: "The request body is not valid JSON" })
  })

  it("answers a body that is not a JSON object, or not JSON at all, with 400", async () => {
    for (const body of ["[1,2]", "\"text\"", "null", "42"]) {
      const res = await server.request("POST", "/v1/auth/login", { body })
      expect(res.status, body).toBe(400)
      expect(res.body, body).toEqual(envelope)
    }
    const plain = await server.request("POST", "/v1/auth/login", {
      body: "email=a@b.co",
      headers: { "content-type": "text/plain" }
    })
    expect(plain.status).toBe(400)
    expect(plain.body.message).toContain("Content-Type")
  })

  it("names the missing field in a schema failure", async () => {
    const res = await server.request("POST", "/v1/auth/login", { body: { password: "whatever" } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: "INVALID_REQUEST", message: "email: is missing" })
  })

  it("answers unknown paths with 404 and the envelope, whatever the method", async () => {
    for (const [method, path] of [["GET", "/v1/nothing-here"], ["GET", "/nothing-here"], ["DELETE", "/v1/nothing-here"], ["GET", "/v1/../etc/passwd"]] as const) {
      const res = await server.request(method, path)
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body).toEqual({ error: "NOT_FOUND", message: expect.any(String) })
    }
  })

  it("answers a known path asked with a method it does not have with 405, the envelope and Allow", async () => {
    const token = (await Accounts.signupAndLogin(server)).session
    for (const [method, path, allow] of [
      ["GET", "/v1/huddle", "POST"],
      ["DELETE", "/v1/me", "GET, HEAD"],
      ["POST", "/v1/memories/mem_1?x=1", "GET, HEAD, PATCH, DELETE"],
      ["PUT", "/v1/huddle/sessions", "GET, HEAD"],
      ["GET", "/v1/rpc", "POST"],
      ["DELETE", "/docs", "GET, HEAD"]
    ] as const) {
      const res = await server.request(method, path, { token })
      const label = `${method} ${path}`
      expect(res.status, label).toBe(405)
      expect(res.headers.get("allow"), label).toBe(allow)
      expect(res.body, label).toEqual({ error: "METHOD_NOT_ALLOWED", message: `${path.split("?")[0]} does not take ${method}; it takes ${allow}` })
    }
    // Without a credential too: which methods a path has is in the public contract.
    const anonymous = await server.request("PATCH", "/v1/api-keys")
    expect([anonymous.status, anonymous.headers.get("allow")]).toEqual([405, "GET, HEAD, POST"])
    // HEAD where GET is: served, not refused.
    expect((await server.request("HEAD", "/healthz")).status).toBe(200)
  })

  it("refuses a body over the limit with 413, before reading it", async () => {
    const res = await server.request("POST", "/v1/auth/signup", {
      body: { email: Accounts.uniqueEmail(), password: "x".repeat(5000) }
    })
    expect(res.status).toBe(413)
    expect(res.body).toEqual({ error: "PAYLOAD_TOO_LARGE", message: expect.any(String) })
  })

  it("answers a chunked body that grows over the limit with 413 and closes the connection, acting on nothing", async () => {
    // No content-length to refuse it by: the limit applies as the body is read. A memory of
    // 5,000 characters is valid, but not in a body over this server's 4,096 bytes.
    const user = await Accounts.signupAndLogin(server)
    const answer = await new Promise<{ status: number; connection: string | undefined; body: unknown }>((resolve, reject) => {
      const request = http.request(`${server.url}/v1/memories`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${user.session}` }
      }, (res) => {
        let text = ""
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk)).on("end", () =>
          resolve({ status: res.statusCode ?? 0, connection: res.headers["connection"], body: JSON.parse(text) })
        )
      })
      request.on("error", reject)
      request.write(`{"scope":"personal",`)
      request.end(`"content":"${"x".repeat(5000)}"}`)
    })
    expect(answer).toEqual({ status: 413, connection: "close", body: { error: "PAYLOAD_TOO_LARGE", message: expect.any(String) } })
    const listed = await server.request("GET", "/v1/memories", { token: user.session })
    expect(listed.status).toBe(200)
    expect(listed.body.data).toEqual([])
  })

  it("refuses text that is not well-formed Unicode or holds control characters with 400 naming the field, writing nothing", async () => {
    const user = await Accounts.signupAndLogin(server)
    await Orgs.createOrg(server, user)
    const token = user.session
    const cases: ReadonlyArray<readonly [string, string, unknown, string, string]> = [
      // [method, path, body, field, what the message says]
      ["POST", "/v1/huddle", "{\"input\":\"\\ud800\"}", "input", "lone surrogate"],
      ["POST", "/v1/huddle", { input: "a\u0000b" }, "input", "U+0000"],
      ["POST", "/v1/huddle", { input: "ok", workspace_id: "wsp_\u001b[2J" }, "workspace_id", "U+001B"],
      ["POST", "/v1/api-keys", { name: "nul\u0000name" }, "name", "U+0000"],
      ["POST", "/v1/api-keys", { name: "tab\tname" }, "name", "U+0009"],
      ["POST", "/v1/orgs", { name: "Acme \udc00" }, "name", "lone surrogate"],
      ["POST", "/v1/memories", { content: "bell\u0007", scope: "personal" }, "content", "U+0007"],
      ["POST", "/v1/memories", { content: "next line\u0085", scope: "personal" }, "content", "U+0085"],
      ["POST", "/v1/auth/signup", { email: "a\ud800@x.io", password: "12345678" }, "email", "lone surrogate"],
      ["DELETE", "/v1/huddle/sessions/%00", undefined, "session_id", "U+0000"],
      ["GET", "/v1/memories/mem_%C2%85", undefined, "id", "U+0085"]
    ]
    for (const [method, path, body, field, what] of cases) {
      const res = await server.request(method, path, { token, ...(body === undefined ? {} : { body }) })
      const label = `${method} ${path} ${JSON.stringify(body)}`
      expect(res.status, label).toBe(400)
      expect(res.body, label).toEqual({ error: "INVALID_REQUEST", message: expect.stringMatching(new RegExp(`^${field}: `)) })
      expect(res.body.message, label).toContain(what)
    }
    expect((await server.request("GET", "/v1/huddle/sessions", { token })).body.data).toEqual([])
    expect((await server.request("GET", "/v1/memories", { token })).body.data).toEqual([])
    expect((await server.request("GET", "/v1/api-keys", { token })).body.data).toEqual([])
    expect((await server.request("GET", "/v1/orgs", { token })).body.data).toHaveLength(1)
  })

  it("keeps tab, newline and carriage return in free-form text, and any script anywhere", async () => {
    const user = await Accounts.signupAndLogin(server)
    const memory = await server.request("POST", "/v1/memories", { token: user.session, body: { content: "line 1\r\n\tline 2", scope: "personal" } })
    expect(memory.status).toBe(201)
    expect(memory.body.content).toBe("line 1\r\n\tline 2")
    const huddle = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Two lines:\n\tsecond" } })
    expect(huddle.status, huddle.text).toBe(200)
    // Mixed scripts, an emoji sequence, an astral character: well-formed, kept as sent.
    const key = await server.request("POST", "/v1/api-keys", { token: user.session, body: { name: "pаypal 日本 👩‍👩‍👧 𝔥" } })
    expect(key.status).toBe(201)
    expect(key.body.name).toBe("pаypal 日本 👩‍👩‍👧 𝔥")
    // An escaped backslash followed by "u0000" is ordinary text.
    const literal = await server.request("POST", "/v1/api-keys", { token: user.session, body: "{\"name\":\"a\\\\u0000b\"}" })
    expect(literal.status).toBe(201)
    expect(literal.body.name).toBe("a\\u0000b")
  })

  /** The contract's endpoints (from `Api` itself), with path params filled for the given org and user. */
  const contractEndpoints = (ids: { readonly orgId: string; readonly userId: string }) =>
    Object.values(Api.groups).flatMap((group) =>
      Object.values(group.endpoints).map((endpoint: ContractEndpoint) => ({
        group: group.identifier,
        method: endpoint.method,
        template: endpoint.path,
        path: endpoint.path.replace(/:(\w+)/g, (_, param: string) => param === "orgId" ? ids.orgId : param === "member" ? ids.userId : "x"),
        payload: endpoint.payloadSchema,
        urlParams: Option.match(endpoint.urlParamsSchema, {
          onNone: (): ReadonlyArray<string> => [],
          onSome: (schema) => SchemaAST.getPropertySignatures(schema.ast).map((property) => String(property.name))
        })
      }))
    )

  it("refuses an unknown body field on every endpoint with 400 naming it, in the endpoint's dialect", async () => {
    const user = await Accounts.signupAndLogin(server)
    const org = await Orgs.createOrg(server, user)
    const withBody = contractEndpoints({ orgId: org.id, userId: user.id })
      .filter((endpoint) =>
        Option.isSome(endpoint.payload) && endpoint.group !== "openai" && endpoint.group !== "rpc" && endpoint.group !== "responses" &&
        endpoint.group !== "embeddings" && endpoint.group !== "anthropic"
      )
    expect(withBody.length).toBeGreaterThanOrEqual(14)
    for (const endpoint of withBody) {
      const token = endpoint.group === "operator" ? server.operatorToken! : user.session
      const res = await server.request(endpoint.method, endpoint.path, { token, body: { unexpected_field: 1 } })
      const label = `${endpoint.method} ${endpoint.template}`
      expect(res.status, label).toBe(400)
      expect(res.body, label).toEqual({ error: "INVALID_REQUEST", message: expect.stringMatching(/^unexpected_field: is unexpected/) })
    }
    // The OpenAI-compatible endpoints take every parameter of OpenAI's and refuse any other, in OpenAI's envelope.
    const chat = await server.request("POST", "/v1/chat/completions", {
      token: user.session,
      body: { model: "economy", messages: [{ role: "user", content: "hi" }], unexpected_field: 1 }
    })
    expect(chat.status, chat.text).toBe(400)
    expect(chat.body.error).toMatchObject({ type: "invalid_request_error", param: "unexpected_field" })
    const responses = await server.request("POST", "/v1/responses", {
      token: user.session,
      body: { model: "economy", input: "hi", unexpected_field: 1 }
    })
    expect(responses.status).toBe(400)
    expect(responses.body.error).toMatchObject({ type: "invalid_request_error", message: expect.stringMatching(/^unexpected_field: is unexpected/) })
    const embeddings = await server.request("POST", "/v1/embeddings", { token: user.session, body: { model: "offline-embed", input: "hi", unexpected_field: 1 } })
    expect(embeddings.status).toBe(400)
    expect(embeddings.body.error).toMatchObject({ type: "invalid_request_error", param: "unexpected_field" })
    // The Messages API refuses it as Anthropic's does, in Anthropic's envelope.
    for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
      const messages = await server.request("POST", path, {
        token: user.session,
        body: { model: "economy", ...(path === "/v1/messages" ? { max_tokens: 10 } : {}), messages: [{ role: "user", content: "hi" }], unexpected_field: 1 }
      })
      expect(messages.status, path).toBe(400)
      expect(messages.body, path).toEqual({
        type: "error",
        error: { type: "invalid_request_error", message: expect.stringMatching(/unexpected_field: is unexpected/) }
      })
    }
  })

  it("refuses a cursor it did not produce on every list, with 400 naming it", async () => {
    const user = await Accounts.signupAndLogin(server)
    const org = await Orgs.createOrg(server, user)
    const lists = contractEndpoints({ orgId: org.id, userId: user.id }).filter((endpoint) => endpoint.urlParams.includes("cursor"))
    expect(lists.map((endpoint) => endpoint.template)).toEqual(expect.arrayContaining([
      "/v1/api-keys", "/v1/me/audit-log", "/v1/memories", "/v1/huddle/sessions", "/v1/orgs/:orgId/admin/members", "/v1/orgs/:orgId/admin/audit-log"
    ]))
    // A raw id was the cursor once: it is no longer one either.
    // The last: the codec's own spelling of a position holding a NUL, which the database refuses.
    for (const cursor of ["garbage", "", "%00", "aud_01J00000000000000000000000", "eyJpZCI6MX0", Encoding.encodeBase64Url("huddle.cursor.1:aud_\u0000")]) {
      for (const endpoint of lists) {
        const token = endpoint.group === "operator" ? server.operatorToken! : user.session
        const res = await server.request("GET", `${endpoint.path}?cursor=${cursor}`, { token })
        const label = `${endpoint.template} ${cursor}`
        expect(res.status, label).toBe(400)
        expect(res.body, label).toEqual({ error: "INVALID_REQUEST", message: "cursor: must be the next_cursor of a previous page" })
      }
    }
  })

  it("answers oversized headers with 431 and the envelope", async () => {
    const { request } = await import("node:http")
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${server.url}/v1/me`, { headers: { "x-padding": "a".repeat(40_000) } }, (response) => {
        let body = ""
        response.on("data", (chunk) => (body += chunk))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }))
      })
      req.on("error", reject)
      req.end()
    })
    expect(res.status).toBe(431)
    expect(JSON.parse(res.body)).toEqual({ error: "REQUEST_HEADERS_TOO_LARGE", message: expect.any(String) })
  })

  it("echoes a well-formed X-Request-Id and makes one otherwise", async () => {
    const echoed = await server.request("GET", "/healthz", { headers: { "x-request-id": "trace-abc.123" } })
    expect(echoed.headers.get("x-request-id")).toBe("trace-abc.123")
    const made = await server.request("GET", "/v1/nope")
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const hostile = await server.request("GET", "/healthz", { headers: { "x-request-id": "a b<script>" } })
    expect(hostile.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const onError = await server.request("GET", "/v1/me", { headers: { "x-request-id": "req-401" } })
    expect(onError.status).toBe(401)
    expect(onError.headers.get("x-request-id")).toBe("req-401")
  })

  it("serves the OpenAPI document and a self-contained API reference", async () => {
    const doc = await server.request("GET", "/v1/openapi.json")
    expect(doc.status).toBe(200)
    expect(doc.body.openapi).toMatch(/^3\./)
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(["/v1/auth/signup", "/v1/auth/login", "/v1/me", "/v1/api-keys", "/v1/api-keys/{id}", "/healthz", "/readyz"])
    )
    const page = await server.request("GET", "/docs")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(page.text).toContain("Huddle API")
    // No script or stylesheet from another host: the page works offline.
    expect(page.text).not.toMatch(/<script[^>]+src=["']https?:/i)
    expect(page.text).not.toMatch(/<link[^>]+href=["']https?:/i)
    // Nor fonts: Scalar fetches Inter and JetBrains Mono from its CDN unless told not to.
    const configuration = /dataset\.configuration = JSON\.stringify\((\{.*?\})\)\s*<\/script>/s.exec(page.text)?.[1]
    expect(configuration, "the reference's configuration").toBeDefined()
    expect(JSON.parse(configuration!)).toMatchObject({ withDefaultFonts: false })
    // Nor a source map that is not there (developer tools would ask for it and get a 404).
    expect(page.text).not.toMatch(/sourceMappingURL/)
    // The reference itself is there, inlined: Scalar's bundle, loaded when the page was first asked for.
    expect(page.text).toMatch(/<script>[^<]*@scalar\/api-reference/)
    const again = await server.request("GET", "/docs")
    expect(again.status).toBe(200)
    expect(again.text).toBe(page.text)
  })

  it("never puts secrets in logs, and writes one structured line per request", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    await server.request("GET", "/v1/me", { token: key, headers: { "x-request-id": "log-check-1" } })
    const lines = server.logs.map((line) => JSON.parse(line))
    const line = lines.find((entry) => entry.annotations?.request_id === "log-check-1")
    expect(line).toMatchObject({ message: "request", annotations: { method: "GET", path: "/v1/me", status: 200 } })
    const all = server.logs.join("\n")
    expect(all).not.toContain(key)
    expect(all).not.toContain(user.session)
    expect(all).not.toContain(user.password)
  })

  it("never answers with a stack trace or SQL", async () => {
    const probes = [
      await server.request("POST", "/v1/auth/signup", { body: { email: "a@b.co'; DROP TABLE users; --", password: "password1" } }),
      await server.request("POST", "/v1/auth/login", { body: { email: "x@y.zz", password: { nested: true } } }),
      await server.request("GET", "/v1/api-keys?limit=%00"),
      await server.request("POST", "/v1/auth/signup", { body: "{\"email\":\"\\ud800@x.io\",\"password\":\"12345678\"}" })
    ]
    for (const res of probes) {
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      expect(res.body).toEqual(envelope)
      expect(res.text).not.toMatch(/\bat .+\.(ts|js):\d+/)
      expect(res.text).not.toMatch(/SELECT|INSERT|relation|syntax error/i)
    }
  })
})
