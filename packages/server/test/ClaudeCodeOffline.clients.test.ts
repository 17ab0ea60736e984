/**
 * Claude Code itself, unmodified (`-p` mode, `ANTHROPIC_BASE_URL` and `ANTHROPIC_AUTH_TOKEN`), on
 * a fresh Huddle with no provider: its Claude model name resolves through the default catalog's
 * aliases to an offline model, which answers; the org's memory reaches that model; and each call
 * Claude Code made is charged exactly once (the ledger's settled calls, and the balance).
 *
 * Claude Code's own system prompt is kept: the offline model restates its lines, up to its output
 * cap, so the answer is long and streams in one go (what once stalled the stream framer).
 */
import { Accounts, Orgs, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as ClaudeCode from "./claudeCode.js"
import * as Ledger from "./ledgerOf.js"

const suite = ClaudeCode.unavailable === undefined ? describe : describe.skip

suite(`Claude Code through a fresh Huddle, answered by the offline model${ClaudeCode.unavailable === undefined ? "" : ` (skipped: ${ClaudeCode.unavailable})`}`, () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  }, 60_000)
  afterAll(() => server?.stop())

  it("completes a prompt with the offline model's answer, the org's memory in it, charged once per call", async () => {
    const owner = await Accounts.signupAndLogin(server, "owner")
    const org = await Orgs.createOrg(server, owner, "Claude Coders")
    const memory = "Deploys go out on Thursdays after the standup."
    const remembered = await server.request("POST", "/v1/memories", { token: owner.session, body: { scope: "org", org_id: org.id, content: memory } })
    expect(remembered.status, remembered.text).toBe(201)
    const { key } = await Accounts.createApiKey(server, owner, { org_id: org.id })
    const before = await Ledger.of(server, owner, org)

    const { result } = await ClaudeCode.run("When do deploys go out?", { baseUrl: server.url, token: key, args: ["--model", "claude-sonnet-4-5"], timeoutMs: 30_000 })

    expect(result).toMatchObject({ type: "result", subtype: "success", is_error: false })
    // The offline model answered (it lists what its system messages hold, the memory among them).
    expect(result.result).toContain("[offline] This answer comes from the offline model (offline-standard)")
    expect(result.result).toContain(memory)
    const after = await Ledger.of(server, owner, org)
    const calls = Ledger.settledSince(before, after)
    // Each call Claude Code made (one per turn) settled once, and the balances fell by exactly that.
    expect(calls).toHaveLength(result.num_turns)
    expect(calls.every((call) => call.charged > 0)).toBe(true)
    expect(Ledger.total(before) - Ledger.total(after)).toBe(calls.reduce((sum, call) => sum + call.charged, 0))
  })
})
