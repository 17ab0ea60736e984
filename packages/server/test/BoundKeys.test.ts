/**
 * An API key bound to an organization stays in it (decision 0039), over HTTP: it reaches that
 * org's memories, workspaces, repositories, sessions, intents and views, and nothing personal —
 * not the personal memories, the personal workspace or its repository, personal sessions and
 * intents, the personal ledger, audit log or a change of preferences — nor another org. What lies
 * outside its reach answers 404 `NOT_FOUND`, as if it did not exist; asking for the personal
 * context (creating a personal memory, a memory in the personal workspace) answers 404 too, as the
 * `Huddle-Organization: personal` header always did. The same user's web session, alongside,
 * shows that each thing refused exists.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Accounts, type FakeOpenAi, Orgs, type TestServer, WithFakeUpstream } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const noPersonalContext = { error: "NOT_FOUND", message: "This key is bound to an organization: it has no personal context" }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** What only the personal workspace's repository holds: the model must never see it through the key. */
const secretLine = "export const personalSecret = 'the personal repository speaks'"

describe("an API key bound to an organization", () => {
  let root: string
  let repo: string
  let started: WithFakeUpstream.WithFakeUpstream
  let server: TestServer.TestServer
  let fake: FakeOpenAi.FakeOpenAi

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-bound-")))
    repo = join(root, "personal-repo")
    for (const [path, text] of Object.entries({ "src/secret.ts": `${secretLine}\n`, "README.md": "# Secret\n" })) {
      mkdirSync(dirname(join(repo, path)), { recursive: true })
      writeFileSync(join(repo, path), text)
    }
    started = await WithFakeUpstream.start([WithFakeUpstream.model("fake-standard", "standard")], { grounding: { roots: [root] } })
    ;({ fake, server } = started)
  }, 60_000)
  afterAll(async () => {
    await started?.stop()
    rmSync(root, { recursive: true, force: true })
  })

  const get = (token: string, path: string, headers?: Record<string, string>) => server.request("GET", path, { token, ...(headers === undefined ? {} : { headers }) })
  const send = (method: string, token: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    server.request(method, path, { token, ...(body === undefined ? {} : { body }), ...(headers === undefined ? {} : { headers }) })
  const rpc = (token: string, method: string, params: unknown) =>
    server.request("POST", "/v1/rpc", { token, body: { jsonrpc: "2.0", method, params, id: 1 } })
  const ids = (res: TestServer.Response) => (res.body.data as Array<{ id: string }>).map((item) => item.id).sort()
  const expectNotFound = (res: TestServer.Response, what: string) => {
    expect(res.status, `${what}: ${res.text}`).toBe(404)
    expect(res.body.error, what).toBe("NOT_FOUND")
  }

  /** A user who administers two orgs (a workspace in each), with a key bound to the first. */
  const world = async () => {
    const owner = await Accounts.signupAndLogin(server, "owner")
    const alpha = await Orgs.createOrg(server, owner, "Alpha")
    const beta = await Orgs.createOrg(server, owner, "Beta")
    const workspaceOf = async (orgId: string) => {
      const res = await send("POST", owner.session, `/v1/orgs/${orgId}/admin/workspaces`, { name: "Team" })
      expect(res.status, res.text).toBe(201)
      return res.body.id as string
    }
    const listed = await get(owner.session, "/v1/workspaces")
    const personalWorkspace = (listed.body.data as Array<{ id: string; personal: boolean }>).find((w) => w.personal)!.id
    const { key } = await Accounts.createApiKey(server, owner, { org_id: alpha.id })
    return { owner, alpha, beta, key, personalWorkspace, alphaWorkspace: await workspaceOf(alpha.id), betaWorkspace: await workspaceOf(beta.id) }
  }

  const remember = async (token: string, body: Record<string, unknown>) => {
    const res = await send("POST", token, "/v1/memories", body)
    expect(res.status, res.text).toBe(201)
    return res.body.id as string
  }

  it("memories: lists, reads and changes its org's and its org workspaces' only, and creates nothing personal", async () => {
    const w = await world()
    const { session } = w.owner
    const personal = await remember(session, { scope: "personal", content: "I live in Lisbon." })
    const inPersonalWorkspace = await remember(session, { scope: "workspace", content: "My side project uses Deno." })
    const inAlphaWorkspace = await remember(session, { scope: "workspace", workspace_id: w.alphaWorkspace, content: "Alpha's repo uses pnpm." })
    const ofAlpha = await remember(session, { scope: "org", org_id: w.alpha.id, content: "Alpha ships on Tuesdays." })
    const ofBeta = await remember(session, { scope: "org", org_id: w.beta.id, content: "Beta ships on Fridays." })
    const inBetaWorkspace = await remember(session, { scope: "workspace", workspace_id: w.betaWorkspace, content: "Beta's repo uses yarn." })
    const everything = ids(await get(session, "/v1/memories?limit=100"))
    expect(everything).toEqual([personal, inPersonalWorkspace, inAlphaWorkspace, ofAlpha, ofBeta, inBetaWorkspace].sort())

    // Listed: the org's and its workspace's, nothing else, however the listing is narrowed.
    expect(ids(await get(w.key, "/v1/memories?limit=100"))).toEqual([inAlphaWorkspace, ofAlpha].sort())
    expect(ids(await get(w.key, "/v1/memories?scope=personal"))).toEqual([])
    expect(ids(await get(w.key, "/v1/memories?scope=workspace"))).toEqual([inAlphaWorkspace])
    expect(ids(await get(w.key, `/v1/memories?workspace_id=${w.alphaWorkspace}`))).toEqual([inAlphaWorkspace])
    expectNotFound(await get(w.key, `/v1/memories?workspace_id=${w.personalWorkspace}`), "list the personal workspace's")
    expectNotFound(await get(w.key, `/v1/memories?org_id=${w.beta.id}`), "list another org's")

    // Read, changed, deleted: the org's yes; the rest does not exist for the key.
    expect((await get(w.key, `/v1/memories/${ofAlpha}`)).status).toBe(200)
    expect((await get(w.key, `/v1/memories/${inAlphaWorkspace}`)).status).toBe(200)
    expect((await send("PATCH", w.key, `/v1/memories/${inAlphaWorkspace}`, { content: "Alpha's repo uses npm." })).status).toBe(200)
    for (const id of [personal, inPersonalWorkspace, ofBeta, inBetaWorkspace]) {
      expectNotFound(await get(w.key, `/v1/memories/${id}`), `read ${id}`)
      expectNotFound(await send("PATCH", w.key, `/v1/memories/${id}`, { content: "Overwritten through the key." }), `update ${id}`)
      expectNotFound(await send("DELETE", w.key, `/v1/memories/${id}`), `delete ${id}`)
    }

    // Created: in its org and its org's workspaces; nothing personal, nothing in another org.
    expect(await send("POST", w.key, "/v1/memories", { scope: "personal", content: "Through the key." })).toMatchObject({ status: 404, body: noPersonalContext })
    expect(await send("POST", w.key, "/v1/memories", { scope: "workspace", content: "Through the key." })).toMatchObject({ status: 404, body: noPersonalContext })
    expectNotFound(await send("POST", w.key, "/v1/memories", { scope: "workspace", workspace_id: w.personalWorkspace, content: "Through the key." }), "create in the personal workspace")
    expectNotFound(await send("POST", w.key, "/v1/memories", { scope: "org", org_id: w.beta.id, content: "Through the key." }), "create in another org")
    expectNotFound(await send("POST", w.key, "/v1/memories", { scope: "workspace", workspace_id: w.betaWorkspace, content: "Through the key." }), "create in another org's workspace")
    const made = await remember(w.key, { scope: "org", org_id: w.alpha.id, content: "Made through the key." })

    // The session sees everything as it was, and the one the key made.
    const after = await get(session, "/v1/memories?limit=100")
    expect(ids(after)).toEqual([...everything, made].sort())
    expect((after.body.data as Array<{ content: string }>).map((memory) => memory.content)).not.toContain("Overwritten through the key.")
  })

  it("workspaces: lists and opens its org's only, not the personal one nor another org's", async () => {
    const w = await world()
    expect(ids(await get(w.key, "/v1/workspaces"))).toEqual([w.alphaWorkspace])
    expect((await get(w.key, `/v1/workspaces/${w.alphaWorkspace}`)).status).toBe(200)
    expectNotFound(await get(w.key, `/v1/workspaces/${w.personalWorkspace}`), "the personal workspace")
    expectNotFound(await get(w.key, `/v1/workspaces/${w.betaWorkspace}`), "another org's workspace")
    // The session lists all three.
    expect(ids(await get(w.owner.session, "/v1/workspaces"))).toEqual([w.personalWorkspace, w.alphaWorkspace, w.betaWorkspace].sort())
  })

  /** A world whose personal workspace has `repo` connected and indexed (through the session). */
  let indexed: Awaited<ReturnType<typeof world>> | undefined
  const indexedWorld = async () => {
    if (indexed !== undefined) return indexed
    const w = await world()
    const path = `/v1/workspaces/${w.personalWorkspace}/repository`
    const connected = await send("PUT", w.owner.session, path, { path: repo })
    expect(connected.status, connected.text).toBe(202)
    for (let i = 0; ; i++) {
      const status = (await get(w.owner.session, path)).body
      if (status.status === "ready") break
      if (status.status === "failed" || i > 600) throw new Error(`not indexed: ${JSON.stringify(status)}`)
      await sleep(50)
    }
    indexed = w
    return w
  }

  it("repositories: the personal workspace's is neither connected, read, re-indexed nor disconnected; its files stay unread", async () => {
    const w = await indexedWorld()
    const path = `/v1/workspaces/${w.personalWorkspace}/repository`
    expectNotFound(await get(w.key, path), "status")
    expectNotFound(await get(w.key, `${path}/files?path=src/secret.ts`), "a file")
    expectNotFound(await send("PUT", w.key, path, { path: repo }), "connect")
    expectNotFound(await send("POST", w.key, `${path}/reindex`), "re-index")
    expectNotFound(await send("DELETE", w.key, path), "disconnect")
    // Still connected, as the session sees it, and its file readable there.
    expect((await get(w.owner.session, path)).body.status).toBe("ready")
    expect((await get(w.owner.session, `${path}/files?path=src/secret.ts`)).status).toBe(200)
    // The org's workspace: the key of an admin connects there.
    const alpha = await send("PUT", w.key, `/v1/workspaces/${w.alphaWorkspace}/repository`, { path: repo })
    expect(alpha.status, alpha.text).toBe(202)
    expectNotFound(await send("PUT", w.key, `/v1/workspaces/${w.betaWorkspace}/repository`, { path: repo }), "connect another org's")
  })

  it("model input: carries the org's memories, not the personal ones, the personal workspace's or its repository", async () => {
    const w = await indexedWorld()
    const { session } = w.owner
    await remember(session, { scope: "personal", content: "Personal: my doctor is Dr Silva." })
    await remember(session, { scope: "workspace", content: "Personal workspace: the side project is private." })
    await remember(session, { scope: "org", org_id: w.alpha.id, content: "Alpha: answer in British English." })
    const sentUpstream = () => JSON.stringify(fake.requests.at(-1)!.body)

    // Chat completions through the key (it runs in its org).
    fake.reset()
    const chat = await send("POST", w.key, "/v1/chat/completions", { model: "fake-standard", messages: [{ role: "user", content: "Hello" }] })
    expect(chat.status, chat.text).toBe(200)
    expect(sentUpstream()).toContain("Alpha: answer in British English.")
    expect(sentUpstream()).not.toContain("Dr Silva")
    expect(sentUpstream()).not.toContain("side project is private")
    // The session in the same org gets all three: what the key was spared exists.
    await send("POST", session, "/v1/chat/completions", { model: "fake-standard", messages: [{ role: "user", content: "Hello" }] }, { "huddle-organization": w.alpha.id })
    expect(sentUpstream()).toContain("Dr Silva")
    expect(sentUpstream()).toContain("side project is private")

    // A huddle through the key: not grounded in the personal workspace's repository.
    const question = { input: "Where is personalSecret defined in secret.ts?" }
    const byKey = await send("POST", w.key, "/v1/huddle", question)
    expect(byKey.status, byKey.text).toBe(200)
    expect(byKey.body.grounding ?? null).toBeNull()
    expect(sentUpstream()).not.toContain("the personal repository speaks")
    expect(sentUpstream()).not.toContain("Dr Silva")
    const bySession = await send("POST", session, "/v1/huddle", question)
    expect(bySession.body.grounding).toMatchObject({ workspace_id: w.personalWorkspace })
    expect(sentUpstream()).toContain("the personal repository speaks")
  })

  it("huddle sessions: the personal ones are invisible; its org's are its own", async () => {
    const w = await world()
    const personal = await send("POST", w.owner.session, "/v1/huddle", { input: "Just for me" })
    expect(personal.status, personal.text).toBe(200)
    const inOrg = await send("POST", w.key, "/v1/huddle", { input: "For Alpha" })
    expect(inOrg.status, inOrg.text).toBe(200)
    const path = `/v1/huddle/sessions/${personal.body.session_id}`
    expect(ids(await get(w.key, "/v1/huddle/sessions"))).toEqual([inOrg.body.session_id])
    expectNotFound(await get(w.key, path), "read")
    expectNotFound(await send("POST", w.key, `${path}/messages`, { content: "And more" }), "go on")
    expectNotFound(await send("PATCH", w.key, path, { title: "Renamed" }), "rename")
    expectNotFound(await send("DELETE", w.key, path), "delete")
    expect((await get(w.key, `/v1/huddle/sessions/${inOrg.body.session_id}`)).body.org_id).toBe(w.alpha.id)
    const mine = (await get(w.owner.session, path)).body
    expect(mine).toMatchObject({ org_id: null, title: "Just for me" })
    expect(mine.messages).toHaveLength(2)
  })

  it("intents: the personal ones are invisible, and cannot be approved or rejected; its org's are listed", async () => {
    const w = await world()
    // Both held for review, by the user's own preference.
    expect((await send("PUT", w.owner.session, "/v1/me/preferences", { auto_execute: false })).status).toBe(200)
    const personal = await rpc(w.owner.session, "intent.submit", { input: "Plan my move." })
    expect(personal.body.result.status).toBe("awaiting_review")
    const inOrg = await rpc(w.key, "intent.submit", { input: "Plan Alpha's release." })
    expect(inOrg.body.result).toMatchObject({ status: "awaiting_review", org_id: w.alpha.id })
    for (const method of ["intent.get", "intent.approve", "intent.reject"]) {
      expect((await rpc(w.key, method, { id: personal.body.result.id })).body.error?.data.error, method).toBe("NOT_FOUND")
    }
    expect((await rpc(w.key, "intent.list", {})).body.result.data.map((intent: { id: string }) => intent.id)).toEqual([inOrg.body.result.id])
    expect((await rpc(w.key, "intent.list", { org_id: w.beta.id })).body.error?.data.error).toBe("NOT_FOUND")
    expect((await rpc(w.key, "intent.get", { id: inOrg.body.result.id })).body.result.status).toBe("awaiting_review")
    // Untouched: the session finds it still held.
    expect((await rpc(w.owner.session, "intent.get", { id: personal.body.result.id })).body.result.status).toBe("awaiting_review")
  })

  it("/v1/me: the user, the balance its requests are paid from first, that org only; no personal ledger, audit log or preference change", async () => {
    const w = await world()
    const bySession = (await get(w.owner.session, "/v1/me")).body
    expect(bySession.orgs.map((org: { id: string }) => org.id).sort()).toEqual([w.alpha.id, w.beta.id].sort())
    const byKey = await get(w.key, "/v1/me")
    expect(byKey.status).toBe(200)
    expect(byKey.body).toEqual({ ...bySession, orgs: bySession.orgs.filter((org: { id: string }) => org.id === w.alpha.id) })

    expect(await send("PUT", w.key, "/v1/me/preferences", { model_tier: "premium" })).toMatchObject({ status: 404, body: noPersonalContext })
    expect((await get(w.owner.session, "/v1/me")).body.preferences).toEqual(bySession.preferences)
    expect(await get(w.key, "/v1/me/credits/ledger")).toMatchObject({ status: 404, body: noPersonalContext })
    expect(await get(w.key, "/v1/me/audit-log")).toMatchObject({ status: 404, body: noPersonalContext })
    expect((await get(w.owner.session, "/v1/me/credits/ledger")).status).toBe(200)
    expect((await get(w.owner.session, "/v1/me/audit-log")).status).toBe(200)
  })

  it("orgs and spend: its org's views only; another org the user administers does not exist for it", async () => {
    const w = await world()
    expect(ids(await get(w.key, "/v1/orgs"))).toEqual([w.alpha.id])
    const range = `from=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}&to=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}`
    expect((await get(w.key, `/v1/orgs/${w.alpha.id}/credits`)).status).toBe(200)
    expect((await get(w.key, `/v1/orgs/${w.alpha.id}/admin/spend?${range}`)).status).toBe(200)
    for (const path of [`/v1/orgs/${w.beta.id}/credits`, `/v1/orgs/${w.beta.id}/admin/spend?${range}`, `/v1/orgs/${w.beta.id}/admin/members`, `/v1/orgs/${w.beta.id}/admin/audit-log`]) {
      expectNotFound(await get(w.key, path), path)
      expect((await get(w.owner.session, path)).status, path).toBe(200)
    }
  })

  it("asking for another org or the personal context is refused, by body or header, and nothing is charged", async () => {
    const w = await world()
    const balance = async () => (await get(w.owner.session, "/v1/me")).body.credits.balance as number
    const before = await balance()
    const chat = { model: "fake-standard", messages: [{ role: "user", content: "Hello" }] }
    expectNotFound(await send("POST", w.key, "/v1/huddle", { input: "Hi", org_id: w.beta.id }), "huddle, org_id")
    expectNotFound(await send("POST", w.key, "/v1/huddle", { input: "Hi" }, { "huddle-organization": w.beta.id }), "huddle, Huddle-Organization")
    expectNotFound(await send("POST", w.key, "/v1/huddle", { input: "Hi", workspace_id: w.personalWorkspace }), "huddle, the personal workspace")
    expect(await send("POST", w.key, "/v1/huddle", { input: "Hi" }, { "huddle-organization": "personal" })).toMatchObject({ status: 404, body: noPersonalContext })
    // Chat completions answer in OpenAI's error shape.
    expect(await send("POST", w.key, "/v1/chat/completions", chat, { "openai-organization": w.beta.id })).toMatchObject({ status: 404, body: { error: { code: "NOT_FOUND" } } })
    expect(await send("POST", w.key, "/v1/chat/completions", chat, { "huddle-organization": "personal" })).toMatchObject({
      status: 404,
      body: { error: { code: "NOT_FOUND", message: noPersonalContext.message } }
    })
    expect((await rpc(w.key, "intent.submit", { input: "Hi", org_id: w.beta.id })).body.error?.data.error).toBe("NOT_FOUND")
    expect(await balance()).toBe(before)
  })
})
