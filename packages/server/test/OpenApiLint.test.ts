/**
 * The served OpenAPI document passes `redocly lint` with its recommended rules (0 errors) and
 * tells the truth where the generator alone would not: OpenAI's error envelope on the OpenAI
 * paths, JSON-RPC error objects on `/v1/rpc`, the `text/event-stream` answers, unique `$id`s.
 */
import { TestServer } from "@huddle/testkit"
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const require = createRequire(import.meta.url)
const redocly = join(dirname(require.resolve("@redocly/cli/package.json")), "bin", "cli.js")

type Json = Record<string, any>

interface Problem {
  readonly ruleId: string
  readonly severity: "error" | "warn"
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer: string }>
}

/** `redocly lint --extends recommended --format json`: its problems (it exits 1 when there are errors). */
const lint = async (document: Json): Promise<ReadonlyArray<Problem>> => {
  const dir = mkdtempSync(join(tmpdir(), "huddle-openapi-"))
  try {
    const file = join(dir, "openapi.json")
    writeFileSync(file, JSON.stringify(document))
    const run = promisify(execFile)(process.execPath, [redocly, "lint", "--extends", "recommended", "--format", "json", file], {
      cwd: dir,
      // No telemetry or update check: the test runs offline.
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      maxBuffer: 16 * 1024 * 1024
    })
    const { stdout } = await run.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }))
    return (JSON.parse(stdout) as { problems: Array<Problem> }).problems
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const operations = (document: Json) =>
  Object.entries(document["paths"] as Json).flatMap(([path, methods]) =>
    Object.entries(methods as Json).map(([method, operation]) => ({ path, method, operation: operation as Json }))
  )

/** Every `$id` in the document, as often as it occurs. */
const ids = (node: unknown): Array<string> =>
  Array.isArray(node)
    ? node.flatMap(ids)
    : typeof node === "object" && node !== null
    ? [
      ...(typeof (node as Json)["$id"] === "string" ? [(node as Json)["$id"] as string] : []),
      ...Object.values(node).flatMap(ids)
    ]
    : []

const errorStatuses = (operation: Json) => Object.keys(operation["responses"]).filter((status) => Number(status) >= 400)

describe("the OpenAPI document", () => {
  let server: TestServer.TestServer
  let document: Json
  beforeAll(async () => {
    server = await TestServer.start()
    document = (await server.request("GET", "/v1/openapi.json")).body
  })
  afterAll(() => server.stop())

  it("has no errors for redocly lint's recommended rules", async () => {
    const errors = (await lint(document)).filter((problem) => problem.severity === "error")
    expect(errors.map((error) => `${error.ruleId}: ${error.message} at ${error.location[0]?.pointer}`)).toEqual([])
  }, 60_000)

  it("gives no two schemas the same $id", () => {
    const all = ids(document)
    expect(all.filter((id, i) => all.indexOf(id) !== i)).toEqual([])
  })

  it("has a summary and a description for every operation and a description for every tag", () => {
    const all = operations(document)
    expect(all.length).toBeGreaterThanOrEqual(48)
    expect(all.filter(({ operation }) => !operation["summary"] || !operation["description"]).map(({ method, path }) => `${method} ${path}`))
      .toEqual([])
    expect(document["tags"].length).toBe(15)
    expect(document["tags"].filter((tag: Json) => !tag["description"]).map((tag: Json) => tag["name"])).toEqual([])
  })

  it("names its servers and its license, Apache-2.0 by its SPDX identifier, as LICENSE and every package.json say", () => {
    expect(document["servers"]).toEqual([{ url: "/", description: expect.any(String) }])
    expect(document["info"]["license"]).toEqual({ name: "Apache-2.0", identifier: "Apache-2.0" })
    const root = new URL("../../../", import.meta.url)
    expect(readFileSync(new URL("LICENSE", root), "utf8")).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004\s/)
    const manifests = ["package.json", ...readdirSync(new URL("packages/", root)).map((name) => `packages/${name}/package.json`)]
    expect(manifests.length).toBeGreaterThan(5)
    for (const manifest of manifests) expect(JSON.parse(readFileSync(new URL(manifest, root), "utf8")).license, manifest).toBe("Apache-2.0")
  })

  it("has no problem, not even a warning, with its info (license included) for redocly lint", async () => {
    const problems = (await lint(document)).filter((problem) => problem.location.some((location) => location.pointer.startsWith("#/info")))
    expect(problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([])
  }, 60_000)

  it("documents OpenAI's envelope for every error of the OpenAI paths, and Huddle's elsewhere", () => {
    const openAi = ref("OpenAiError")
    for (const [path, method] of [["/v1/chat/completions", "post"], ["/v1/models/{model}", "get"], ["/v1/responses", "post"], ["/v1/embeddings", "post"]] as const) {
      const operation = document["paths"][path][method]
      const statuses = errorStatuses(operation)
      expect(statuses, path).toEqual(expect.arrayContaining(["400", "401", "402", "404", "429", "500"]))
      for (const status of statuses) {
        expect(operation["responses"][status]["content"], `${path} ${status}`).toEqual({ "application/json": { schema: openAi } })
      }
    }
    expect(schema(document, "OpenAiError")["properties"]["error"]["required"]).toEqual(["message", "type", "param", "code"])
    expect(document["paths"]["/v1/me"]["get"]["responses"]["401"]["content"]["application/json"]["schema"]).toEqual(ref("UNAUTHORIZED"))
  })

  it("documents JSON-RPC error objects for the statuses a failing call answers with", () => {
    const responses = document["paths"]["/v1/rpc"]["post"]["responses"]
    const rpcError = ref("JsonRpcErrorResponse")
    for (const status of ["402", "403", "502"]) {
      expect(responses[status]["content"]["application/json"]["schema"], status).toEqual(rpcError)
    }
    // Reached before any call runs too, where it is the plain envelope.
    expect(responses["404"]["content"]["application/json"]["schema"]).toEqual({ anyOf: [ref("NOT_FOUND"), rpcError] })
    expect(responses["413"]["content"]["application/json"]["schema"]).toEqual(ref("PAYLOAD_TOO_LARGE"))
  })

  it("lists the text/event-stream answer of each streaming endpoint, with its events", () => {
    const streamed = operations(document).filter(({ operation }) => operation["responses"]["200"]?.["content"]?.["text/event-stream"] !== undefined)
    expect(streamed.map(({ method, path }) => `${method} ${path}`).sort()).toEqual([
      "post /v1/chat/completions",
      "post /v1/huddle",
      "post /v1/huddle/sessions/{session_id}/messages",
      "post /v1/messages",
      "post /v1/responses"
    ])
    const eventsOf = (path: string) => document["paths"][path]["post"]["responses"]["200"]["content"]["text/event-stream"]["schema"]
    expect(eventsOf("/v1/chat/completions")).toEqual(ref("ChatCompletionStreamEvent"))
    expect(eventsOf("/v1/messages")).toEqual(ref("MessageStreamEvent"))
    expect(eventsOf("/v1/responses")).toEqual(ref("ResponseStreamEvent"))
    expect(eventsOf("/v1/huddle")).toEqual(ref("HuddleStreamEvent"))
    const eventNames = (identifier: string) =>
      schema(document, identifier)["anyOf"].map((frame: Json) => frame["properties"]["event"]?.["enum"]?.[0] ?? null)
    expect(eventNames("HuddleStreamEvent")).toEqual(["stage", "token", "metadata", "done", "error"])
    expect(eventNames("ResponseStreamEvent")).toContain("response.output_text.delta")
    expect(eventNames("ResponseStreamEvent")).toContain("response.completed")
    expect(eventNames("ChatCompletionStreamEvent")).toEqual([null, null, null])
    expect(schema(document, "ChatCompletionChunk")["properties"]["object"]["enum"]).toEqual(["chat.completion.chunk"])
  })
})

function ref(identifier: string) {
  return { $ref: `#/components/schemas/${identifier}` }
}

function schema(document: Json, identifier: string): Json {
  return document["components"]["schemas"][identifier]
}
