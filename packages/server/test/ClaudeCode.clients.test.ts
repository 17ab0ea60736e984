/**
 * Claude Code itself (`@anthropic-ai/claude-code`'s native binary, `-p` mode) against a fake
 * Anthropic API: what it sends (the request Huddle's Messages API must take, and pass on to an
 * Anthropic upstream unchanged), and an agent turn in which it runs a tool the fake asked for and
 * sends the result back. Network-free: Claude Code talks only to the loopback fake.
 */
import { FakeAnthropic } from "@huddle/testkit"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as ClaudeCode from "./claudeCode.js"

type Block = { readonly type: string; readonly [key: string]: unknown }
type Body = {
  readonly model: string
  readonly stream?: boolean
  readonly system: ReadonlyArray<Block>
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string | ReadonlyArray<Block> }>
  readonly tools: ReadonlyArray<{ readonly name: string }>
  readonly [key: string]: unknown
}

const suite = ClaudeCode.unavailable === undefined ? describe : describe.skip

suite(`Claude Code against a fake Anthropic API${ClaudeCode.unavailable === undefined ? "" : ` (skipped: ${ClaudeCode.unavailable})`}`, () => {
  let fake: FakeAnthropic.FakeAnthropic
  const token = "hk_claude_code_test_token"
  const bodyOf = (i: number) => fake.requests[i]!.body as Body

  beforeAll(async () => {
    fake = await FakeAnthropic.start()
  })
  afterAll(() => fake?.stop())
  beforeEach(() => fake.reset())

  it("sends a streamed Messages API request with its beta header, cached system blocks, tools and thinking; prints the answer", async () => {
    fake.enqueue({ answer: "Hello from the fake upstream to Claude Code.", usage: { input_tokens: 900, output_tokens: 12 } })
    const { result } = await ClaudeCode.run("Say hello", { baseUrl: fake.url, token, args: ["--model", "claude-sonnet-4-5"] })

    expect(result).toMatchObject({ type: "result", subtype: "success", is_error: false, num_turns: 1 })
    expect(result.result).toBe("Hello from the fake upstream to Claude Code.")
    expect(fake.requests).toHaveLength(1)
    const [request] = fake.requests
    expect(request!.method).toBe("POST")
    expect(request!.url).toBe("/v1/messages?beta=true")
    expect(request!.headers.authorization).toBe(`Bearer ${token}`)
    expect(request!.headers["x-api-key"]).toBeUndefined()
    expect(request!.headers["anthropic-version"]).toBe("2023-06-01")
    expect(String(request!.headers["anthropic-beta"]).split(",")).toContain("claude-code-20250219")
    const body = bodyOf(0)
    expect(body.model).toBe("claude-sonnet-4-5")
    expect(body.stream).toBe(true)
    expect(body.max_tokens).toEqual(expect.any(Number))
    expect(body.system.some((block) => block.cache_control !== undefined)).toBe(true)
    expect(body.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["Bash", "Read"]))
    expect(body).toHaveProperty("thinking")
    expect(body).toHaveProperty("metadata.user_id")
    expect(body.messages[0]).toMatchObject({ role: "user" })
    expect(JSON.stringify(body.messages)).toContain("Say hello")
  })

  it("runs the Bash tool the model asks for and sends its tool_result back, then prints the final answer", async () => {
    fake.enqueue(
      { toolUses: [{ id: "toolu_echo1", name: "Bash", input: { command: "echo hi-from-claude-code", description: "Print a greeting" } }] },
      { answer: "The command printed hi-from-claude-code." }
    )
    const { result } = await ClaudeCode.run("Run echo for me", { baseUrl: fake.url, token, args: ["--model", "claude-sonnet-4-5", "--allowedTools", "Bash"] })

    expect(result).toMatchObject({ subtype: "success", is_error: false, num_turns: 2, permission_denials: [] })
    expect(result.result).toBe("The command printed hi-from-claude-code.")
    expect(fake.requests).toHaveLength(2)
    const last = bodyOf(1).messages.at(-1)!
    expect(last.role).toBe("user")
    // The command's output (Claude Code may add a reminder after it), marked as a cache breakpoint.
    expect(last.content).toEqual([
      expect.objectContaining({
        type: "tool_result",
        tool_use_id: "toolu_echo1",
        content: expect.stringMatching(/^hi-from-claude-code\b/),
        is_error: false,
        cache_control: { type: "ephemeral" }
      })
    ])
    // The assistant turn it answers is sent back as the model gave it.
    expect(bodyOf(1).messages.at(-2)).toMatchObject({
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_echo1", name: "Bash", input: { command: "echo hi-from-claude-code" } }]
    })
  })
})
