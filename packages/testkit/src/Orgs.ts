/** Shortcuts for tests: organizations with admins and members, made through the public API. */
import { type TestUser, signupAndLogin } from "./Accounts.js"
import type { TestServer } from "./TestServer.js"

export interface TestOrg {
  readonly id: string
  readonly slug: string
  readonly admin: TestUser
}

const expectStatus = (what: string, status: number, expected: number, text: string) => {
  if (status !== expected) throw new Error(`${what}: expected ${expected}, got ${status}: ${text}`)
}

export const createOrg = async (server: TestServer, admin?: TestUser, name = "Acme Research"): Promise<TestOrg> => {
  const owner = admin ?? await signupAndLogin(server, "admin")
  const res = await server.request("POST", "/v1/orgs", { token: owner.session, body: { name } })
  expectStatus("create org", res.status, 201, res.text)
  return { id: res.body.id, slug: res.body.slug, admin: owner }
}

/** Invites a new user as `role` and logs them in, which activates the membership. */
export const addMember = async (server: TestServer, org: TestOrg, role: "admin" | "member" = "member"): Promise<TestUser> => {
  const user = await signupAndLogin(server, role)
  const invite = await server.request("POST", `/v1/orgs/${org.id}/admin/members/invite`, {
    token: org.admin.session,
    body: { email: user.email, role }
  })
  expectStatus("invite", invite.status, 201, invite.text)
  const login = await server.request("POST", "/v1/auth/login", { body: { email: user.email, password: user.password } })
  expectStatus("login", login.status, 200, login.text)
  return { ...user, session: login.body.token }
}
