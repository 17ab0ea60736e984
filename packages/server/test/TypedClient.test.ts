/**
 * The server's happy paths through the client a console or an integrator derives from the
 * contract (`HttpApiClient.make(Api, { baseUrl })`), against the real server in-process: what the
 * server answers decodes with the contract's own schemas, and a refusal arrives as the typed error
 * the contract declares. Sign-up and sign-in, the profile, API keys, memories, organizations and
 * invitations, a workspace's repository, a huddle turn and the operator's minting.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Api, CreateApiKeyRequest, CreateMemoryRequest, InviteRequest, LoginRequest, SignupRequest } from "@huddle/server/contract"
import { Accounts, DirectoryIndexer, TestServer } from "@huddle/testkit"
import { Duration, Effect, Either, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clientOf = (baseUrl: string, token?: string) =>
  HttpApiClient.make(Api, {
    baseUrl,
    ...(token === undefined ? {} : { transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token)) })
  })

type Client = Effect.Effect.Success<ReturnType<typeof clientOf>>

/** A request's payload as a client builds it: what a person typed, decoded by the contract's schema. */
const signupPayload = Schema.decodeSync(SignupRequest)
const loginPayload = Schema.decodeSync(LoginRequest)
const newKey = Schema.decodeSync(CreateApiKeyRequest)
const newMemory = Schema.decodeSync(CreateMemoryRequest)
const invitation = Schema.decodeSync(InviteRequest)
const firstPage = { limit: 20 }

describe("the typed client of the contract", () => {
  let server: TestServer.TestServer
  let root: string

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-client-roots-")))
    server = await TestServer.start({
      grounding: {
        roots: [root],
        indexer: DirectoryIndexer.layer({ perFile: "1 millis" }),
        jobs: { pollEvery: Duration.millis(100), progressEvery: Duration.zero }
      }
    })
  })
  afterAll(async () => {
    await server.stop()
    rmSync(root, { recursive: true, force: true })
  })

  /** Runs `f` with a client calling as `token` (a session, an API key, the operator token) or as nobody. */
  const as = <A, E>(token: string | undefined, f: (client: Client) => Effect.Effect<A, E>): Promise<A> =>
    Effect.runPromise(Effect.flatMap(clientOf(server.url, token), f).pipe(Effect.provide(FetchHttpClient.layer)))

  /** Signs up and in through the client; the session token. */
  const newUser = async (label: string) => {
    const email = Accounts.uniqueEmail(label)
    const password = "a-long-enough-password"
    const signup = await as(undefined, (client) => client.auth.signup({ payload: signupPayload({ email, password }) }))
    const login = await as(undefined, (client) => client.auth.login({ payload: loginPayload({ email, password }) }))
    return { id: signup.user.id, email, password, session: login.token }
  }

  it("signs up and in, and shows the profile with the starter credits", async () => {
    const email = Accounts.uniqueEmail("client")
    const signup = await as(undefined, (client) => client.auth.signup({ payload: signupPayload({ email, password: "a-long-enough-password" }) }))
    expect(signup.user.email).toBe(email)

    const login = await as(undefined, (client) => client.auth.login({ payload: loginPayload({ email, password: "a-long-enough-password" }) }))
    expect(login.user.id).toBe(signup.user.id)
    expect(login.token.length).toBeGreaterThan(20)

    const profile = await as(login.token, (client) => client.me.me())
    expect(profile.user).toMatchObject({ id: signup.user.id, email })
    expect(profile.credits.balance).toBe(1000)
    expect(profile.orgs).toEqual([])

    const wrong = await as(undefined, (client) => Effect.either(client.auth.login({ payload: loginPayload({ email, password: "not-the-password" }) })))
    expect(Either.isLeft(wrong) && wrong.left._tag).toBe("Unauthorized")
    const nobody = await as(undefined, (client) => Effect.either(client.me.me()))
    expect(Either.isLeft(nobody) && nobody.left._tag).toBe("Unauthorized")
  })

  it("creates an API key shown once, lists it, calls with it, and revokes it", async () => {
    const user = await newUser("keys")
    const created = await as(user.session, (client) => client.apiKeys.create({ payload: newKey({ name: "ci" }) }))
    expect(created).toMatchObject({ name: "ci", org_id: null, last_four: created.key.slice(-4) })
    expect(created.key.startsWith(created.prefix)).toBe(true)

    const listed = await as(user.session, (client) => client.apiKeys.list({ urlParams: firstPage }))
    expect(listed.data.map((key) => [key.id, key.name, key.prefix])).toEqual([[created.id, "ci", created.prefix]])
    // The secret itself is never listed.
    expect(JSON.stringify(listed)).not.toContain(created.key)

    expect((await as(created.key, (client) => client.me.me())).user.id).toBe(user.id)

    await as(user.session, (client) => client.apiKeys.revoke({ path: { id: created.id } }))
    expect((await as(user.session, (client) => client.apiKeys.list({ urlParams: firstPage }))).data).toEqual([])
    const revoked = await as(created.key, (client) => Effect.either(client.me.me()))
    expect(Either.isLeft(revoked) && revoked.left._tag).toBe("Unauthorized")
  })

  it("creates, reads, lists, updates and deletes a memory", async () => {
    const user = await newUser("memories")
    const memory = await as(user.session, (client) =>
      client.memories.create({ payload: newMemory({ content: "  Our staging cluster is kestrel.  ", scope: "personal" }) }))
    expect(memory).toMatchObject({ scope: "personal", content: "Our staging cluster is kestrel.", author_id: user.id, org_id: null })

    expect(await as(user.session, (client) => client.memories.get({ path: { id: memory.id } }))).toEqual(memory)
    const listed = await as(user.session, (client) => client.memories.list({ urlParams: { ...firstPage, scope: "personal" } }))
    expect(listed.data.map((item) => item.id)).toEqual([memory.id])

    const updated = await as(user.session, (client) =>
      client.memories.update({ path: { id: memory.id }, payload: { content: "Staging is kestrel; production is osprey." } }))
    expect(updated).toMatchObject({ id: memory.id, content: "Staging is kestrel; production is osprey." })

    await as(user.session, (client) => client.memories.delete({ path: { id: memory.id } }))
    const gone = await as(user.session, (client) => Effect.either(client.memories.get({ path: { id: memory.id } })))
    expect(Either.isLeft(gone) && gone.left._tag).toBe("NotFound")
    expect((await as(user.session, (client) => client.memories.list({ urlParams: firstPage }))).data).toEqual([])
  })

  it("creates an organization, invites a member who joins at sign-in, and lists the members", async () => {
    const admin = await newUser("admin")
    const org = await as(admin.session, (client) => client.orgs.create({ payload: { name: "Client Co" } }))
    expect(org.name).toBe("Client Co")
    const mine = await as(admin.session, (client) => client.orgs.list())
    expect(mine.data).toEqual([expect.objectContaining({ id: org.id, name: "Client Co", role: "admin" })])

    const invitee = await newUser("invitee")
    const invited = await as(admin.session, (client) =>
      client.orgAdmin.invite({ path: { orgId: org.id }, payload: invitation({ email: invitee.email }) }))
    expect(invited).toMatchObject({ email: invitee.email, role: "member", status: "pending", user_id: null })

    // An invitation is taken up at the invitee's next sign-in.
    await as(undefined, (client) => client.auth.login({ payload: loginPayload({ email: invitee.email, password: invitee.password }) }))
    const members = await as(admin.session, (client) => client.orgAdmin.members({ path: { orgId: org.id }, urlParams: firstPage }))
    expect(members.data.map((member) => [member.email, member.role, member.status])).toEqual(
      expect.arrayContaining([[admin.email, "admin", "active"], [invitee.email, "member", "active"]])
    )
    expect(members.data).toHaveLength(2)
    const theirs = await as(invitee.session, (client) => client.orgs.list())
    expect(theirs.data.map((membership) => [membership.id, membership.role])).toEqual([[org.id, "member"]])
  })

  it("connects a directory to the personal workspace and reports it indexed", async () => {
    const user = await newUser("workspace")
    const dir = mkdtempSync(join(root, "repo-"))
    mkdirSync(join(dir, "src"))
    writeFileSync(join(dir, "src/a.ts"), "export const a = 1\n")
    writeFileSync(join(dir, "README.md"), "# Sample\n")

    const workspaces = await as(user.session, (client) => client.workspaces.list({ urlParams: firstPage }))
    expect(workspaces.data).toEqual([expect.objectContaining({ personal: true, owner_id: user.id, repository: null })])
    const workspace = workspaces.data[0]!

    const connected = await as(user.session, (client) => client.workspaces.connect({ path: { id: workspace.id }, payload: { path: dir } }))
    expect(connected.workspace_id).toBe(workspace.id)

    const ready = await as(user.session, (client) =>
      client.workspaces.repository({ path: { id: workspace.id } }).pipe(
        Effect.delay("100 millis"),
        Effect.repeat({ until: (status) => status.status === "ready" || status.status === "failed" }),
        Effect.timeout("20 seconds")
      ))
    expect(ready).toMatchObject({ status: "ready", index_version: 1, files: { total: 2 } })
  })

  it("answers a huddle turn as JSON and charges what it says", async () => {
    const user = await newUser("huddle")
    const reply = await as(user.session, (client) => client.huddle.start({ payload: { input: "Which cluster is staging?" }, urlParams: { stream: false }, headers: {} }))
    expect(reply).toMatchObject({ status: "completed", mode: "single", offline: true, models: ["offline-standard"] })
    expect(reply.output).toMatch(/^\[offline\]/)
    expect(reply.credits_charged).toBeGreaterThan(0)
    expect((await as(user.session, (client) => client.me.me())).credits.balance).toBe(1000 - reply.credits_charged)

    const sessions = await as(user.session, (client) => client.huddle.sessions({ urlParams: firstPage }))
    expect(sessions.data.map((session) => session.id)).toEqual([reply.session_id])
  })

  it("lets the operator mint credits, which the user's balance and ledger show", async () => {
    const user = await newUser("minted")
    const grant = await as(server.operatorToken!, (client) =>
      client.operator.grant({ payload: { user_id: user.id, amount: 250, reason: "pilot" } }))
    expect(grant).toMatchObject({ account: { owner_type: "user", owner_id: user.id, pool: "personal" }, amount: 250, reason: "pilot", balance: 1250 })

    expect((await as(user.session, (client) => client.me.me())).credits.balance).toBe(1250)
    const ledger = await as(user.session, (client) => client.me.ledger({ urlParams: firstPage }))
    expect(ledger.balance).toBe(1250)
    expect(ledger.data[0]).toMatchObject({ delta: 250, reason: "pilot", balance_after: 1250 })

    // A user's own session is not the operator's credential.
    const refused = await as(user.session, (client) => Effect.either(client.operator.grant({ payload: { user_id: user.id, amount: 1, reason: "me" } })))
    expect(Either.isLeft(refused) && refused.left._tag).toBe("Unauthorized")
  })
})
