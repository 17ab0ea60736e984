/**
 * Reading an indexed file over HTTP (`GET /v1/workspaces/{id}/repository/files?path=…`), the text
 * a citation links to: put back together from the stored chunks (the real indexer's overlapping
 * 40-line windows), a range of lines at most 2,000 at a time, for the workspace's users only, and
 * nothing for a path the index does not hold.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Accounts, Orgs, TestServer } from "@huddle/testkit"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

const numbered = (count: number, label: string) => Array.from({ length: count }, (_, i) => `// ${label} line ${i + 1}`)

const long = numbered(100, "long")
const huge = numbered(2500, "huge")

const files: Record<string, string | Buffer> = {
  "src/long.ts": `${long.join("\n")}\n`,
  "src/huge.ts": `${huge.join("\n")}\n`,
  "src/windows.ts": "export const a = 1\r\nexport const b = 2\r\n",
  "README.md": "# Sample\n",
  "logo.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x01]),
  "node_modules/dep/index.js": "module.exports = 1\n"
}

describe("an indexed file's text over HTTP", () => {
  let server: TestServer.TestServer
  let root: string
  let dir: string

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-files-")))
    dir = join(root, "repo")
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(join(dir, file, ".."), { recursive: true })
      writeFileSync(join(dir, file), content)
    }
    server = await TestServer.start({ grounding: { roots: [root], jobs: { pollEvery: Duration.millis(200), progressEvery: Duration.zero } } })
  })
  afterAll(async () => {
    await server.stop()
    rmSync(root, { recursive: true, force: true })
  })

  const personal = async (user: Accounts.TestUser) => {
    const list = await server.request("GET", "/v1/workspaces", { token: user.session })
    return list.body.data.find((workspace: { personal: boolean }) => workspace.personal).id as string
  }

  const connectAndWait = async (token: string, workspaceId: string) => {
    const connected = await server.request("PUT", `/v1/workspaces/${workspaceId}/repository`, { token, body: { path: dir } })
    expect(connected.status, connected.text).toBe(202)
    const deadline = Date.now() + 30_000
    for (;;) {
      const status = await server.request("GET", `/v1/workspaces/${workspaceId}/repository`, { token })
      if (status.body.status === "ready") return
      if (status.body.status === "failed" || Date.now() > deadline) throw new Error(`not indexed: ${status.text}`)
      await sleep(50)
    }
  }

  const read = (token: string, workspaceId: string, query: Record<string, string>) =>
    server.request("GET", `/v1/workspaces/${workspaceId}/repository/files?${new URLSearchParams(query)}`, { token })

  let owner: Accounts.TestUser
  let workspace: string
  beforeAll(async () => {
    owner = await Accounts.signupAndLogin(server, "owner")
    workspace = await personal(owner)
    // Nothing connected yet: not found, in the status's words.
    expect((await read(owner.session, workspace, { path: "src/long.ts" })).body).toEqual({
      error: "NOT_FOUND",
      message: "No repository is connected to this workspace"
    })
    await connectAndWait(owner.session, workspace)
  })

  it("answers the whole file, its lines put back together across the overlapping chunks", async () => {
    const res = await read(owner.session, workspace, { path: "src/long.ts" })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({
      workspace_id: workspace,
      path: "src/long.ts",
      category: "source",
      language: "typescript",
      bytes: Buffer.byteLength(files["src/long.ts"]!),
      index_version: 1,
      total_lines: 100,
      start_line: 1,
      end_line: 100,
      text: long.join("\n")
    })
    // Line breaks as an editor numbers them: \r\n is one break, the last one starts no line.
    const crlf = await read(owner.session, workspace, { path: "src/windows.ts" })
    expect(crlf.body).toMatchObject({ total_lines: 2, text: "export const a = 1\nexport const b = 2" })
  })

  it("answers a range of lines, exactly those, wherever the chunks begin and end", async () => {
    for (const [from, to] of [[30, 70], [33, 40], [1, 1], [100, 100], [60, 200]] as const) {
      const res = await read(owner.session, workspace, { path: "src/long.ts", from: String(from), to: String(to) })
      expect(res.status).toBe(200)
      const end = Math.min(to, 100)
      expect(res.body).toMatchObject({ start_line: from, end_line: end, total_lines: 100 })
      expect(res.body.text).toBe(long.slice(from - 1, end).join("\n"))
    }
    // Past the end, or backwards: no lines, and the file's length to go by.
    const past = await read(owner.session, workspace, { path: "src/long.ts", from: "150" })
    expect(past.body).toMatchObject({ start_line: 150, end_line: 100, total_lines: 100, text: "" })
  })

  it("caps an answer at 2,000 lines; the rest is a range away", async () => {
    const first = await read(owner.session, workspace, { path: "src/huge.ts" })
    expect(first.body).toMatchObject({ start_line: 1, end_line: 2000, total_lines: 2500 })
    expect(first.body.text).toBe(huge.slice(0, 2000).join("\n"))
    const asked = await read(owner.session, workspace, { path: "src/huge.ts", from: "1", to: "2500" })
    expect(asked.body).toMatchObject({ start_line: 1, end_line: 2000 })
    const rest = await read(owner.session, workspace, { path: "src/huge.ts", from: "2001" })
    expect(rest.body).toMatchObject({ start_line: 2001, end_line: 2500 })
    expect(rest.body.text).toBe(huge.slice(2000).join("\n"))
  })

  it("has nothing for a path the index does not hold: skipped, vendored, missing, or leaving the root", async () => {
    for (const path of ["logo.png", "node_modules/dep/index.js", "src/none.ts", "../repo/src/long.ts", "/etc/passwd", "src"]) {
      const res = await read(owner.session, workspace, { path })
      expect(res.status, path).toBe(404)
      expect(res.body).toEqual({ error: "NOT_FOUND", message: `No indexed file at this path: ${path}` })
    }
  })

  it("refuses a query without a path or with line numbers that are not lines, naming the parameter", async () => {
    const noPath = await server.request("GET", `/v1/workspaces/${workspace}/repository/files`, { token: owner.session })
    expect(noPath.status).toBe(400)
    for (const [query, word] of [[{ path: "src/long.ts", from: "0" }, "from"], [{ path: "src/long.ts", to: "two" }, "to"]] as const) {
      const res = await read(owner.session, workspace, query)
      expect(res.status).toBe(400)
      expect(res.body.message).toContain(word)
    }
  })

  it("shows an org workspace's files to its members and to nobody else, as the status does", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const outsider = await Accounts.signupAndLogin(server, "outsider")
    const created = await server.request("POST", `/v1/orgs/${org.id}/admin/workspaces`, { token: org.admin.session, body: { name: "Shared" } })
    expect(created.status).toBe(201)
    await connectAndWait(org.admin.session, created.body.id)

    const asMember = await read(member.session, created.body.id, { path: "README.md", from: "1", to: "1" })
    expect(asMember.status).toBe(200)
    expect(asMember.body).toMatchObject({ category: "docs", text: "# Sample" })
    // Someone else's workspace does not exist for them, personal or org.
    for (const id of [created.body.id, workspace]) {
      const res = await read(outsider.session, id, { path: "README.md" })
      expect(res.status).toBe(404)
      expect(res.body.message).not.toContain("README")
      expect((await server.request("GET", `/v1/workspaces/${id}/repository`, { token: outsider.session })).status).toBe(404)
    }
    expect((await read(member.session, workspace, { path: "README.md" })).status).toBe(404)
    expect((await server.request("GET", `/v1/workspaces/${workspace}/repository/files?path=README.md`)).status).toBe(401)
  })
})
