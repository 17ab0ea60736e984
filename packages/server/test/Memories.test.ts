import { Accounts, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

describe("memories over HTTP", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  const remember = async (token: string, body: Record<string, unknown>) => {
    const res = await server.request("POST", "/v1/memories", { token, body })
    if (res.status !== 201) throw new Error(`create memory: expected 201, got ${res.status}: ${res.text}`)
    return res.body as { id: string; workspace_id: string | null; content: string }
  }

  const createOrg = async (admin: Accounts.TestUser, name = "Acme") => {
    const res = await server.request("POST", "/v1/orgs", { token: admin.session, body: { name } })
    expect(res.status).toBe(201)
    return res.body.id as string
  }

  /** Invites the user and logs them in again, which activates the invitation. */
  const join = async (orgId: string, admin: Accounts.TestUser, user: Accounts.TestUser) => {
    const invite = await server.request("POST", `/v1/orgs/${orgId}/admin/members/invite`, {
      token: admin.session,
      body: { email: user.email }
    })
    expect(invite.status).toBe(201)
    const login = await server.request("POST", "/v1/auth/login", { body: { email: user.email, password: user.password } })
    expect(login.status).toBe(200)
  }

  const ids = (res: TestServer.Response) => res.body.data.map((memory: { id: string }) => memory.id)

  it("creates, reads, updates, lists and deletes a personal memory", async () => {
    const user = await Accounts.signupAndLogin(server)
    const created = await server.request("POST", "/v1/memories", {
      token: user.session,
      body: { content: "  I prefer TypeScript.  ", scope: "personal" }
    })
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: expect.stringMatching(/^mem_/),
      scope: "personal",
      content: "I prefer TypeScript.",
      org_id: null,
      workspace_id: null,
      author_id: user.id,
      created_at: expect.any(String),
      updated_at: created.body.created_at
    })
    const id = created.body.id

    const got = await server.request("GET", `/v1/memories/${id}`, { token: user.session })
    expect(got.status).toBe(200)
    expect(got.body).toEqual(created.body)

    const patched = await server.request("PATCH", `/v1/memories/${id}`, { token: user.session, body: { content: "I prefer Rust." } })
    expect(patched.status).toBe(200)
    expect(patched.body).toEqual({ ...created.body, content: "I prefer Rust.", updated_at: expect.any(String) })
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.created_at))

    const list = await server.request("GET", "/v1/memories", { token: user.session })
    expect(list.status).toBe(200)
    expect(list.body).toEqual({ data: [patched.body], next_cursor: null })

    const deleted = await server.request("DELETE", `/v1/memories/${id}`, { token: user.session })
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    const gone = await server.request("GET", `/v1/memories/${id}`, { token: user.session })
    expect(gone.status).toBe(404)
    expect(gone.body).toEqual({ error: "NOT_FOUND", message: "Memory not found" })
    expect((await server.request("DELETE", `/v1/memories/${id}`, { token: user.session })).status).toBe(404)
    expect((await server.request("PATCH", `/v1/memories/${id}`, { token: user.session, body: { content: "x" } })).status).toBe(404)
    expect((await server.request("GET", "/v1/memories", { token: user.session })).body.data).toEqual([])
  })

  it("works with an API key as with a web session, and refuses anonymous callers", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    const memory = await remember(key, { content: "from a key", scope: "personal" })
    expect((await server.request("GET", `/v1/memories/${memory.id}`, { token: user.session })).status).toBe(200)
    for (const [method, path] of [["GET", "/v1/memories"], ["GET", `/v1/memories/${memory.id}`], ["DELETE", `/v1/memories/${memory.id}`]] as const) {
      const res = await server.request(method, path)
      expect(res.status, `${method} ${path}`).toBe(401)
      expect(res.body.error).toBe("UNAUTHORIZED")
    }
    const create = await server.request("POST", "/v1/memories", { body: { content: "x", scope: "personal" } })
    expect(create.status).toBe(401)
  })

  it("keeps personal memories to their author: anyone else gets 404", async () => {
    const author = await Accounts.signupAndLogin(server, "author")
    const other = await Accounts.signupAndLogin(server, "other")
    const memory = await remember(author.session, { content: "my secret", scope: "personal" })
    for (const [method, body] of [["GET", undefined], ["PATCH", { content: "hijacked" }], ["DELETE", undefined]] as const) {
      const res = await server.request(method, `/v1/memories/${memory.id}`, { token: other.session, ...(body ? { body } : {}) })
      expect(res.status, method).toBe(404)
      expect(res.body).toEqual({ error: "NOT_FOUND", message: "Memory not found" })
    }
    expect((await server.request("GET", "/v1/memories", { token: other.session })).body.data).toEqual([])
    const still = await server.request("GET", `/v1/memories/${memory.id}`, { token: author.session })
    expect(still.body.content).toBe("my secret")
  })

  it("puts workspace memories in the caller's personal workspace, made once, when no workspace is named", async () => {
    const user = await Accounts.signupAndLogin(server)
    const first = await remember(user.session, { content: "repo uses pnpm", scope: "workspace" })
    expect(first.workspace_id).toMatch(/^wsp_/)
    const second = await remember(user.session, { content: "tests live in test/", scope: "workspace", workspace_id: null })
    expect(second.workspace_id).toBe(first.workspace_id)
    const named = await remember(user.session, { content: "named", scope: "workspace", workspace_id: first.workspace_id })
    expect(named.workspace_id).toBe(first.workspace_id)

    const other = await Accounts.signupAndLogin(server, "other")
    const theirs = await remember(other.session, { content: "theirs", scope: "workspace" })
    expect(theirs.workspace_id).not.toBe(first.workspace_id)

    const byWorkspace = await server.request("GET", `/v1/memories?workspace_id=${first.workspace_id}`, { token: user.session })
    expect(byWorkspace.status).toBe(200)
    expect(ids(byWorkspace)).toEqual([named.id, second.id, first.id])
    expect(byWorkspace.body.data[0]).toMatchObject({ scope: "workspace", org_id: null, author_id: user.id })
  })

  it("keeps workspace memories to the workspace owner", async () => {
    const owner = await Accounts.signupAndLogin(server, "owner")
    const other = await Accounts.signupAndLogin(server, "other")
    const memory = await remember(owner.session, { content: "deploys on Fridays are banned", scope: "workspace" })

    expect((await server.request("GET", `/v1/memories/${memory.id}`, { token: other.session })).status).toBe(404)
    expect((await server.request("PATCH", `/v1/memories/${memory.id}`, { token: other.session, body: { content: "x" } })).status)
      .toBe(404)
    expect((await server.request("DELETE", `/v1/memories/${memory.id}`, { token: other.session })).status).toBe(404)

    // Neither writing into nor listing another's workspace: it does not exist for them.
    const write = await server.request("POST", "/v1/memories", {
      token: other.session,
      body: { content: "intrusion", scope: "workspace", workspace_id: memory.workspace_id }
    })
    expect(write.status).toBe(404)
    expect(write.body).toEqual({ error: "NOT_FOUND", message: "Workspace not found" })
    const list = await server.request("GET", `/v1/memories?workspace_id=${memory.workspace_id}`, { token: other.session })
    expect(list.status).toBe(404)
    expect(list.body.error).toBe("NOT_FOUND")
    const unknown = await server.request("POST", "/v1/memories", {
      token: owner.session,
      body: { content: "x", scope: "workspace", workspace_id: "wsp_nope" }
    })
    expect(unknown.status).toBe(404)

    const updated = await server.request("PATCH", `/v1/memories/${memory.id}`, { token: owner.session, body: { content: "deploy any day" } })
    expect(updated.status).toBe(200)
    expect(updated.body.workspace_id).toBe(memory.workspace_id)
    expect((await server.request("DELETE", `/v1/memories/${memory.id}`, { token: owner.session })).status).toBe(204)
  })

  it("lets every member read org memories and only admins write them; outsiders get 404", async () => {
    const admin = await Accounts.signupAndLogin(server, "admin")
    const member = await Accounts.signupAndLogin(server, "member")
    const outsider = await Accounts.signupAndLogin(server, "outsider")
    const orgId = await createOrg(admin)
    await join(orgId, admin, member)

    const created = await server.request("POST", "/v1/memories", {
      token: admin.session,
      body: { content: "We ship on Tuesdays.", scope: "org", org_id: orgId }
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ scope: "org", org_id: orgId, workspace_id: null, author_id: admin.id })
    const id = created.body.id

    // Members read it, directly and in their lists.
    const read = await server.request("GET", `/v1/memories/${id}`, { token: member.session })
    expect(read.status).toBe(200)
    expect(read.body).toEqual(created.body)
    expect(ids(await server.request("GET", "/v1/memories", { token: member.session }))).toEqual([id])
    expect(ids(await server.request("GET", `/v1/memories?org_id=${orgId}`, { token: member.session }))).toEqual([id])
    expect(ids(await server.request("GET", "/v1/memories?scope=org", { token: member.session }))).toEqual([id])
    expect(ids(await server.request("GET", "/v1/memories?scope=personal", { token: member.session }))).toEqual([])

    // Members do not write them.
    const attempts = [
      await server.request("POST", "/v1/memories", { token: member.session, body: { content: "mine", scope: "org", org_id: orgId } }),
      await server.request("PATCH", `/v1/memories/${id}`, { token: member.session, body: { content: "changed" } }),
      await server.request("DELETE", `/v1/memories/${id}`, { token: member.session })
    ]
    for (const res of attempts) {
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ error: "FORBIDDEN", message: expect.any(String) })
    }
    expect((await server.request("GET", `/v1/memories/${id}`, { token: member.session })).body.content).toBe("We ship on Tuesdays.")

    // Outsiders do not even learn it exists.
    for (const res of [
      await server.request("GET", `/v1/memories/${id}`, { token: outsider.session }),
      await server.request("PATCH", `/v1/memories/${id}`, { token: outsider.session, body: { content: "changed" } }),
      await server.request("DELETE", `/v1/memories/${id}`, { token: outsider.session }),
      await server.request("POST", "/v1/memories", { token: outsider.session, body: { content: "x", scope: "org", org_id: orgId } }),
      await server.request("GET", `/v1/memories?org_id=${orgId}`, { token: outsider.session })
    ]) {
      expect(res.status).toBe(404)
      expect(res.body.error).toBe("NOT_FOUND")
    }
    expect((await server.request("GET", "/v1/memories", { token: outsider.session })).body.data).toEqual([])

    // Admins update and delete them.
    const patched = await server.request("PATCH", `/v1/memories/${id}`, { token: admin.session, body: { content: "We ship on Wednesdays." } })
    expect(patched.status).toBe(200)
    expect((await server.request("GET", `/v1/memories/${id}`, { token: member.session })).body.content).toBe("We ship on Wednesdays.")
    expect((await server.request("DELETE", `/v1/memories/${id}`, { token: admin.session })).status).toBe(204)
    expect((await server.request("GET", `/v1/memories/${id}`, { token: member.session })).status).toBe(404)
  })

  it("hides org memories from an API key bound to another organization", async () => {
    const admin = await Accounts.signupAndLogin(server, "admin")
    const orgA = await createOrg(admin, "Alpha")
    const orgB = await createOrg(admin, "Beta")
    const memory = await remember(admin.session, { content: "alpha only", scope: "org", org_id: orgA })
    const personal = await remember(admin.session, { content: "mine", scope: "personal" })
    const boundToB = await Accounts.createApiKey(server, admin, { org_id: orgB })
    const boundToA = await Accounts.createApiKey(server, admin, { org_id: orgA })

    expect((await server.request("GET", `/v1/memories/${memory.id}`, { token: boundToB.key })).status).toBe(404)
    expect((await server.request("GET", `/v1/memories?org_id=${orgA}`, { token: boundToB.key })).status).toBe(404)
    // Nor the personal ones: a key bound to an org reaches that org's memories only (decision 0039).
    expect(ids(await server.request("GET", "/v1/memories", { token: boundToB.key }))).toEqual([])
    expect((await server.request("GET", `/v1/memories/${memory.id}`, { token: boundToA.key })).status).toBe(200)
    expect(ids(await server.request("GET", "/v1/memories", { token: boundToA.key }))).toEqual([memory.id])
    expect(ids(await server.request("GET", "/v1/memories", { token: admin.session }))).toEqual([personal.id, memory.id])
  })

  it("deleting an organization deletes its memories", async () => {
    const admin = await Accounts.signupAndLogin(server, "admin")
    const orgId = await createOrg(admin, "Doomed")
    const orgMemory = await remember(admin.session, { content: "org knowledge", scope: "org", org_id: orgId })
    const personal = await remember(admin.session, { content: "personal knowledge", scope: "personal" })
    expect((await server.request("GET", `/v1/memories/${orgMemory.id}`, { token: admin.session })).status).toBe(200)

    expect((await server.request("DELETE", `/v1/orgs/${orgId}`, { token: admin.session })).status).toBe(204)
    const gone = await server.request("GET", `/v1/memories/${orgMemory.id}`, { token: admin.session })
    expect(gone.status).toBe(404)
    expect(gone.body.error).toBe("NOT_FOUND")
    expect(ids(await server.request("GET", "/v1/memories", { token: admin.session }))).toEqual([personal.id])
  })

  it("refuses invalid content and scope combinations with 400 INVALID_REQUEST", async () => {
    const admin = await Accounts.signupAndLogin(server)
    const orgId = await createOrg(admin)
    const workspace = await remember(admin.session, { content: "anchor", scope: "workspace" })
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ content: "", scope: "personal" }, "content must not be empty"],
      [{ content: " \n\t ", scope: "personal" }, "content must not be empty"],
      [{ content: "x".repeat(8001), scope: "personal" }, "content must be at most 8000 characters"],
      [{ content: "a\u0000b", scope: "personal" }, "content: must not contain control characters other than tab, newline and carriage return (found U+0000)"],
      [{ content: "lone \ud800 surrogate", scope: "personal" }, "content: must be well-formed Unicode: it holds a lone surrogate"],
      [{ content: 42, scope: "personal" }, "content"],
      [{ scope: "personal" }, "content"],
      [{ content: "x" }, "scope"],
      [{ content: "x", scope: "team" }, "scope"],
      [{ content: "x", scope: "org" }, "An org memory needs org_id"],
      [{ content: "x", scope: "org", org_id: null }, "An org memory needs org_id"],
      [{ content: "x", scope: "org", org_id: orgId, workspace_id: workspace.workspace_id }, "An org memory takes no workspace_id"],
      [{ content: "x", scope: "personal", org_id: orgId }, "A personal memory takes neither org_id nor workspace_id"],
      [{ content: "x", scope: "personal", workspace_id: workspace.workspace_id }, "A personal memory takes neither"],
      [{ content: "x", scope: "workspace", org_id: orgId }, "A workspace memory takes no org_id"],
      // The wording for a body of the wrong kind is the edge's (see Edge.test.ts).
      [JSON.stringify("not an object"), ""],
      ["{not json", "not valid JSON"]
    ]
    for (const [body, message] of cases) {
      const res = await server.request("POST", "/v1/memories", { token: admin.session, body })
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(res.body.error).toBe("INVALID_REQUEST")
      expect(res.body.message).toContain(message)
    }
    expect((await server.request("POST", "/v1/memories", { token: admin.session, body: { content: "x".repeat(8000), scope: "personal" } })).status)
      .toBe(201)

    const memory = await remember(admin.session, { content: "keep me", scope: "personal" })
    for (const body of [{ content: "   " }, {}, { content: "x".repeat(8001) }]) {
      const res = await server.request("PATCH", `/v1/memories/${memory.id}`, { token: admin.session, body })
      expect(res.status).toBe(400)
      expect(res.body.error).toBe("INVALID_REQUEST")
    }
    expect((await server.request("GET", `/v1/memories/${memory.id}`, { token: admin.session })).body.content).toBe("keep me")

    for (const query of ["scope=team", `org_id=${orgId}&scope=personal`, `workspace_id=${workspace.workspace_id}&scope=org`, `org_id=${orgId}&workspace_id=${workspace.workspace_id}`, "limit=0", "limit=101"]) {
      const res = await server.request("GET", `/v1/memories?${query}`, { token: admin.session })
      expect(res.status, query).toBe(400)
      expect(res.body.error).toBe("INVALID_REQUEST")
    }
  })

  it("pages through memories newest first with limit and cursor, within a filter", async () => {
    const user = await Accounts.signupAndLogin(server)
    const personal: Array<string> = []
    const all: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const memory = await remember(user.session, { content: `note ${i}`, scope: "personal" })
      personal.push(memory.id)
      all.push(memory.id)
      if (i % 2 === 0) all.push((await remember(user.session, { content: `ws ${i}`, scope: "workspace" })).id)
    }

    const walk = async (filter: string) => {
      const seen: Array<string> = []
      let cursor: string | null = null
      do {
        const query: string = `?limit=2${filter}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
        const page = await server.request("GET", `/v1/memories${query}`, { token: user.session })
        expect(page.status).toBe(200)
        expect(page.body.data.length).toBeLessThanOrEqual(2)
        seen.push(...ids(page))
        cursor = page.body.next_cursor
      } while (cursor !== null)
      return seen
    }
    expect(await walk("")).toEqual([...all].reverse())
    expect(await walk("&scope=personal")).toEqual([...personal].reverse())
    expect(await walk("&scope=workspace")).toEqual(all.filter((id) => !personal.includes(id)).reverse())
  })
})
