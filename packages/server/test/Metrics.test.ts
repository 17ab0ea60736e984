/**
 * `GET /metrics` (docs/operations.md, Metrics): who may read it, and counts that agree with what
 * clients saw and with the ledger — scraped over HTTP and read with a real Prometheus text parser.
 */
import { readFileSync } from "node:fs"
import { Accounts, FakeOpenAi, Scrape, TestServer, WithFakeUpstream } from "@huddle/testkit"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fakeUpstreamSuite } from "./fakeUpstreamSuite.js"

const metricsToken = "m".repeat(40)
const catalog = [
  WithFakeUpstream.model("fake-standard", "standard", { max_output_tokens: 500 }),
  WithFakeUpstream.model("fake-backup", "standard", { max_output_tokens: 500 })
]
const completions = "POST /v1/chat/completions"

describe("/metrics", () => {
  let fake: FakeOpenAi.FakeOpenAi
  let server: TestServer.TestServer
  fakeUpstreamSuite(catalog, (started) => ({ fake, server } = started), { metricsToken, rateLimits: { read: 3 } })

  const scrape = () => Scrape.scrape(server.url, metricsToken)

  it("answers only a bearer of the metrics token or the operator token, in the exposition format", async () => {
    const none = await fetch(`${server.url}/metrics`)
    expect(none.status).toBe(401)
    expect(await none.json()).toMatchObject({ error: "UNAUTHORIZED" })
    expect((await Scrape.scrape(server.url, "not-the-token")).status).toBe(401)
    const byToken = await scrape()
    expect(byToken.status).toBe(200)
    expect(byToken.contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    expect((await Scrape.scrape(server.url, server.operatorToken!)).status).toBe(200)
    // Every instrument of the catalogue is there from the start, with its type.
    const types = new Map(byToken.families.map((family) => [family.name, family.type]))
    expect(types.get("huddle_http_requests_total")).toBe("COUNTER")
    expect(byToken.text).toContain("# TYPE huddle_http_added_seconds histogram")
    expect(types.get("huddle_reservations_held")).toBe("GAUGE")
    expect(types.get("process_resident_memory_bytes")).toBe("GAUGE")
  })

  it("counts completions, upstream calls, tokens and credits as the clients and the ledger saw them", async () => {
    const user = await Accounts.signupAndLogin(server, "metrics")
    const { key } = await Accounts.createApiKey(server, user)
    const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 })
    const balance = async () => (await server.request("GET", "/v1/me", { token: user.session })).body.credits.balance as number
    const before = await scrape()
    const balanceBefore = await balance()

    fake.reset()
    for (let i = 0; i < 3; i++) fake.enqueue({ answer: "Counted.", usage: { prompt_tokens: 40, completion_tokens: 10 } })
    // The fourth: a 500 then an answer (retried), streamed.
    fake.enqueue(FakeOpenAi.serverError())
    fake.enqueue({ answer: "Counted after a retry.", usage: { prompt_tokens: 40, completion_tokens: 12 } })
    const messages = [{ role: "user" as const, content: "Count me" }]
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: "fake-standard", messages })
    const stream = await client.chat.completions.create({ model: "fake-standard", messages, stream: true })
    for await (const _ of stream) { /* read to the end */ }
    const balanceAfter = await balance()

    // A stream's request is counted when its last byte is sent: wait for it to be recorded.
    let after = await scrape()
    for (let i = 0; i < 50 && Scrape.total(after.families, "huddle_http_requests_total", { route: completions }) - Scrape.total(before.families, "huddle_http_requests_total", { route: completions }) < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      after = await scrape()
    }
    const delta = (name: string, labels: Record<string, string> = {}) =>
      Scrape.total(after.families, name, labels) - Scrape.total(before.families, name, labels)
    const observed = (name: string, labels: Record<string, string> = {}) =>
      Scrape.observations(after.families, name, labels) - Scrape.observations(before.families, name, labels)

    expect(delta("huddle_http_requests_total", { route: completions, status: "200", dialect: "openai" })).toBe(4)
    expect(observed("huddle_http_request_duration_seconds", { route: completions })).toBe(4)
    expect(observed("huddle_http_time_to_first_byte_seconds", { route: completions })).toBe(4)
    expect(observed("huddle_http_added_seconds", { route: completions })).toBe(4)
    expect(delta("huddle_upstream_calls_total", { provider: "fake", model: "fake-standard", outcome: "ok" })).toBe(4)
    expect(delta("huddle_upstream_calls_total", { model: "fake-standard", outcome: "retried" })).toBe(1)
    expect(observed("huddle_upstream_duration_seconds", { model: "fake-standard" })).toBe(5)
    expect(delta("huddle_tokens_total", { model: "fake-standard", direction: "input" })).toBe(160)
    expect(delta("huddle_tokens_total", { model: "fake-standard", direction: "output" })).toBe(42)
    // Credits charged to the personal balance: exactly what the ledger took.
    expect(delta("huddle_credits_charged_total", { tier: "standard", source: "personal" })).toBe(balanceBefore - balanceAfter)
    expect(delta("huddle_reservations_total", { event: "held" })).toBe(4)
    expect(delta("huddle_reservations_total", { event: "settled" })).toBe(4)
    expect(Scrape.total(after.families, "huddle_reservations_held")).toBe(0)
    expect(delta("huddle_cache_lookups_total", { cache: "api_keys" })).toBeGreaterThanOrEqual(4)

    // No series is labelled with anything that names a user, a key or an org.
    for (const family of after.families) {
      for (const sample of family.metrics) {
        for (const value of Object.values(sample.labels ?? {})) {
          expect(value).not.toContain(user.id)
          expect(value).not.toContain(key.slice(0, 10))
        }
      }
    }
  })

  it("times a stream's first byte at its status line, long before its last byte", async () => {
    const user = await Accounts.signupAndLogin(server, "first-byte")
    const { key } = await Accounts.createApiKey(server, user)
    const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 })
    fake.reset()
    // The first piece at once, then 4 more 150 ms apart: the whole answer takes 600 ms or more.
    fake.enqueue({ answer: "one two three four five", chunks: 5, chunkDelayMs: 150, usage: { prompt_tokens: 5, completion_tokens: 5 } })
    const before = await scrape()
    const stream = await client.chat.completions.create({ model: "fake-standard", messages: [{ role: "user", content: "Slowly" }], stream: true })
    for await (const _ of stream) { /* read to the end */ }
    let after = await scrape()
    const sum = (families: typeof before.families, name: string) => Scrape.total(families, `${name}_sum`, { route: completions })
    const observed = () => Scrape.observations(after.families, "huddle_http_request_duration_seconds", { route: completions }) -
      Scrape.observations(before.families, "huddle_http_request_duration_seconds", { route: completions })
    for (let i = 0; i < 50 && observed() < 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      after = await scrape()
    }
    expect(observed()).toBe(1)
    const whole = sum(after.families, "huddle_http_request_duration_seconds") - sum(before.families, "huddle_http_request_duration_seconds")
    const firstByte = sum(after.families, "huddle_http_time_to_first_byte_seconds") - sum(before.families, "huddle_http_time_to_first_byte_seconds")
    expect(whole).toBeGreaterThanOrEqual(0.55)
    expect(firstByte).toBeGreaterThan(0)
    expect(firstByte).toBeLessThan(whole - 0.4)
  })

  it("names routes by their pattern, and counts refusals and replays", async () => {
    const user = await Accounts.signupAndLogin(server, "refused")
    const { key } = await Accounts.createApiKey(server, user)
    const before = await scrape()
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) statuses.push((await server.request("GET", `/v1/orgs/org_${i}x/policies`, { token: key })).status)
    expect(statuses.at(-1)).toBe(429)
    const body = { input: "Once only" }
    const headers = { "idempotency-key": `metrics-${user.id}` }
    const first = await server.request("POST", "/v1/huddle", { token: user.session, body, headers })
    const again = await server.request("POST", "/v1/huddle", { token: user.session, body, headers })
    expect([first.status, again.status]).toEqual([200, 200])
    expect(again.body).toEqual(first.body)
    const after = await scrape()
    const delta = (name: string, labels: Record<string, string> = {}) =>
      Scrape.total(after.families, name, labels) - Scrape.total(before.families, name, labels)
    expect(delta("huddle_rate_limited_total", { limit: "read" })).toBe(statuses.filter((s) => s === 429).length)
    expect(delta("huddle_idempotent_replays_total")).toBe(1)
    // Four ids in the path, one series: the route's pattern.
    expect(delta("huddle_http_requests_total", { route: "GET /v1/orgs/:orgId/policies" })).toBe(4)
    expect(Scrape.samples(after.families, "huddle_http_requests_total").some((s) => s.labels?.route?.includes("org_1x"))).toBe(false)
  })
})

describe.each([
  ["no credential can read it", { operatorToken: null }],
  ["HUDDLE_METRICS=off, whatever credential is set", { metricsToken: metricsToken, metricsOff: true }]
] as const)("/metrics when %s", (_, options) => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start(options)
  })
  afterAll(() => server.stop())

  it("does not exist, even for a bearer of a token", async () => {
    for (const token of [undefined, metricsToken, server.operatorToken ?? undefined]) {
      const response = await server.request("GET", "/metrics", token === undefined ? {} : { token })
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ error: "NOT_FOUND" })
    }
  })
})

describe("the metrics the documentation names", () => {
  const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8")
  const named = (text: string) => new Set([...text.matchAll(/\b((?:huddle|process|nodejs)_[a-z0-9_]+)/g)].map((match) => match[1]!))
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  it("are all served: in docs/operations.md, the sample dashboard and the sample alerts", async () => {
    const { text } = await Scrape.scrape(server.url, server.operatorToken!)
    const served = new Set([...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) =>
      type === "histogram" ? [name!, `${name}_bucket`, `${name}_count`, `${name}_sum`] : [name!]
    ))
    const dashboard = JSON.parse(read("docs/observability/huddle-dashboard.json")) as { panels: Array<{ targets: Array<{ expr: string }> }> }
    const sources = {
      "docs/operations.md": named(read("docs/operations.md")),
      "the dashboard": named(dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)).join("\n")),
      "the alerts": named(read("docs/observability/huddle-alerts.yml"))
    }
    for (const [where, names] of Object.entries(sources)) {
      expect(names.size, where).toBeGreaterThan(3)
      for (const name of names) expect(served.has(name), `${name} (${where})`).toBe(true)
    }
  })
})
