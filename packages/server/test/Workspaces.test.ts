/**
 * Workspaces and their repositories over HTTP: org workspaces (admins create and delete them,
 * members use them, outsiders do not see them), connecting a local directory or a git URL under
 * the operator's rules, indexing in the background (pending → indexing → ready), re-indexing
 * (only what changed), disconnecting. Repositories are temporary directories; the indexer is
 * the testkit's directory indexer.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Accounts, DirectoryIndexer, Orgs, TestServer } from "@huddle/testkit"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

/** Writes `files` (path → content) under `dir`. */
const write = (dir: string, files: Record<string, string | Buffer>) => {
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(dir, file, ".."), { recursive: true })
    writeFileSync(join(dir, file), content)
  }
}

/** Five indexed files (two source, a test, a doc, a config), a binary and a vendored directory. */
const sample = {
  "src/a.ts": "export const a = 1\n",
  "src/b.ts": "export const b = 2\nexport const c = 3\n",
  "test/a.test.ts": "import { a } from \"../src/a\"\n",
  "README.md": "# Sample\n",
  "package.json": "{ \"name\": \"sample\" }\n",
  "logo.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x01]),
  "node_modules/dep/index.js": "module.exports = 1\n"
}

const expectedFiles = { total: 5, by_category: { source: 2, test: 1, docs: 1, config: 1 } }
const expectedSkipped = {
  total: 2,
  by_reason: { binary: 1, vendored: 1, generated: 0, minified: 0, lockfile: 0, too_large: 0, unreadable: 0, outside_root: 0 },
  paths: { binary: ["logo.png"], vendored: ["node_modules"], generated: [], minified: [], lockfile: [], too_large: [], unreadable: [], outside_root: [] }
}

const closedPort = () =>
  new Promise<number>((done, fail) => {
    const probe = net.createServer()
    probe.once("error", fail)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => (typeof address === "object" && address ? done(address.port) : fail(new Error("no port"))))
    })
  })

describe("workspaces and repositories over HTTP", () => {
  let server: TestServer.TestServer
  let root: string
  let outside: string

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-roots-")))
    outside = realpathSync(mkdtempSync(join(tmpdir(), "huddle-outside-")))
    server = await TestServer.start({
      grounding: {
        roots: [root],
        indexer: DirectoryIndexer.layer({ perFile: "40 millis" }),
        jobs: { pollEvery: Duration.millis(200), progressEvery: Duration.zero }
      }
    })
  })
  afterAll(async () => {
    await server.stop()
    rmSync(root, { recursive: true, force: true })
    rmSync(outside, { recursive: true, force: true })
  })

  const repo = (files: Record<string, string | Buffer> = sample) => {
    const dir = mkdtempSync(join(root, "repo-"))
    write(dir, files)
    return dir
  }

  const personal = async (user: Accounts.TestUser) => {
    const list = await server.request("GET", "/v1/workspaces", { token: user.session })
    expect(list.status).toBe(200)
    return list.body.data.find((workspace: { personal: boolean }) => workspace.personal).id as string
  }

  const repository = (token: string, workspaceId: string) => server.request("GET", `/v1/workspaces/${workspaceId}/repository`, { token })
  const connect = (token: string, workspaceId: string, body: unknown) =>
    server.request("PUT", `/v1/workspaces/${workspaceId}/repository`, { token, body })

  /** Polls the status until `done` holds; every status seen, in order (repeats collapsed). */
  const until = async (token: string, workspaceId: string, done: (body: any) => boolean, timeoutMs = 20_000) => {
    const seen: Array<any> = []
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const res = await repository(token, workspaceId)
      expect(res.status, res.text).toBe(200)
      if (seen.at(-1)?.status !== res.body.status || res.body.status === "indexing") seen.push(res.body)
      if (done(res.body)) return { last: res.body, seen }
      if (Date.now() > deadline) throw new Error(`status never came: ${res.text}`)
      await sleep(20)
    }
  }
  const ready = (version: number) => (body: any) => body.status === "ready" && body.index_version >= version

  it("lists the caller's personal workspace, made on first use, with no repository", async () => {
    const user = await Accounts.signupAndLogin(server)
    const list = await server.request("GET", "/v1/workspaces", { token: user.session })
    expect(list.status).toBe(200)
    expect(list.body).toEqual({
      data: [{
        id: expect.stringMatching(/^wsp_/),
        name: "Personal",
        personal: true,
        owner_id: user.id,
        org_id: null,
        created_at: expect.any(String),
        repository: null
      }],
      next_cursor: null
    })
    const again = await server.request("GET", "/v1/workspaces", { token: user.session })
    expect(again.body).toEqual(list.body)
    expect((await repository(user.session, list.body.data[0].id)).body).toEqual({
      error: "NOT_FOUND",
      message: "No repository is connected to this workspace"
    })
  })

  it("lets org admins create and delete org workspaces that every member uses, and hides them from others", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const outsider = await Accounts.signupAndLogin(server, "outsider")

    const created = await server.request("POST", `/v1/orgs/${org.id}/admin/workspaces`, { token: org.admin.session, body: { name: " Backend " } })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wsp_/),
      name: "Backend",
      personal: false,
      owner_id: null,
      org_id: org.id,
      created_at: expect.any(String),
      repository: null
    })
    const id = created.body.id as string

    const taken = await server.request("POST", `/v1/orgs/${org.id}/admin/workspaces`, { token: org.admin.session, body: { name: "BACKEND" } })
    expect(taken.status).toBe(409)
    expect(taken.body.error).toBe("CONFLICT")
    const byMember = await server.request("POST", `/v1/orgs/${org.id}/admin/workspaces`, { token: member.session, body: { name: "Mine" } })
    expect(byMember.status).toBe(403)
    expect((await server.request("POST", `/v1/orgs/${org.id}/admin/workspaces`, { token: outsider.session, body: { name: "X" } })).status)
      .toBe(404)
    expect((await server.request("POST", `/v1/orgs/${org.id}/admin/workspaces`, { token: org.admin.session, body: { name: "  " } })).status)
      .toBe(400)

    const listed = await server.request("GET", "/v1/workspaces", { token: member.session })
    expect(listed.body.data.map((w: { id: string; org_id: string | null }) => [w.id === id, w.org_id])).toEqual(
      expect.arrayContaining([[true, org.id], [false, null]])
    )
    expect(listed.body.data).toHaveLength(2)
    expect((await server.request("GET", `/v1/workspaces/${id}`, { token: member.session })).body).toEqual(created.body)
    expect((await server.request("GET", "/v1/workspaces", { token: outsider.session })).body.data).toHaveLength(1)
    expect((await server.request("GET", `/v1/workspaces/${id}`, { token: outsider.session })).status).toBe(404)

    // Members write workspace memories there and read each other's; a huddle there sees them.
    const memory = await server.request("POST", "/v1/memories", {
      token: member.session,
      body: { scope: "workspace", workspace_id: id, content: "Deploys go through the kestrel pipeline." }
    })
    expect(memory.status).toBe(201)
    const read = await server.request("GET", `/v1/memories?workspace_id=${id}`, { token: org.admin.session })
    expect(read.body.data.map((m: { id: string }) => m.id)).toEqual([memory.body.id])
    expect((await server.request("GET", `/v1/memories/${memory.body.id}`, { token: outsider.session })).status).toBe(404)
    expect((await server.request("GET", `/v1/memories?workspace_id=${id}`, { token: outsider.session })).status).toBe(404)
    const huddle = await server.request("POST", "/v1/huddle", { token: org.admin.session, body: { input: "How do we deploy?", workspace_id: id } })
    expect(huddle.status, huddle.text).toBe(200)
    expect(huddle.body.output).toContain("kestrel")
    expect((await server.request("POST", "/v1/huddle", { token: outsider.session, body: { input: "hi", workspace_id: id } })).status).toBe(404)

    const removed = await server.request("DELETE", `/v1/orgs/${org.id}/admin/workspaces/${id}`, { token: member.session })
    expect(removed.status).toBe(403)
    expect((await server.request("DELETE", `/v1/orgs/${org.id}/admin/workspaces/${id}`, { token: org.admin.session })).status).toBe(204)
    expect((await server.request("GET", `/v1/workspaces/${id}`, { token: member.session })).status).toBe(404)
    expect((await server.request("GET", `/v1/memories/${memory.body.id}`, { token: member.session })).status).toBe(404)
    expect((await server.request("DELETE", `/v1/orgs/${org.id}/admin/workspaces/${id}`, { token: org.admin.session })).status).toBe(404)

    const audit = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?event_type=workspace.created`, { token: org.admin.session })
    expect(audit.body.data).toMatchObject([{ actor_id: org.admin.id, target: id, details: { name: "Backend" } }])
  })

  it("refuses paths outside the roots, through .. or a symlink, relative or missing ones, and bodies that name both or neither", async () => {
    const user = await Accounts.signupAndLogin(server)
    const workspace = await personal(user)
    write(outside, { "secret.txt": "not yours\n" })
    const escape = join(root, `escape-${Date.now()}`)
    symlinkSync(outside, escape)
    const refused = async (body: unknown, status: number, field?: string) => {
      const res = await connect(user.session, workspace, body)
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(status)
      if (field !== undefined) expect(res.body.message).toContain(field)
      return res.body
    }
    const outsideRoots = await refused({ path: outside }, 403)
    expect(outsideRoots).toEqual({ error: "FORBIDDEN", message: "path is outside the directories the operator allows (HUDDLE_REPO_ROOTS)" })
    // The same answer whether the path exists or not: nothing is learnt about the machine.
    expect(await refused({ path: join(outside, "no-such-dir") }, 403)).toEqual(outsideRoots)
    expect(await refused({ path: `${root}/../${outside.split("/").at(-1)}` }, 403)).toEqual(outsideRoots)
    expect(await refused({ path: escape }, 403)).toEqual(outsideRoots)
    expect(await refused({ path: join(escape, "secret.txt") }, 403)).toEqual(outsideRoots)
    await refused({ path: "relative/dir" }, 400, "absolute")
    await refused({ path: join(root, "missing") }, 400, "does not exist")
    await refused({ path: repo(), git_url: "https://example.com/x.git" }, 400, "not both")
    await refused({}, 400, "path or git_url is required")
    // Schemes the operator did not allow, and URLs git would read as options or helpers.
    expect((await refused({ git_url: `file://${repo()}` }, 403)).message).toContain("HUDDLE_REPO_GIT_SCHEMES")
    await refused({ git_url: "ssh://git@example.com/x.git" }, 403)
    await refused({ git_url: "git@example.com:x.git" }, 403)
    await refused({ git_url: "ext::sh -c touch% /tmp/pwned" }, 400, "git_url")
    await refused({ git_url: "-uhttps://example.com/x.git" }, 400, "git_url")
    await refused({ git_url: "https://-oProxyCommand=x/y.git" }, 400, "git_url")
    await refused({ git_url: "/srv/repo.git" }, 400, "git_url")
    // Nothing on the server's own network: loopback, private and link-local hosts, by address or by name.
    for (const url of ["https://127.0.0.1:1/x.git", "https://[::1]/x.git", "https://169.254.169.254/latest/meta-data", "https://10.1.2.3/x.git",
      "https://0x7f000001/x.git", "https://[::ffff:192.168.0.1]/x.git", "https://localhost/x.git", "HTTPS://127.0.0.1/x.git"]) {
      const body = await refused({ git_url: url }, 403, "HUDDLE_REPO_GIT_PRIVATE_HOSTS")
      expect(body.message, url).toContain("must name a public host")
    }
    expect((await repository(user.session, workspace)).status).toBe(404)
  })

  it("lets only the owner or the org's admins connect, members read the status, and others not even see it", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const outsider = await Accounts.signupAndLogin(server, "outsider")
    const shared = (await server.request("POST", `/v1/orgs/${org.id}/admin/workspaces`, { token: org.admin.session, body: { name: "Shared" } })).body.id
    const dir = repo()

    const byMember = await connect(member.session, shared, { path: dir })
    expect(byMember.status).toBe(403)
    expect(byMember.body.error).toBe("FORBIDDEN")
    expect((await connect(outsider.session, shared, { path: dir })).status).toBe(404)
    expect((await connect(outsider.session, await personal(member), { path: dir })).status).toBe(404)

    expect((await connect(org.admin.session, shared, { path: dir })).status).toBe(202)
    const { last } = await until(member.session, shared, ready(1))
    expect(last.files).toEqual(expectedFiles)
    expect((await repository(outsider.session, shared)).status).toBe(404)
    expect((await server.request("POST", `/v1/workspaces/${shared}/repository/reindex`, { token: member.session })).status).toBe(403)
    expect((await server.request("DELETE", `/v1/workspaces/${shared}/repository`, { token: member.session })).status).toBe(403)
    expect((await server.request("DELETE", `/v1/workspaces/${shared}/repository`, { token: outsider.session })).status).toBe(404)
    const listed = await server.request("GET", "/v1/workspaces", { token: member.session })
    expect(listed.body.data.find((w: { id: string }) => w.id === shared).repository).toEqual({
      source: "path",
      path: dir,
      git_url: null,
      status: "ready",
      index_version: 1,
      finished_at: expect.any(String)
    })
    const audit = await server.request("GET", `/v1/orgs/${org.id}/admin/audit-log?event_type=repository.connected`, { token: org.admin.session })
    expect(audit.body.data).toMatchObject([{ actor_id: org.admin.id, target: shared, details: { source: "path", path: dir } }])
  })

  it("indexes a connected directory in the background: pending, indexing with progress, then ready with counts", async () => {
    const user = await Accounts.signupAndLogin(server)
    const workspace = await personal(user)
    const dir = repo()
    const res = await connect(user.session, workspace, { path: dir })
    expect(res.status).toBe(202)
    expect(res.body).toEqual({
      workspace_id: workspace,
      source: "path",
      path: dir,
      git_url: null,
      status: "pending",
      error: null,
      progress: { seen: 0, indexed: 0, skipped: 0 },
      changes: null,
      index_version: 0,
      connected_at: expect.any(String),
      started_at: null,
      finished_at: null,
      files: null,
      skipped: null
    })
    const { last, seen } = await until(user.session, workspace, ready(1))
    expect(seen.map((status) => status.status)).toContain("indexing")
    const during = seen.filter((status) => status.status === "indexing").map((status) => status.progress.seen)
    expect(Math.max(...during)).toBeGreaterThan(0)
    expect(last).toMatchObject({
      status: "ready",
      error: null,
      progress: { seen: 7, indexed: 5, skipped: 2 },
      changes: { added: 5, changed: 0, removed: 0 },
      index_version: 1,
      files: expectedFiles,
      skipped: expectedSkipped
    })
    expect(Date.parse(last.finished_at)).toBeGreaterThanOrEqual(Date.parse(last.started_at))
  })

  it("re-indexes only what changed, replaces a connection, and forgets the index on disconnect", async () => {
    const user = await Accounts.signupAndLogin(server)
    const workspace = await personal(user)
    const dir = repo()
    await connect(user.session, workspace, { path: dir })
    await until(user.session, workspace, ready(1))

    writeFileSync(join(dir, "src/a.ts"), "export const a = 42\n")
    const asked = await server.request("POST", `/v1/workspaces/${workspace}/repository/reindex`, { token: user.session })
    expect(asked.status).toBe(202)
    expect(["pending", "indexing"]).toContain(asked.body.status)
    let { last } = await until(user.session, workspace, ready(2))
    expect(last).toMatchObject({ index_version: 2, changes: { added: 0, changed: 1, removed: 0 }, files: expectedFiles })

    unlinkSync(join(dir, "README.md"))
    write(dir, { "docs/guide.md": "# Guide\n", "src/c.ts": "export {}\n" })
    await server.request("POST", `/v1/workspaces/${workspace}/repository/reindex`, { token: user.session })
    ;({ last } = await until(user.session, workspace, ready(3)))
    expect(last).toMatchObject({
      changes: { added: 2, changed: 0, removed: 1 },
      files: { total: 6, by_category: { source: 3, test: 1, docs: 1, config: 1 } }
    })

    // Connecting again replaces the repository and starts from nothing.
    const other = repo({ "main.py": "print('hi')\n" })
    const replaced = await connect(user.session, workspace, { path: other })
    expect(replaced.body).toMatchObject({ path: other, status: "pending", index_version: 0, files: null })
    ;({ last } = await until(user.session, workspace, ready(1)))
    expect(last).toMatchObject({ path: other, index_version: 1, files: { total: 1, by_category: { source: 1 } } })

    expect((await server.request("DELETE", `/v1/workspaces/${workspace}/repository`, { token: user.session })).status).toBe(204)
    expect((await repository(user.session, workspace)).status).toBe(404)
    expect((await server.request("DELETE", `/v1/workspaces/${workspace}/repository`, { token: user.session })).status).toBe(404)
    expect((await server.request("POST", `/v1/workspaces/${workspace}/repository/reindex`, { token: user.session })).status).toBe(404)
    const reconnected = await connect(user.session, workspace, { path: other })
    expect(reconnected.body).toMatchObject({ index_version: 0, files: null })
  })

})

describe("repositories on a server with no roots and file: URLs allowed", () => {
  let server: TestServer.TestServer
  let origin: string

  const git = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-C", origin, ...args], { stdio: "pipe" })

  beforeAll(async () => {
    origin = mkdtempSync(join(tmpdir(), "huddle-origin-"))
    write(origin, { "src/a.ts": "export const a = 1\n", "README.md": "# Origin\n" })
    execFileSync("git", ["init", "-q", "-b", "main", origin])
    git("add", ".")
    git("commit", "-q", "-m", "first")
    server = await TestServer.start({
      // Private hosts allowed: a clone that fails, from a closed port on this machine.
      grounding: { roots: [], gitSchemes: ["https", "file"], privateHosts: true, indexer: DirectoryIndexer.layer(), jobs: { pollEvery: Duration.millis(200) } }
    })
  })
  afterAll(async () => {
    await server.stop()
    rmSync(origin, { recursive: true, force: true })
  })

  it("refuses every local path, naming the variable that would allow it", async () => {
    const user = await Accounts.signupAndLogin(server)
    const workspace = (await server.request("GET", "/v1/workspaces", { token: user.session })).body.data[0].id
    const res = await server.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { path: origin } })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: "FORBIDDEN",
      message: "Local paths are not accepted: the operator has allowed no directories (set HUDDLE_REPO_ROOTS to allow some)"
    })
    // A file: URL reads the disk too: refused alike, though the scheme is allowed.
    const byUrl = await server.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { git_url: `file://${origin}` } })
    expect(byUrl.status).toBe(403)
    expect(byUrl.body).toEqual(res.body)
    expect((await server.request("GET", `/v1/workspaces/${workspace}/repository`, { token: user.session })).status).toBe(404)
  })

  it("fails cleanly when a git URL cannot be cloned", async () => {
    const user = await Accounts.signupAndLogin(server)
    const workspace = (await server.request("GET", "/v1/workspaces", { token: user.session })).body.data[0].id
    // A scheme in capitals is git's lower-case one.
    const url = `HTTPS://user:s3cret@127.0.0.1:${await closedPort()}/team/repo.git`
    const res = await server.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { git_url: url } })
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ source: "git", path: null, git_url: url.replace("s3cret", "***").replace("HTTPS", "https"), status: "pending" })
    let last = (await server.request("GET", `/v1/workspaces/${workspace}/repository`, { token: user.session })).body
    for (let i = 0; i < 400 && last.status !== "failed"; i++) {
      await sleep(25)
      last = (await server.request("GET", `/v1/workspaces/${workspace}/repository`, { token: user.session })).body
    }
    expect(last.error).toMatch(/^Cloning failed: /)
    expect(last.error).not.toContain("s3cret")
    expect(last.error).not.toContain("transport")
    // Nothing of the server's own directories.
    expect(last.error).not.toContain("Cloning into")
    expect(last.error).not.toContain(tmpdir())
    expect(last).toMatchObject({ index_version: 0, files: null })
  })
})

describe("file: git URLs, confined to HUDDLE_REPO_ROOTS like local paths", () => {
  let server: TestServer.TestServer
  let root: string
  let outside: string
  let origin: string

  /** A git repository at `dir` with `files` committed. */
  const gitRepo = (dir: string, files: Record<string, string>) => {
    mkdirSync(dir, { recursive: true })
    write(dir, files)
    execFileSync("git", ["init", "-q", "-b", "main", dir])
    commit(dir, "first")
    return dir
  }
  const commit = (dir: string, message: string) => {
    const git = (...args: Array<string>) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-C", dir, ...args], { stdio: "pipe" })
    git("add", ".")
    git("commit", "-q", "-m", message)
  }

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-file-roots-")))
    outside = realpathSync(mkdtempSync(join(tmpdir(), "huddle-file-outside-")))
    origin = gitRepo(join(root, "origin"), { "src/a.ts": "export const a = 1\n", "README.md": "# Origin\n" })
    gitRepo(join(outside, "secret"), { "secret.txt": "outside the roots\n" })
    server = await TestServer.start({
      grounding: { roots: [root], gitSchemes: ["https", "file"], indexer: DirectoryIndexer.layer(), jobs: { pollEvery: Duration.millis(200) } }
    })
  })
  afterAll(async () => {
    await server.stop()
    rmSync(root, { recursive: true, force: true })
    rmSync(outside, { recursive: true, force: true })
  })

  const workspaceOf = async () => {
    const user = await Accounts.signupAndLogin(server)
    const workspace = (await server.request("GET", "/v1/workspaces", { token: user.session })).body.data[0].id as string
    return { user, workspace }
  }
  const settled = async (token: string, workspace: string, version: number) => {
    for (let i = 0; i < 400; i++) {
      const res = await server.request("GET", `/v1/workspaces/${workspace}/repository`, { token })
      if (res.body.status === "failed" || (res.body.status === "ready" && res.body.index_version >= version)) return res.body
      await sleep(25)
    }
    throw new Error("the run never finished")
  }

  it("clones an allowed git URL shallow, indexes it, and fetches it anew on re-index", async () => {
    const user = await Accounts.signupAndLogin(server)
    const workspace = (await server.request("GET", "/v1/workspaces", { token: user.session })).body.data[0].id
    const status = () => server.request("GET", `/v1/workspaces/${workspace}/repository`, { token: user.session })
    const waitFor = async (version: number) => {
      for (let i = 0; i < 400; i++) {
        const res = await status()
        if (res.body.status === "failed") throw new Error(res.text)
        if (res.body.status === "ready" && res.body.index_version >= version) return res.body
        await sleep(25)
      }
      throw new Error((await status()).text)
    }
    const res = await server.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { git_url: `file://${origin}` } })
    expect(res.status).toBe(202)
    // The clone's .git is not indexed.
    expect(await waitFor(1)).toMatchObject({ source: "git", files: { total: 2, by_category: { source: 1, docs: 1 } }, skipped: { total: 0 } })

    write(origin, { "src/b.ts": "export const b = 2\n" })
    commit(origin, "second")
    await server.request("POST", `/v1/workspaces/${workspace}/repository/reindex`, { token: user.session })
    expect(await waitFor(2)).toMatchObject({ changes: { added: 1, changed: 0, removed: 0 }, files: { total: 3 } })
  })

  it("refuses a file: URL leading outside the roots, plainly, through .., an escape, a symlink, a .git file or alternates", async () => {
    const { user, workspace } = await workspaceOf()
    const connect = (git_url: string) => server.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { git_url } })
    const outsideRoots = { error: "FORBIDDEN", message: "git_url is outside the directories the operator allows (HUDDLE_REPO_ROOTS)" }
    const secret = join(outside, "secret")
    const name = (dir: string) => dir.split("/").at(-1)!
    // A symlink in the roots to the repository outside.
    symlinkSync(secret, join(root, "link"))
    // A repository in the roots whose .git is a file naming the outside one's.
    mkdirSync(join(root, "gitfile"))
    writeFileSync(join(root, "gitfile", ".git"), `gitdir: ${join(secret, ".git")}\n`)
    // A repository in the roots borrowing the outside one's objects, and one whose packed refs are a link out.
    const borrowing = gitRepo(join(root, "borrowing"), { "x.txt": "x\n" })
    writeFileSync(join(borrowing, ".git", "objects", "info", "alternates"), `${join(secret, ".git", "objects")}\n`)
    const linked = gitRepo(join(root, "linked"), { "x.txt": "x\n" })
    symlinkSync(join(secret, ".git", "config"), join(linked, ".git", "packed-refs"))
    for (
      const url of [
        `file://${secret}`,
        `file://${join(outside, "no-such-repo")}`,
        `file://${root}/../${name(outside)}/secret`,
        `file://${root}/%2e%2e/${name(outside)}/secret`,
        `file://${root}%2F..%2F${name(outside)}%2Fsecret`,
        `FILE://${secret}`,
        `file://localhost${secret}`,
        `file://${root}/link`,
        `file://${root}/gitfile`,
        `file://${borrowing}`,
        `file://${linked}`
      ]
    ) {
      const res = await connect(url)
      expect(res.status, `${url}: ${res.text}`).toBe(403)
      expect(res.body, url).toEqual(outsideRoots)
    }
    // Forms git reads its own way (any host is ignored, brackets unwrapped): refused, not guessed.
    for (const url of [`file://example.com${secret}`, `file://[x]${secret}`, `file://${secret}?x`, `file://${secret}#x`, "file://relative/path"]) {
      const res = await connect(url)
      expect(res.status, `${url}: ${res.text}`).toBe(400)
      expect(res.body, url).toMatchObject({ error: "INVALID_REQUEST", message: expect.stringContaining("git_url") })
    }
    // Inside the roots but no repository: git would go looking for "<dir>.git" next to it.
    mkdirSync(join(root, "plain"))
    expect((await connect(`file://${root}/plain`)).body).toEqual({ error: "INVALID_REQUEST", message: "git_url's path is not a git repository" })
    expect((await server.request("GET", `/v1/workspaces/${workspace}/repository`, { token: user.session })).status).toBe(404)
    expect((await server.request("GET", `/v1/workspaces/${workspace}/repository/files?path=secret.txt`, { token: user.session })).status).toBe(404)
  })

  it("checks a file: URL again before every clone: a repository swapped for a link out fails the run, and the old index stays", async () => {
    const { user, workspace } = await workspaceOf()
    const moving = gitRepo(join(root, "moving"), { "secret.txt": "inside the roots\n" })
    const res = await server.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { git_url: `file://${moving}` } })
    expect(res.status, res.text).toBe(202)
    expect(await settled(user.session, workspace, 1)).toMatchObject({ status: "ready", index_version: 1 })
    rmSync(moving, { recursive: true, force: true })
    symlinkSync(join(outside, "secret"), moving)
    await server.request("POST", `/v1/workspaces/${workspace}/repository/reindex`, { token: user.session })
    const failed = await settled(user.session, workspace, 2)
    expect(failed).toMatchObject({ status: "failed", index_version: 1 })
    expect(failed.error).toContain("HUDDLE_REPO_ROOTS")
    const file = await server.request("GET", `/v1/workspaces/${workspace}/repository/files?path=secret.txt`, { token: user.session })
    expect(file.status, file.text).toBe(200)
    expect(JSON.stringify(file.body)).toContain("inside the roots")
    expect(JSON.stringify(file.body)).not.toContain("outside the roots")
  })
})
