/** Shortcuts for tests: make users, sessions and API keys through the public API. */
import { randomBytes } from "node:crypto"
import type { TestServer } from "./TestServer.js"

export interface TestUser {
  readonly id: string
  readonly email: string
  readonly password: string
  /** A web-session token. */
  readonly session: string
}

export const uniqueEmail = (label = "user") => `${label}-${randomBytes(5).toString("hex")}@example.com`

const expectStatus = (what: string, status: number, expected: number, text: string) => {
  if (status !== expected) throw new Error(`${what}: expected ${expected}, got ${status}: ${text}`)
}

export const signupAndLogin = async (server: TestServer, label = "user"): Promise<TestUser> => {
  const email = uniqueEmail(label)
  const password = `pw-${randomBytes(8).toString("hex")}`
  const signup = await server.request("POST", "/v1/auth/signup", { body: { email, password } })
  expectStatus("signup", signup.status, 201, signup.text)
  const login = await server.request("POST", "/v1/auth/login", { body: { email, password } })
  expectStatus("login", login.status, 200, login.text)
  return { id: signup.body.user.id, email, password, session: login.body.token }
}

export const createApiKey = async (
  server: TestServer,
  user: TestUser,
  input: { name?: string; org_id?: string } = {}
): Promise<{ id: string; key: string }> => {
  const res = await server.request("POST", "/v1/api-keys", { token: user.session, body: { name: "test", ...input } })
  expectStatus("create API key", res.status, 201, res.text)
  return { id: res.body.id, key: res.body.key }
}
