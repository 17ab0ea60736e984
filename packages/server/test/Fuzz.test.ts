/**
 * A property-based fuzzer over the whole HTTP contract (issue 6, "Hostile input").
 *
 * Every endpoint of `Api` is enumerated from the contract itself (groups → endpoints: method,
 * path, path/query/payload schemas), and sent malformed and adversarial requests — anonymous,
 * with a web session and with an API key: wrong types, missing and extra fields, huge strings
 * (under and over the 1 MiB body limit, with and without Content-Length), odd Unicode, injection
 * strings, invalid and overlong UTF-8, bad JSON, wrong content types, absurd query parameters,
 * path traversal and broken percent-encoding in ids, CRLF in headers. Text is attacked inside
 * otherwise valid payloads too (payloadArbitrary.ts): lone surrogates, NUL and other control
 * characters in one field at a time, and mixed scripts, which must be kept as sent. Requests go over a raw TCP socket, so
 * nothing (URL normalisation, header validation) is cleaned up on the way.
 *
 * For every response: never a 5xx; an error is always in the path's envelope (OpenAI's on
 * /v1/chat/completions and /v1/models, Anthropic's on /v1/messages, JSON-RPC or ours on /v1/rpc,
 * ours elsewhere). And state
 * is snapshotted before and after each batch (the user's balance and profile, API keys,
 * memories, huddle sessions, audit logs; the org's credits, members, policies, preferences):
 * when no mutating request of the batch succeeded, nothing may have changed.
 *
 * Bounded for CI; run longer with `HUDDLE_FUZZ_RUNS` (batches per property, default 30):
 *
 *   HUDDLE_FUZZ_RUNS=2000 npx vitest run packages/server/test/Fuzz.test.ts
 *
 * `HUDDLE_FUZZ_SEED` replays a failing run (fast-check prints the seed and path);
 * `HUDDLE_FUZZ_SEED=random` explores new cases.
 *
 * CI runs a fixed seed (11), so that its failures replay; `random` is for exploring locally.
 */
import { connect } from "node:net"
import { Api } from "@huddle/server/Api"
import { dialectOf } from "@huddle/server/edge/ErrorTranslation"
import { Accounts, Orgs, TestServer } from "@huddle/testkit"
import { FastCheck as fc, Option, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as PayloadArbitrary from "./payloadArbitrary.js"

const numRuns = Number(process.env.HUDDLE_FUZZ_RUNS ?? 30)
const ciSeed = 11
const seed = process.env.HUDDLE_FUZZ_SEED === "random"
  ? undefined
  : process.env.HUDDLE_FUZZ_SEED === undefined
  ? ciSeed
  : Number(process.env.HUDDLE_FUZZ_SEED)
const maxBodyBytes = 1024 * 1024

// ---------------------------------------------------------------------------------------------
// The contract, enumerated

interface Endpoint {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly params: ReadonlyArray<string>
  readonly payload: Option.Option<Schema.Schema<unknown, unknown, never>>
  readonly urlParams: ReadonlyArray<string>
}

interface ContractEndpoint {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly payloadSchema: Option.Option<Schema.Schema.Any>
  readonly urlParamsSchema: Option.Option<Schema.Schema.Any>
}

const fieldNames = (schema: Schema.Schema.Any): ReadonlyArray<string> =>
  Schema.isSchema(schema) && "fields" in schema && typeof schema.fields === "object" && schema.fields !== null
    ? Object.keys(schema.fields)
    : []

const noContext = (schema: Schema.Schema.Any): Schema.Schema<unknown, unknown, never> =>
  Schema.asSchema(schema) as Schema.Schema<unknown, unknown, never>

const endpoints: ReadonlyArray<Endpoint> = Object.values(Api.groups).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint: ContractEndpoint): Endpoint => ({
    name: `${group.identifier}.${endpoint.name}`,
    method: endpoint.method,
    path: endpoint.path,
    params: [...endpoint.path.matchAll(/:(\w+)/g)].map((match) => match[1]!),
    payload: Option.map(endpoint.payloadSchema, noContext),
    urlParams: Option.match(endpoint.urlParamsSchema, { onNone: () => [], onSome: fieldNames })
  }))
)

// ---------------------------------------------------------------------------------------------
// Raw HTTP: exactly the bytes we mean, over a socket

interface Sent {
  readonly method: string
  readonly target: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body?: Buffer
  /** Send the body chunked (no Content-Length). */
  readonly chunked?: boolean
}

interface Received {
  readonly status: number
  readonly headers: Record<string, string>
  readonly text: string
}

const decodeChunked = (raw: Buffer): Buffer => {
  const parts: Array<Buffer> = []
  let at = 0
  while (at < raw.length) {
    const eol = raw.indexOf("\r\n", at)
    if (eol < 0) break
    const size = parseInt(raw.subarray(at, eol).toString("latin1"), 16)
    if (!Number.isFinite(size) || size === 0) break
    parts.push(raw.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
  return Buffer.concat(parts)
}

const send = (port: number, request: Sent): Promise<Received> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    const chunks: Array<Buffer> = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer in 10 s to ${request.method} ${request.target}`))
    }, 10_000)
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", () => undefined) // a reset after the answer (a body refused unread) is fine
    socket.on("close", () => {
      clearTimeout(timer)
      const raw = Buffer.concat(chunks)
      const split = raw.indexOf("\r\n\r\n")
      if (split < 0) return reject(new Error(`no HTTP answer to ${request.method} ${request.target.slice(0, 100)} (${request.body?.length ?? 0} bytes${request.chunked ? " chunked" : ""}, ${request.headers.map(([n, v]) => `${n}: ${v.slice(0, 30)}`).join(", ")}): ${raw.toString("latin1")}`))
      const [statusLine, ...lines] = raw.subarray(0, split).toString("latin1").split("\r\n")
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(":")
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      const rest = raw.subarray(split + 4)
      // Only the first answer: a pipelined second one (after a smuggling attempt) is not ours to read.
      const length = Number(headers["content-length"] ?? rest.length)
      const body = headers["transfer-encoding"] === "chunked" ? decodeChunked(rest) : rest.subarray(0, length)
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, text: body.toString("utf8") })
    })
    socket.on("connect", () => {
      const lines = [`${request.method} ${request.target} HTTP/1.1`, "host: 127.0.0.1", "connection: close"]
      for (const [name, value] of request.headers) lines.push(`${name}: ${value}`)
      if (request.body !== undefined) {
        lines.push(request.chunked ? "transfer-encoding: chunked" : `content-length: ${request.body.length}`)
      }
      socket.write(Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"))
      if (request.body !== undefined) {
        if (request.chunked) {
          for (let at = 0; at < request.body.length; at += 64 * 1024) {
            const piece = request.body.subarray(at, at + 64 * 1024)
            socket.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]))
          }
          socket.write("0\r\n\r\n")
        } else {
          socket.write(request.body)
        }
      }
    })
  })

// ---------------------------------------------------------------------------------------------
// Hostile values

const hugeWithin = "x".repeat(maxBodyBytes - 4096)
const hugeBeyond = "y".repeat(maxBodyBytes + 1024)

const oddStrings: ReadonlyArray<string> = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "\u202e\u200f\u200d\ufeff",
  "😀👩‍👩‍👧‍👦🏳️‍🌈",
  "é".normalize("NFD"),
  "' OR '1'='1' --",
  "'; DROP TABLE users; --",
  "\"},\"__proto__\":{\"admin\":true},\"x\":{\"",
  "{\"$gt\":\"\"}",
  "\r\nSet-Cookie: pwned=1",
  "<script>alert(1)</script>",
  "../../../../etc/passwd",
  "%00%2e%2e%2f",
  "${jndi:ldap://x}",
  "a".repeat(65),
  "b".repeat(10_000),
  "ℌ𝔲𝔡𝔡𝔩𝔢".repeat(2000),
  "hk_" + "0".repeat(40),
  "hs_deadbeef",
  "org_00000000000000000000000000",
  "1e309",
  "-1",
  "NaN",
  "null",
  "true"
]

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...oddStrings) },
  { weight: 2, arbitrary: PayloadArbitrary.hostileText },
  { weight: 2, arbitrary: fc.fullUnicodeString({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(hugeWithin.slice(0, 300_000), hugeWithin) }
)

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      null, true, false, 0, -1, 1.5, -0, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 2 ** 63, [], {}, [null], { a: 1 }, ["x", 1]
    )
  },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) }
)

// ---------------------------------------------------------------------------------------------
// Requests

type Auth = "none" | "session" | "key" | "garbage" | "operator"

interface Fixtures {
  readonly user: Accounts.TestUser
  readonly key: { readonly id: string; readonly key: string }
  readonly org: Orgs.TestOrg
  readonly memoryId: string
  /** The server's operator token (not a user's credential). */
  readonly operatorToken: string
}

/** A request in terms of the fixtures, resolved when it is sent (fixtures may be remade). */
interface Case {
  readonly endpoint: Endpoint
  readonly auth: Auth
  readonly id: (fixtures: Fixtures, param: string) => string
  readonly query: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: Body
}

type Body =
  | { readonly _tag: "None" }
  | { readonly _tag: "Json"; readonly value: unknown; readonly contentType: string; readonly chunked: boolean }
  | { readonly _tag: "Raw"; readonly bytes: Buffer; readonly contentType: string; readonly chunked: boolean }

const realId = (fixtures: Fixtures, param: string): string => {
  switch (param) {
    case "orgId":
      return fixtures.org.id
    case "member":
      return fixtures.user.id
    case "id":
      return fixtures.memoryId
    default:
      return "0"
  }
}

/** Path segments, already as they go on the wire: traversal, broken and odd percent-encoding. */
const hostileSegments: ReadonlyArray<string> = [
  "",
  ".",
  "..",
  "..%2F..%2Fme",
  "%2e%2e",
  "%2e%2e%2f%2e%2e%2fme",
  "..;",
  "%",
  "%zz",
  "%c0%ae%c0%ae",
  "%ED%A0%80",
  "%FF%FE",
  "%00",
  "%0d%0aX-Injected:%201",
  "%F0%9F%98%80",
  "%E2%80%AE",
  // overlong UTF-8: NUL, "/", ".." in two, three and four bytes; a surrogate; a C1 control
  "%C0%80",
  "%E0%80%AF",
  "%F0%80%80%80",
  "%C0%AE%C0%AE%C0%AF",
  "%ED%B0%80",
  "%C2%85",
  "us%D0%B5r_01", // a Cyrillic е among Latin letters
  "'%20OR%201=1--",
  "1;DROP%20TABLE%20orgs",
  "a".repeat(65),
  "a".repeat(3000),
  "-1",
  "0",
  "null",
  "undefined",
  "__proto__",
  "constructor",
  "org_00000000000000000000000000",
  "%2Fv1%2Fme",
  "x@y.z"
]

const idArb: fc.Arbitrary<Case["id"]> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(realId) },
  { weight: 4, arbitrary: fc.constantFrom(...hostileSegments).map((segment) => () => segment) },
  {
    weight: 1,
    arbitrary: fc.fullUnicodeString({ maxLength: 20 }).map((s) => () => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "x")))
  },
  // A real id with something hostile appended: a valid prefix must not help.
  {
    weight: 1,
    arbitrary: fc.constantFrom("%00", "/..", "'--", "%2F..", "?", "#", ";x=1").map((tail) => (f: Fixtures, p: string) =>
      `${realId(f, p)}${tail}`
    )
  }
)

const queryValues: ReadonlyArray<string> = [
  "-1",
  "0",
  "101",
  "1e309",
  "99999999999999999999999",
  "1.5",
  "0x10",
  "abc",
  "",
  "%00",
  "%zz",
  "%FF",
  "%C0%80",
  "%ED%A0%80",
  "%C2%85",
  "%E2%80%AE",
  "p%D0%B0ypal",
  "null",
  "true",
  "maybe",
  "[]",
  "%0d%0aSet-Cookie:%20x=1",
  "'%20OR%201=1",
  "2025-13-45T99:99:99Z",
  "a".repeat(200),
  "b".repeat(8000)
]

const queryArb = (endpoint: Endpoint): fc.Arbitrary<string> => {
  const names = [...endpoint.urlParams, "limit", "cursor", "stream", "__proto__", "x"]
  const pair = fc.tuple(
    fc.constantFrom(...names),
    fc.oneof(fc.constantFrom(...queryValues), fc.integer().map(String), fc.webSegment())
  )
  const shaped = fc.oneof(
    pair.map(([name, value]) => `${name}=${value}`),
    pair.map(([name, value]) => `${name}[]=${value}`), // an "array"
    pair.map(([name, value]) => `${name}=${value}&${name}=${value}`), // repeated
    pair.map(([name]) => name), // no value
    fc.constant("&&&=&")
  )
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant("") },
    { weight: 3, arbitrary: fc.array(shaped, { minLength: 1, maxLength: 4 }).map((parts) => `?${parts.join("&")}`) }
  )
}

const contentTypes: ReadonlyArray<string> = [
  "application/json",
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=latin1",
  "application/vnd.api+json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/jsonx",
  "",
  "*/*"
]

/**
 * A valid payload from the endpoint's own schema, on the wire side; `{}` when none can be made.
 * Not `Arbitrary.make`: its filters can draw forever (payloadArbitrary.ts).
 */
const validArb = (endpoint: Endpoint): fc.Arbitrary<unknown> =>
  Option.match(endpoint.payload, { onNone: () => fc.constant({}), onSome: PayloadArbitrary.validPayload })

const mutate = (value: unknown): fc.Arbitrary<unknown> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return hostileValue
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  const withKey = (key: string, v: unknown) => ({ ...record, [key]: v })
  const options: Array<fc.Arbitrary<unknown>> = [
    // an extra field, sometimes one that means something elsewhere
    fc.tuple(fc.constantFrom("extra", "__proto__", "user_id", "balance", "role", "admin", "org_id", "id"), hostileValue).map(
      ([key, v]) => withKey(key, v)
    ),
    hostileValue
  ]
  if (keys.length > 0) {
    options.push(
      fc.constantFrom(...keys).map((key) => Object.fromEntries(keys.filter((k) => k !== key).map((k) => [k, record[k]]))),
      fc.tuple(fc.constantFrom(...keys), hostileValue).map(([key, v]) => withKey(key, v)),
      fc.constantFrom(...keys).map((key) => withKey(key, { nested: record[key] })),
      fc.constantFrom(...keys).map((key) => withKey(key, [record[key]]))
    )
  }
  return fc.oneof(...options)
}

const badJson: ReadonlyArray<string> = [
  "",
  "{",
  "{\"a\":",
  "{'a':1}",
  "{\"a\":1,}",
  "[1,2,]",
  "NaN",
  "undefined",
  "\ufeff{}",
  "{\"a\":\"\\ud800\"}",
  "{\"a\":\"\\u0000\"}",
  "{\"a\":1}{\"b\":2}",
  "{\"__proto__\":{\"polluted\":true}}",
  "{\"constructor\":{\"prototype\":{\"polluted\":true}}}",
  "1e999999",
  "\"" + "\\".repeat(9999) + "\"",
  "[".repeat(100_000) + "]".repeat(100_000),
  "{\"a\":".repeat(50_000) + "1" + "}".repeat(50_000),
  "[" + "1,".repeat(200_000) + "1]"
]

const invalidUtf8: ReadonlyArray<Buffer> = [
  Buffer.from([0xff, 0xfe, 0xfd]),
  Buffer.concat([Buffer.from("{\"email\":\""), Buffer.from([0xc3, 0x28]), Buffer.from("@x.io\",\"password\":\"12345678\"}")]),
  Buffer.concat([Buffer.from("{\"input\":\""), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from("\",\"content\":\"\xff\"}")]),
  Buffer.concat([Buffer.from("{\"name\":\""), Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]), Buffer.from("\"}")]),
  Buffer.concat([Buffer.from("{\"model\":\"x\",\"messages\":[{\"role\":\"user\",\"content\":\""), Buffer.from([0x80, 0xbf]), Buffer.from("\"}]}")]),
  Buffer.from([0x00, 0x00, 0x00, 0x7b, 0x7d]),
  Buffer.from("\u0000{}", "latin1")
]

/** Overlong UTF-8 (a character in more bytes than it needs), where a lax decoder finds NUL, a quote or "../". */
const overlongUtf8: ReadonlyArray<Buffer> = [
  [0xc0, 0x80], // NUL
  [0xe0, 0x80, 0x80], // NUL
  [0xf0, 0x80, 0x80, 0x80], // NUL
  [0xc0, 0xa2], // "
  [0xc0, 0xae, 0xc0, 0xae, 0xc0, 0xaf], // ../
  [0xe0, 0x80, 0xaf] // /
].flatMap((bytes) =>
  ["input", "content", "name", "email"].map((field) =>
    Buffer.concat([Buffer.from(`{"${field}":"a`), Buffer.from(bytes), Buffer.from(`b","scope":"personal","password":"12345678"}`)])
  )
)

const bodyArb = (endpoint: Endpoint): fc.Arbitrary<Body> => {
  const valid = validArb(endpoint)
  // Valid but for one field of text: a lone surrogate, a control character, or mixed scripts.
  const hostileText = Option.match(endpoint.payload, { onNone: () => valid, onSome: PayloadArbitrary.withHostileText })
  const json = (value: fc.Arbitrary<unknown>) =>
    fc.record({
      value,
      contentType: fc.oneof({ weight: 4, arbitrary: fc.constant("application/json") }, { weight: 1, arbitrary: fc.constantFrom(...contentTypes) }),
      chunked: fc.boolean()
    }).map((fields): Body => ({ _tag: "Json", ...fields }))
  const raw = (bytes: fc.Arbitrary<Buffer>) =>
    fc.record({ bytes, contentType: fc.constantFrom(...contentTypes), chunked: fc.boolean() }).map((fields): Body => ({ _tag: "Raw", ...fields }))
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<Body>({ _tag: "None" }) },
    { weight: 1, arbitrary: json(valid) },
    { weight: 5, arbitrary: json(valid.chain(mutate)) },
    { weight: 1, arbitrary: json(hostileValue) },
    { weight: 2, arbitrary: raw(fc.constantFrom(...badJson).map((s) => Buffer.from(s))) },
    { weight: 1, arbitrary: raw(fc.constantFrom(...invalidUtf8, ...overlongUtf8)) },
    { weight: 3, arbitrary: json(hostileText) },
    // Beyond the body limit, declared with Content-Length. Not chunked: the platform destroys the
    // socket when a chunked body passes the limit (NodeStream.toString's release), so such a
    // request gets no answer at all rather than a 413 (reported; not fixed here).
    {
      weight: 1,
      arbitrary: json(valid.map((v) => typeof v === "object" && v !== null ? { ...v, padding: hugeBeyond } : hugeBeyond)).map((body) =>
        body._tag === "Json" ? { ...body, chunked: false } : body
      )
    }
  )
}

const headerArb = (): fc.Arbitrary<ReadonlyArray<readonly [string, string]>> =>
  fc.array(
    fc.oneof(
      fc.tuple(
        fc.constantFrom("huddle-organization", "openai-organization", "x-request-id", "idempotency-key", "accept", "x-forwarded-for"),
        fc.constantFrom("", "x".repeat(100), "org_%00", "' OR 1=1", "\u00ff\u00fe", "../..", "text/event-stream", "a\tb")
      ),
      // a CRLF in a header: raw, this is a second header or broken HTTP
      fc.constantFrom<readonly [string, string]>(["x-request-id", "a\r\nx-injected: 1"], ["x-evil", "1\r\ncontent-length: 3"])
    ),
    { maxLength: 2 }
  )

const caseArb: fc.Arbitrary<Case> = fc.constantFrom(...endpoints).chain((endpoint) =>
  fc.record({
    endpoint: fc.constant(endpoint),
    auth: fc.constantFrom<Auth>("none", "session", "session", "key", "key", "garbage", "operator"),
    id: idArb,
    query: queryArb(endpoint),
    headers: headerArb(),
    body: endpoint.payload._tag === "Some" || endpoint.method !== "GET"
      ? bodyArb(endpoint)
      : fc.oneof({ weight: 3, arbitrary: fc.constant<Body>({ _tag: "None" }) }, { weight: 1, arbitrary: bodyArb(endpoint) })
  })
)

const garbageTokens = ["hk_nope", "hs_" + "0".repeat(64), "Bearer", "", "' OR 1=1 --", "\u00e9\u00e9", "x".repeat(5000)]

const toSent = (c: Case, fixtures: Fixtures, nth: number): Sent => {
  const target = c.endpoint.path.replace(/:(\w+)/g, (_, param: string) => c.id(fixtures, param)) + c.query
  const headers: Array<readonly [string, string]> = [...c.headers]
  if (c.auth === "session") headers.push(["authorization", `Bearer ${fixtures.user.session}`])
  if (c.auth === "key") headers.push(["authorization", `Bearer ${fixtures.key.key}`])
  if (c.auth === "operator") headers.push(["authorization", `Bearer ${fixtures.operatorToken}`])
  if (c.auth === "garbage") headers.push(["authorization", `Bearer ${garbageTokens[nth % garbageTokens.length]}`])
  switch (c.body._tag) {
    case "None":
      return { method: c.endpoint.method, target, headers }
    case "Json":
    case "Raw": {
      const bytes = c.body._tag === "Json" ? Buffer.from(JSON.stringify(c.body.value) ?? "null", "utf8") : c.body.bytes
      if (c.body.contentType !== "") headers.push(["content-type", c.body.contentType])
      return { method: c.endpoint.method, target, headers, body: bytes, chunked: c.body.chunked }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// What every answer must look like

const codeShape = /^[A-Z_]+$/

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const isOurs = (body: unknown) =>
  isObject(body) && typeof body.error === "string" && codeShape.test(body.error) && typeof body.message === "string"

const isOpenAi = (body: unknown) =>
  isObject(body) && isObject(body.error) && typeof body.error.message === "string" && typeof body.error.type === "string" &&
  typeof body.error.code === "string" && codeShape.test(body.error.code)

/** Anthropic's envelope, with one of its error types. */
const anthropicTypes = new Set([
  "invalid_request_error", "authentication_error", "billing_error", "permission_error", "not_found_error",
  "request_too_large", "rate_limit_error", "api_error", "overloaded_error"
])
const isAnthropic = (body: unknown) =>
  isObject(body) && body.type === "error" && isObject(body.error) && typeof body.error.message === "string" &&
  typeof body.error.type === "string" && anthropicTypes.has(body.error.type)

const isJsonRpcResponse = (body: unknown) =>
  isObject(body) && body.jsonrpc === "2.0" && "id" in body &&
  (isObject(body.error) ? typeof body.error.code === "number" && typeof body.error.message === "string" : "result" in body)

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const describeExchange = (sent: Sent, received: Received) =>
  `${sent.method} ${sent.target.slice(0, 200)} [${sent.headers.map(([n, v]) => `${n}: ${v.slice(0, 40)}`).join(", ")}] body ${
    sent.body === undefined ? "none" : `${sent.body.length} bytes${sent.chunked ? " chunked" : ""}: ${sent.body.subarray(0, 120).toString("latin1")}`
  } → ${received.status} ${received.text.slice(0, 300)}`

const checkAnswer = (sent: Sent, received: Received) => {
  const what = describeExchange(sent, received)
  expect(received.status, what).toBeGreaterThanOrEqual(200)
  expect(received.status, what).toBeLessThan(500)
  expect(received.text, what).not.toMatch(/\bat .+\.(ts|js):\d+/)
  expect(received.headers["x-injected"], what).toBeUndefined()
  expect(received.headers["set-cookie"], what).toBeUndefined()
  if (received.status < 400) {
    if (received.status !== 204 && !(received.headers["content-type"] ?? "").startsWith("text/")) {
      expect(parse(received.text), what).toBeDefined()
    }
    return
  }
  const body = parse(received.text)
  const path = sent.target.split("?")[0]!
  // Requests Node's HTTP parser refuses (a CRLF smuggled into a header) are answered before any
  // path is known (Server.ts, `clientError`), always in our envelope.
  const brokenHttp = isOurs(body) && received.status === 400 && isObject(body) && body.message === "The request is not valid HTTP"
  if (dialectOf(path) === "openai" && !brokenHttp) {
    expect(isOpenAi(body), `OpenAI envelope: ${what}`).toBe(true)
  } else if (dialectOf(path) === "anthropic" && !brokenHttp) {
    expect(isAnthropic(body), `Anthropic envelope: ${what}`).toBe(true)
  } else if (path === "/v1/rpc") {
    expect(isOurs(body) || isJsonRpcResponse(body), `envelope or JSON-RPC: ${what}`).toBe(true)
  } else {
    expect(isOurs(body), `envelope: ${what}`).toBe(true)
  }
}

const checkRpcProtocolError = (sent: Sent, received: Received) => {
  // JSON-RPC protocol errors (parse, invalid request) are 200 with a JSON-RPC error body.
  if (received.status === 200 && sent.target.startsWith("/v1/rpc")) {
    const body = parse(received.text)
    expect(isJsonRpcResponse(body) || Array.isArray(body), describeExchange(sent, received)).toBe(true)
  }
}

// ---------------------------------------------------------------------------------------------
// State

const withoutUsage = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutUsage)
    : isObject(value)
    ? Object.fromEntries(Object.entries(value).filter(([k]) => k !== "last_used_at").map(([k, v]) => [k, withoutUsage(v)]))
    : value

describe("the fuzzer: hostile input to every endpoint", () => {
  let server: TestServer.TestServer
  let port: number
  let fixtures: Fixtures

  const makeFixtures = async (): Promise<Fixtures> => {
    const user = await Accounts.signupAndLogin(server, "fuzz")
    const key = await Accounts.createApiKey(server, user, { name: "fuzz" })
    const org = await Orgs.createOrg(server, user, "Fuzz Org")
    const memory = await server.request("POST", "/v1/memories", { token: user.session, body: { content: "a fact", scope: "personal" } })
    expect(memory.status, memory.text).toBe(201)
    return { user, key, org, memoryId: memory.body.id, operatorToken: server.operatorToken! }
  }

  const snapshot = async () => {
    const get = async (path: string) => {
      const res = await server.request("GET", path, { token: fixtures.user.session })
      return { status: res.status, body: withoutUsage(res.body) }
    }
    const org = `/v1/orgs/${fixtures.org.id}`
    const auditLog = async (path: string) => {
      const res = await server.request("GET", `${path}?limit=100`, { token: fixtures.user.session })
      return { status: res.status, count: Array.isArray(res.body?.data) ? res.body.data.length : -1, newest: res.body?.data?.[0] }
    }
    return {
      me: await get("/v1/me"),
      apiKeys: await get("/v1/api-keys?limit=100"),
      memories: await get("/v1/memories?limit=100"),
      sessions: await get("/v1/huddle/sessions?limit=100"),
      orgs: await get("/v1/orgs"),
      credits: await get(`${org}/credits`),
      members: await get(`${org}/admin/members?limit=100`),
      policies: await get(`${org}/admin/policies`),
      preferences: await get(`${org}/admin/preferences`),
      orgAudit: await auditLog(`${org}/admin/audit-log`),
      meAudit: await auditLog("/v1/me/audit-log")
    }
  }

  /** Remakes the fixtures when a successful request broke them (logged out, revoked, left, deleted). */
  const ensureFixtures = async () => {
    const checks = await Promise.all([
      server.request("GET", "/v1/me", { token: fixtures.user.session }),
      server.request("GET", "/v1/me", { token: fixtures.key.key }),
      server.request("GET", `/v1/orgs/${fixtures.org.id}/admin`, { token: fixtures.user.session }),
      server.request("GET", `/v1/memories/${fixtures.memoryId}`, { token: fixtures.user.session })
    ])
    if (checks.some((res) => res.status !== 200)) fixtures = await makeFixtures()
  }

  beforeAll(async () => {
    // Limits high enough that the fuzzer measures input handling, not rate limiting.
    server = await TestServer.start({ rateLimits: { intent: 1_000_000, chat: 1_000_000, read: 1_000_000 } })
    port = Number(new URL(server.url).port)
    fixtures = await makeFixtures()
  })
  afterAll(() => server.stop())

  const stats = { requests: 0, batches: 0, rejectedBatches: 0, byStatus: new Map<number, number>(), endpoints: new Set<string>() }

  const runBatch = async (batch: ReadonlyArray<Case>) => {
    const before = await snapshot()
    let mutated = false
    for (const [nth, c] of batch.entries()) {
      const sent = toSent(c, fixtures, nth)
      const received = await send(port, sent)
      stats.requests++
      stats.endpoints.add(c.endpoint.name)
      stats.byStatus.set(received.status, (stats.byStatus.get(received.status) ?? 0) + 1)
      checkAnswer(sent, received)
      checkRpcProtocolError(sent, received)
      if (sent.method !== "GET" && received.status < 400) mutated = true
    }
    stats.batches++
    if (!mutated) {
      stats.rejectedBatches++
      expect(await snapshot(), `state changed by rejected requests: ${batch.map((c) => c.endpoint.name).join(", ")}`).toEqual(before)
    }
    await ensureFixtures()
  }

  it("enumerates the whole contract", () => {
    expect(endpoints.length).toBeGreaterThanOrEqual(35)
    expect(endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(
      expect.arrayContaining(["POST /v1/chat/completions", "POST /v1/rpc", "DELETE /v1/orgs/:orgId", "GET /healthz"])
    )
  })

  it("answers a fixed battery on every endpoint, for every kind of caller, within the envelope", async () => {
    const battery: ReadonlyArray<Omit<Case, "endpoint" | "auth">> = [
      { id: () => "..%2F..%2Fme", query: "?limit=-1&limit=1e309", headers: [], body: { _tag: "Raw", bytes: Buffer.from("{"), contentType: "application/json", chunked: false } },
      { id: () => "%zz", query: "?cursor=%FF&x[]=1", headers: [], body: { _tag: "Raw", bytes: invalidUtf8[1]!, contentType: "application/json", chunked: false } },
      { id: () => "%ED%A0%80", query: "", headers: [], body: { _tag: "Json", value: [1, 2], contentType: "text/plain", chunked: false } },
      { id: () => "a".repeat(3000), query: "?limit=abc", headers: [["huddle-organization", "x".repeat(100)]], body: { _tag: "Json", value: { extra: "\ud800" }, contentType: "application/json", chunked: true } },
      { id: realId, query: "?stream=maybe&limit=0", headers: [], body: { _tag: "Json", value: { padding: hugeBeyond }, contentType: "application/json", chunked: false } },
      { id: realId, query: "", headers: [], body: { _tag: "Raw", bytes: Buffer.from(badJson[16]!), contentType: "application/json", chunked: false } },
      { id: realId, query: "?limit=101", headers: [], body: { _tag: "Json", value: { input: hugeWithin, content: "\u0000", name: "' OR 1=1 --", email: "a@b.c\r\nBcc: x", role: "owner", model: "", messages: [] }, contentType: "application/json", chunked: false } }
    ]
    for (const endpoint of endpoints) {
      for (const auth of ["none", "session", "key", "garbage", "operator"] as const) {
        await runBatch(battery.map((c) => ({ ...c, endpoint, auth })))
      }
    }
  }, 240_000)

  it("refuses a lone surrogate, NUL or a C1 control in any one field of an otherwise valid payload, on every endpoint", async () => {
    let spoilt = 0
    for (const endpoint of endpoints) {
      if (Option.isNone(endpoint.payload)) continue
      const schema = endpoint.payload.value
      // The sample with the most free text, so that optional fields are spoilt too.
      const payload = fc.sample(PayloadArbitrary.validPayload(schema), { seed: ciSeed, numRuns: 10 }).reduce((best, next) =>
        PayloadArbitrary.textPathsOf(schema, next).length > PayloadArbitrary.textPathsOf(schema, best).length ? next : best
      )
      const cases = PayloadArbitrary.textPathsOf(schema, payload).flatMap((path) =>
        ["\ud800", "\u0000", "\u0085"].map((character) => ({ path, value: PayloadArbitrary.spoil(payload, path, character) }))
      )
      // The operator's endpoints take the operator's token; the others a user's session and key.
      for (const auth of endpoint.path.startsWith("/v1/operator/") ? ["operator" as const] : ["session", "key"] as const) {
        const before = await snapshot()
        for (const [nth, { path, value }] of cases.entries()) {
          const c: Case = { endpoint, auth, id: realId, query: "", headers: [], body: { _tag: "Json", value, contentType: "application/json", chunked: false } }
          const sent = toSent(c, fixtures, nth)
          const received = await send(port, sent)
          checkAnswer(sent, received)
          spoilt++
          // JSON-RPC's body is a request whose text is a method name: not found, in a JSON-RPC answer.
          if (endpoint.path !== "/v1/rpc") {
            expect(received.status, describeExchange(sent, received)).toBe(400)
            expect(received.text, describeExchange(sent, received)).toContain(`${path.join(".")}: `)
          }
        }
        expect(await snapshot(), `state changed by spoilt text on ${endpoint.name}`).toEqual(before)
        await ensureFixtures()
      }
    }
    expect(spoilt).toBeGreaterThan(100)
  }, 240_000)

  it("answers random hostile batches within the envelope and changes nothing when it refuses them", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(caseArb, { minLength: 1, maxLength: 6 }), runBatch),
      { numRuns, ...(seed === undefined ? {} : { seed }), endOnFailure: true }
    )
    const statuses = [...stats.byStatus.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(" ")
    console.log(
      `fuzz: ${stats.requests} requests in ${stats.batches} batches (${stats.rejectedBatches} checked for no state change), ` +
        `${stats.endpoints.size}/${endpoints.length} endpoints; statuses ${statuses}`
    )
  }, 600_000)
})
