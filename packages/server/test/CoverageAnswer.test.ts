/**
 * A coverage question on a repository with more untested files than an answer can hold, answered
 * by the offline model over HTTP: the answer lists whole paths, then says how many it left out and
 * where the complete list is, instead of stopping mid-path (decision 0036).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Accounts, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// 450 source files with monorepo-length paths: more than grounding lists to a model (400), far more than 1,024 output tokens hold.
const untested = Array.from({ length: 450 }, (_, i) => `packages/service-${String(i % 7)}/src/features/module${String(i).padStart(3, "0")}/Handler${i}.ts`)
const files: Record<string, string> = {
  "src/tested.ts": "export const tested = 1\n",
  "test/tested.test.ts": "import { tested } from \"../src/tested.js\"\n",
  ...Object.fromEntries(untested.map((path, i) => [path, `export const handler${i} = () => ${i}\n`]))
}

describe("a coverage answer larger than the model's output", () => {
  let root: string
  let server: TestServer.TestServer
  let user: Accounts.TestUser

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-coverage-")))
    const repo = join(root, "many")
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(repo, path)), { recursive: true })
      writeFileSync(join(repo, path), text)
    }
    server = await TestServer.start({ grounding: { roots: [root] } })
    user = await Accounts.signupAndLogin(server)
    const workspace = (await server.request("GET", "/v1/workspaces", { token: user.session })).body.data[0].id as string
    const connected = await server.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { path: repo } })
    expect(connected.status, connected.text).toBe(202)
    for (let i = 0; i < 400; i++) {
      const status = (await server.request("GET", `/v1/workspaces/${workspace}/repository`, { token: user.session })).body
      if (status.status === "ready") break
      if (status.status === "failed") throw new Error(status.error)
      await sleep(50)
    }
  }, 90_000)
  afterAll(async () => {
    await server?.stop()
    rmSync(root, { recursive: true, force: true })
  })

  it("lists whole paths, then how many more and where they all are; the reply carries every one", async () => {
    const res = await server.request("POST", "/v1/huddle", { token: user.session, body: { input: "Which files have no tests?" } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.grounding.coverage.untested).toEqual([...untested].sort())
    const output = res.body.output as string
    const listed = [...output.matchAll(/^- untested: (\S+\.ts)$/gm)].map((match) => match[1]!)
    expect(listed.length).toBeGreaterThan(10)
    // Every listed path is a whole one, of the computed list.
    for (const path of listed) expect(untested).toContain(path)
    const more = /^- untested: … and (\d+) more, not listed here: the complete list is in the reply's grounding\.coverage\.untested \(also on JSON-RPC intent\.get of its intent_id\)$/m.exec(output)
    expect(more, output.slice(-400)).not.toBeNull()
    expect(listed.length + Number(more![1])).toBe(untested.length)
    // Where the answer says the complete list is.
    const intent = await server.request("POST", "/v1/rpc", {
      token: user.session,
      body: { jsonrpc: "2.0", id: 1, method: "intent.get", params: { id: res.body.intent_id } }
    })
    expect(intent.body.result?.grounding?.coverage?.untested, intent.text).toEqual([...untested].sort())
    // The answer ends where it meant to (its excerpts, summed up), not at the output cap mid-path.
    expect(output.trimEnd().split("\n").at(-1)).toMatch(/^- \d+ excerpts, listed in the reply's grounding\.excerpts$/)
  }, 60_000)
})
