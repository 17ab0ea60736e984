#!/usr/bin/env node
/**
 * `node bench/revocation.mjs [--tries N]`: how long a revoked API key, or a removed member, is
 * still accepted by ANOTHER instance. Two server processes share one PostgreSQL (on loopback);
 * each try creates a key through instance A, revokes it through A, and the moment A has answered
 * sends B a read (`GET /v1/me`) and a charged request (`POST /v1/huddle`, offline model). A
 * charged request must never pass (the reservation re-reads the key); a read may, for as long as
 * B's cache has not heard of the revocation (decision 0013). The same for removing a member: a
 * huddle in the org, on B, right after A removed them. Prints the counts; exit 1 if anything
 * charged passed.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import * as Huddle from "./lib/huddle.mjs"
import * as Postgres from "./lib/postgres.mjs"
import * as Proc from "./lib/processes.mjs"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const { values: args } = parseArgs({ options: { tries: { type: "string", default: "10000" }, members: { type: "string", default: "500" } } })
const tries = Number(args.tries)
const memberTries = Number(args.members)

const call = async (url, method, path, { body, token } = {}) => {
  const headers = {}
  if (token) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) })
  const text = await res.text()
  return { status: res.status, body: text.length > 0 ? JSON.parse(text) : undefined }
}
const expectStatus = (what, res, status) => {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

const work = mkdtempSync(join(tmpdir(), "huddle-revocation-"))
const database = await Postgres.create()
const started = performance.now()
try {
  const servers = []
  for (const name of ["a", "b"]) {
    const port = await Proc.freePort()
    // The offline models: no upstream, every request charged.
    const { HUDDLE_CATALOG: _catalog, OPENAI_API_KEY: _key, OPENAI_BASE_URL: _base, ...env } = Huddle.serverEnv({
      port,
      databaseUrl: database.url,
      catalogPath: "",
      upstreamBaseUrl: "",
      upstreamKey: "",
      starterCredits: 1_000_000_000
    })
    const url = `http://127.0.0.1:${port}`
    await Proc.spawnServer(`huddle-${name}`, [join(root, "packages/server/dist/main.js")], env, join(work, `${name}.log`), `${url}/readyz`)
    servers.push(url)
  }
  const [a, b] = servers
  const email = `revocation-${process.pid}@bench.example.com`
  const password = "revocation-bench-password"
  expectStatus("signup", await call(a, "POST", "/v1/auth/signup", { body: { email, password } }), 201)
  const session = expectStatus("login", await call(a, "POST", "/v1/auth/login", { body: { email, password } }), 200).token

  let readsPassed = 0
  let chargedPassed = 0
  for (let i = 0; i < tries; i++) {
    const created = expectStatus("create key", await call(a, "POST", "/v1/api-keys", { token: session, body: { name: `try-${i}` } }), 201)
    expectStatus("revoke", await call(a, "DELETE", `/v1/api-keys/${created.id}`, { token: session }), 204)
    const [read, charged] = await Promise.all([
      call(b, "GET", "/v1/me", { token: created.key }),
      call(b, "POST", "/v1/huddle", { token: created.key, body: { input: "still me?" } })
    ])
    if (read.status === 200) readsPassed++
    else expectStatus("read after revocation", read, 401)
    if (charged.status === 200) chargedPassed++
    else expectStatus("charged request after revocation", charged, 401)
  }

  // A member removed through A, then a huddle in the org on B with their key.
  const org = expectStatus("org", await call(a, "POST", "/v1/orgs", { token: session, body: { name: "Revocation" } }), 201)
  let memberReadsPassed = 0
  let memberChargedPassed = 0
  for (let i = 0; i < memberTries; i++) {
    const memberEmail = `member-${process.pid}-${i}@bench.example.com`
    expectStatus("member signup", await call(a, "POST", "/v1/auth/signup", { body: { email: memberEmail, password } }), 201)
    expectStatus("invite", await call(a, "POST", `/v1/orgs/${org.id}/admin/members/invite`, { token: session, body: { email: memberEmail } }), 201)
    const login = expectStatus("member login", await call(a, "POST", "/v1/auth/login", { body: { email: memberEmail, password } }), 200)
    const key = expectStatus("member key", await call(a, "POST", "/v1/api-keys", { token: login.token, body: { name: "m" } }), 201).key
    expectStatus("remove", await call(a, "DELETE", `/v1/orgs/${org.id}/admin/members/${login.user.id}`, { token: session }), 204)
    const [read, charged] = await Promise.all([
      call(b, "GET", `/v1/orgs/${org.id}/credits`, { token: key }),
      call(b, "POST", "/v1/huddle", { token: key, body: { input: "still in?", org_id: org.id } })
    ])
    if (read.status === 200) memberReadsPassed++
    else expectStatus("member read after removal", read, 404)
    if (charged.status === 200) memberChargedPassed++
    else expectStatus("member huddle after removal", charged, 404)
  }

  const seconds = Math.round((performance.now() - started) / 1000)
  console.log(`revoked keys: ${tries} tries; reads accepted by the other instance: ${readsPassed}; charged requests accepted: ${chargedPassed}`)
  console.log(`removed members: ${memberTries} tries; reads accepted by the other instance: ${memberReadsPassed}; charged requests accepted: ${memberChargedPassed}`)
  console.log(`(${seconds} s)`)
  process.exitCode = chargedPassed + memberChargedPassed > 0 ? 1 : 0
} finally {
  await Proc.stopAll()
  await database.drop()
  rmSync(work, { recursive: true, force: true })
}
