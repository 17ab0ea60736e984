/**
 * Claude Code itself through Huddle to an Anthropic upstream (a fake that records what it
 * receives): an agent turn in which the model asks for the `Bash` tool, Claude Code runs it and
 * sends the `tool_result` back through Huddle. The upstream gets Claude Code's request as sent —
 * `anthropic-beta`, the `cache_control` marks, the tool result — and each call is charged once.
 */
import { Accounts, type FakeAnthropic, type TestServer } from "@huddle/testkit"
import { describe, expect, it } from "vitest"
import { anthropicSuite, claudeCharge } from "./anthropicSuite.js"
import * as ClaudeCode from "./claudeCode.js"
import * as Ledger from "./ledgerOf.js"

type Block = { readonly type: string; readonly [key: string]: unknown }
type Body = {
  readonly model: string
  readonly system: ReadonlyArray<Block>
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string | ReadonlyArray<Block> }>
  readonly tools: ReadonlyArray<{ readonly name: string }>
  readonly [key: string]: unknown
}

const suite = ClaudeCode.unavailable === undefined ? describe : describe.skip

suite(`Claude Code through Huddle to an Anthropic upstream${ClaudeCode.unavailable === undefined ? "" : ` (skipped: ${ClaudeCode.unavailable})`}`, () => {
  let anthropic: FakeAnthropic.FakeAnthropic
  let server: TestServer.TestServer
  anthropicSuite((started) => ({ anthropic, server } = started))

  it("runs the Bash tool the upstream asks for, sends its tool_result back through Huddle, each call charged once", async () => {
    const user = await Accounts.signupAndLogin(server)
    const { key } = await Accounts.createApiKey(server, user)
    const usages = [{ input_tokens: 700, output_tokens: 40 }, { input_tokens: 760, output_tokens: 12 }]
    anthropic.enqueue(
      { toolUses: [{ id: "toolu_echo2", name: "Bash", input: { command: "echo hi-through-huddle", description: "Print a greeting" } }], usage: usages[0]! },
      { answer: "The command printed hi-through-huddle.", usage: usages[1]! }
    )
    const before = await Ledger.of(server, user)

    const { result } = await ClaudeCode.run("Run echo for me", { baseUrl: server.url, token: key, args: ["--model", "claude-fake", "--allowedTools", "Bash"] })

    expect(result).toMatchObject({ subtype: "success", is_error: false, num_turns: 2, permission_denials: [] })
    expect(result.result).toBe("The command printed hi-through-huddle.")
    expect(anthropic.requests).toHaveLength(2)
    const [first, second] = anthropic.requests.map((request) => ({ headers: request.headers, body: request.body as Body }))
    for (const { body, headers } of [first!, second!]) {
      // Claude Code's headers and request as it sent them, with Huddle's key and the catalog's model.
      expect(headers["x-api-key"]).toBe("sk-ant-fake")
      expect(headers.authorization).toBeUndefined()
      expect(headers["anthropic-version"]).toBe("2023-06-01")
      expect(String(headers["anthropic-beta"]).split(",")).toEqual(expect.arrayContaining(["claude-code-20250219", "interleaved-thinking-2025-05-14"]))
      expect(body.model).toBe("claude-fake")
      expect(body.stream).toBe(true)
      expect(body.system.filter((block) => block.cache_control !== undefined).length).toBeGreaterThan(0)
      expect(body.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["Bash", "Read"]))
      expect(body).toHaveProperty("thinking")
      expect(body).toHaveProperty("metadata.user_id")
    }
    // The second call carries the model's tool_use and the command's output, cache mark and all.
    expect(second!.body.messages.at(-2)).toMatchObject({
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_echo2", name: "Bash", input: { command: "echo hi-through-huddle" } }]
    })
    expect(second!.body.messages.at(-1)).toEqual({
      role: "user",
      content: [expect.objectContaining({
        type: "tool_result",
        tool_use_id: "toolu_echo2",
        content: expect.stringMatching(/^hi-through-huddle\b/),
        is_error: false,
        cache_control: { type: "ephemeral" }
      })]
    })

    // Two calls, two settled reservations, each charged its usage exactly.
    const calls = Ledger.settledSince(before, await Ledger.of(server, user))
    expect(calls.map((call) => call.charged).sort((a, b) => a - b)).toEqual(usages.map(claudeCharge).sort((a, b) => a - b))
    expect(Ledger.total(before) - Ledger.total(await Ledger.of(server, user))).toBe(usages.map(claudeCharge).reduce((a, b) => a + b, 0))
  })
})
