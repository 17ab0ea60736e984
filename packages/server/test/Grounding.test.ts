/**
 * Answers grounded in a connected repository, over HTTP against a model upstream: the model gets
 * the excerpts, the answer's citations are verified before they reach the client (streamed or
 * not), and a coverage question gets the complete computed list.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Accounts, type FakeOpenAi, SseClient, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answerCouncil, roundOfRequest } from "./councilUpstream.js"

const files: Record<string, string> = {
  "src/math.ts": "export const add = (a: number, b: number) =>\n  a + b\n\nexport const multiply = (a: number, b: number) =>\n  a * b\n",
  "src/strings.ts": "export const shout = (text: string) =>\n  text.toUpperCase()\n",
  "test/math.test.ts": "import { add } from \"../src/math\"\n\nif (add(1, 2) !== 3) throw new Error(\"add\")\n",
  "README.md": "# Calculator\n"
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("answers grounded in a connected repository", () => {
  let root: string
  let started: WithFakeUpstream.WithFakeUpstream
  let server: TestServer.TestServer
  let fake: FakeOpenAi.FakeOpenAi
  let user: Accounts.TestUser

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-grounding-")))
    const repo = join(root, "calculator")
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(repo, path)), { recursive: true })
      writeFileSync(join(repo, path), text)
    }
    started = await WithFakeUpstream.start([WithFakeUpstream.model("fake-standard", "standard")], { grounding: { roots: [root] } })
    ;({ fake, server } = started)
    user = await Accounts.signupAndLogin(server)
    const workspace = (await server.request("GET", "/v1/workspaces", { token: user.session })).body.data[0].id as string
    const connected = await server.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { path: repo } })
    expect(connected.status, connected.text).toBe(202)
    for (let i = 0; i < 200; i++) {
      const status = (await server.request("GET", `/v1/workspaces/${workspace}/repository`, { token: user.session })).body
      if (status.status === "ready") break
      if (status.status === "failed") throw new Error(status.error)
      await sleep(50)
    }
  }, 60_000)
  afterAll(async () => {
    await started?.stop()
    rmSync(root, { recursive: true, force: true })
  })

  const answer = "Addition is `src/math.ts:1-2`. See also src/missing.ts:4 and src/math.ts:200, and multiply at src/math.ts:4-5."

  it("gives the model the excerpts and passes on only verified citations, as references", async () => {
    fake.reset()
    fake.enqueue({ answer })
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Where is add defined in math?" } })
    expect(res.status, res.text).toBe(200)
    // The model saw the code, with its path and lines.
    const sent = JSON.stringify(fake.requests.at(-1)!.body)
    expect(sent).toContain("src/math.ts:1-")
    expect(sent).toContain("a + b")
    // A missing file and an out-of-range line never reach the client.
    expect(res.body.output).not.toContain("missing.ts")
    expect(res.body.output).not.toContain(":200")
    expect(res.body.output).toContain("src/math.ts:1-2")
    // Grounded in the caller's personal workspace (none was named): where the references' files are read.
    const personal = (await server.request("GET", "/v1/workspaces", { token: user.session })).body.data[0].id as string
    expect(res.body.grounding).toMatchObject({ workspace_id: personal, mode: "focused", files_indexed: 4 })
    const [first] = res.body.references as Array<{ path: string; start_line: number; end_line: number }>
    const file = await server.request("GET", `/v1/workspaces/${personal}/repository/files?path=${encodeURIComponent(first!.path)}`, { token: user.session })
    expect(file.status, file.text).toBe(200)
    expect(res.body.grounding.citations.checked).toBe(4)
    expect(res.body.grounding.citations.removed + res.body.grounding.citations.corrected).toBeGreaterThanOrEqual(2)
    // Every reference exists and its lines hold code.
    const lines = files["src/math.ts"]!.split("\n").length - 1
    expect(res.body.references.length).toBeGreaterThan(0)
    for (const reference of res.body.references) {
      expect(Object.keys(files)).toContain(reference.path)
      expect(reference.start_line).toBeGreaterThanOrEqual(1)
      expect(reference.end_line).toBeLessThanOrEqual(lines)
      // Each says why its passage was chosen.
      expect(reference.why).toMatch(/^retrieved: /)
    }
    // Kept with the session's message.
    const session = (await server.request("GET", `/v1/huddle/sessions/${res.body.session_id}`, { token: user.session })).body
    expect(session.messages.at(-1).references).toEqual(res.body.references)
  })

  it("never streams an unverified citation, however the answer is split", async () => {
    fake.reset()
    fake.enqueue({ answer, chunks: 23 })
    const stream = await SseClient.post(`${server.url}/v1/huddle?stream=true`, {
      token: user.session,
      body: { input: "Where is add defined in math?" }
    })
    const retrieval = stream.events.find((e) => e.event === "stage" && e.data.stage === "retrieval")
    expect(retrieval?.data).toMatchObject({ mode: "focused", files_indexed: 4 })
    expect(retrieval?.data.files).toContain("src/math.ts")
    const text = stream.events.filter((e) => e.event === "token").map((e) => e.data.text).join("")
    expect(text).not.toContain("missing.ts")
    expect(text).not.toContain(":200")
    expect(text).toBe(stream.events.find((e) => e.event === "metadata")!.data.output)
  })

  it("answers a coverage question with the complete computed list of untested source files", async () => {
    fake.reset()
    fake.enqueue({ answer: "src/strings.ts has no tests." })
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Which modules have no tests?" } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.grounding).toMatchObject({
      mode: "deep",
      coverage: { source_files: 2, tested: 1, untested: ["src/strings.ts"] }
    })
    expect(res.body.grounding.files_analysed).toBe(3)
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain("untested: src/strings.ts")
  })

  it("grounds every council participant in the same excerpts, and JSON-RPC submissions too", async () => {
    fake.reset()
    answerCouncil(fake)
    const multi = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Where is add defined in math?", mode: "multi" } })
    expect(multi.status, multi.text).toBe(200)
    expect(multi.body.mode).toBe("multi")
    const rounds = fake.requests.filter((request) => roundOfRequest(request) !== undefined)
    expect(rounds.length).toBeGreaterThanOrEqual(10)
    for (const request of rounds) expect(JSON.stringify(request.body)).toContain("a + b")
    expect(multi.body.grounding).toMatchObject({ mode: "focused", files_indexed: 4 })

    fake.reset()
    fake.enqueue({ answer })
    const rpc = await server.request("POST", "/v1/rpc", {
      token: user.session,
      body: { jsonrpc: "2.0", id: 1, method: "intent.submit", params: { input: "Where is add defined in math?" } }
    })
    expect(rpc.body.result.grounding.citations.checked).toBe(4)
    expect(rpc.body.result.output).not.toContain("missing.ts")
  })
})
