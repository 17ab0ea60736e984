/**
 * The operator's command line (`packages/server/dist/bin/huddle.js`, `npm run huddle -- …`) as a
 * new process each time, over an embedded database of its own: it creates a user, mints credits
 * with a reason, shows the ledger, revokes keys, and refuses bad input with exit code 2 without
 * touching the database; it issues a one-time password reset that a server on the same database
 * redeems. `npm test` builds it first (`tsc -b`).
 */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { TestServer } from "@huddle/testkit"
import { afterAll, describe, expect, it } from "vitest"
import { killAll, mainJs, scratchDir } from "./serverProcesses.js"

afterAll(killAll)

const run = promisify(execFile)
const cli = join(mainJs, "..", "bin", "huddle.js")

describe("the operator command line", () => {
  const dataDir = join(scratchDir(), "data")
  const huddle = async (args: ReadonlyArray<string>, stdin?: string, env: Record<string, string> = {}) => {
    const child = run(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH ?? "", HUDDLE_DATA_DIR: dataDir, ...env }, timeout: 60_000 })
    if (stdin !== undefined) {
      child.child.stdin!.end(stdin)
    } else child.child.stdin!.end()
    return child.then(
      ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? "", stderr: error.stderr ?? "" })
    )
  }

  it("creates a user, mints with a reason, shows the ledger, revokes keys; refuses bad input with exit 2", async () => {
    const created = await huddle(["create-user", "--email", "Ops@Example.com", "--password-stdin"], "correct horse battery\n")
    expect(created.code, created.stderr).toBe(0)
    expect(JSON.parse(created.stdout)).toMatchObject({ email: "ops@example.com" })

    const granted = await huddle(["grant", "--user", "ops@example.com", "--amount", "500", "--reason", "invoice 42"])
    expect(granted.code, granted.stderr).toBe(0)
    expect(JSON.parse(granted.stdout)).toMatchObject({ amount: 500, reason: "invoice 42", account: { owner_type: "user", pool: "personal" } })

    const ledger = await huddle(["ledger", "--user", "ops@example.com"])
    expect(ledger.code, ledger.stderr).toBe(0)
    const entries = JSON.parse(ledger.stdout) as { balance: number; data: ReadonlyArray<{ kind: string; delta: number; reason: string; actor_id: string | null }> }
    expect(entries.data[0]).toMatchObject({ kind: "grant", delta: 500, reason: "invoice 42", actor_id: null })
    expect(entries.balance).toBe(entries.data.reduce((sum, row) => sum + row.delta, 0))

    expect(JSON.parse((await huddle(["revoke-keys", "--user", "ops@example.com"])).stdout)).toEqual({ revoked: 0 })

    for (const args of [
      ["grant", "--user", "ops@example.com", "--amount", "0", "--reason", "zero"],
      ["grant", "--user", "ops@example.com", "--amount", "5"],
      ["grant", "--org", "org_x", "--amount", "5", "--reason", "no balance"],
      ["frobnicate"]
    ]) {
      const refused = await huddle(args)
      expect(refused.code, args.join(" ")).toBe(2)
      expect(refused.stderr, args.join(" ")).toContain("usage: huddle")
    }
    const unknown = await huddle(["grant", "--user", "nobody@example.com", "--amount", "5", "--reason", "ghost"])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("User not found")

    // Nothing refused was minted.
    const after = JSON.parse((await huddle(["ledger", "--user", "ops@example.com"])).stdout) as { balance: number }
    expect(after.balance).toBe(entries.balance)
  }, 180_000)

  it("issues a one-time password reset that the user redeems over HTTP (decision 0040)", async () => {
    const created = await huddle(["create-user", "--email", "reset@example.com", "--password-stdin"], "forgotten password\n")
    expect(created.code, created.stderr).toBe(0)
    const issued = await huddle(["password-reset", "--user", "reset@example.com"])
    expect(issued.code, issued.stderr).toBe(0)
    const reset = JSON.parse(issued.stdout) as { user_id: string; token: string; expires_at: string }
    expect(reset).toEqual({ user_id: JSON.parse(created.stdout).id, token: expect.stringMatching(/^hr_/), expires_at: expect.any(String) })
    expect((await huddle(["password-reset"])).code).toBe(2)
    expect((await huddle(["password-reset", "--user", "nobody@example.com"])).code).toBe(1)

    // The CLI is done with the embedded database: a server may open it now.
    const server = await TestServer.start({ database: { engine: { _tag: "Pglite", dataDir }, drop: async () => {} } })
    try {
      const login = (password: string) => server.request("POST", "/v1/auth/login", { body: { email: "reset@example.com", password } })
      expect((await login("forgotten password")).status).toBe(200)
      const redeemed = await server.request("POST", "/v1/auth/password/reset", { body: { token: reset.token, new_password: "remembered at last" } })
      expect(redeemed.status, redeemed.text).toBe(204)
      expect((await login("forgotten password")).status).toBe(401)
      expect((await login("remembered at last")).status).toBe(200)
    } finally {
      await server.stop()
    }
  }, 180_000)

  it("names the option or the variable of every refusal", async () => {
    const created = await huddle(["create-user", "--email", "named@example.com", "--password-stdin"], "correct horse battery\n")
    expect(created.code, created.stderr).toBe(0)
    for (const [args, said] of [
      [["grant", "--user", "named@example.com", "--amount", "5"], "--reason: is missing"],
      [["grant", "--user", "named@example.com", "--amount", "many", "--reason", "r"], "--amount: Expected number, actual \"many\""],
      [["ledger", "--user", "named@example.com", "--limit", "0"], "--limit: Expected a number between 1 and 1000, actual 0"],
      [["create-user", "--email", "not-an-address", "--password-stdin"], "--email: "]
    ] as const) {
      const refused = await huddle(args, "correct horse battery\n")
      expect(refused.code, args.join(" ")).toBe(2)
      expect(refused.stderr.split("\n")[0], args.join(" ")).toContain(said)
    }
    for (const [env, said] of [
      [{ HUDDLE_INSTANCE_STALE_AFTER: "10 seconds" }, "HUDDLE_INSTANCE_STALE_AFTER: must be at least three times HUDDLE_HEARTBEAT_INTERVAL (10 seconds), not 10 seconds"],
      [{ HUDDLE_STARTER_CREDITS: "-5" }, "HUDDLE_STARTER_CREDITS: must be zero or more"]
    ] as const) {
      const refused = await huddle(["ledger", "--user", "named@example.com"], undefined, env)
      expect(refused.code, JSON.stringify(env)).toBe(1)
      expect(refused.stderr.trim(), JSON.stringify(env)).toBe(said)
    }
  }, 120_000)
})
